"""engramory: curated, file-based long-term memory for AI coding agents.

The package is the one core every entry point calls: the PreToolUse hook, `check`,
`doctor`, the installer and the host shims all count and decide through it.
Standard library only, Python >= 3.9.
"""

__version__ = "0.1.0"
