"""Quote text taken from a memory file before it goes into a message or report.

A note is untrusted text: echoing it whole would let a hostile note flood a report or
steer the agent that reads the hook's message. So every echo is cut short, stripped of
control, invisible and bidirectional characters, and put in quotes.
"""

from engramory.layout import HIDDEN, clean, quote

__all__ = ["HIDDEN", "clean", "quote"]
