"""Hermes Agent plugin: engramory's index guard on Hermes's pre_tool_call hook.

Thin on purpose: it finds the engramory package and hands Hermes its callbacks
(engramory.hosts.hermes.plugin). The package is looked for beside this file (where
`engramory install --host hermes` copies it) and then two folders up (this folder inside an
engramory checkout or bundle, as hermes/engramory/). If it is found nowhere, register()
raises: Hermes then lists the plugin with that error and every tool keeps working.
"""

import os
import sys

_HERE = os.path.dirname(os.path.realpath(__file__))


def _bundle_root():
    for root in (_HERE, os.path.dirname(os.path.dirname(_HERE))):
        if os.path.isfile(os.path.join(root, "engramory", "hosts", "hermes", "__init__.py")):
            return root
    return None


def register(ctx):
    root = _bundle_root()
    if root is None:
        raise ImportError(
            "engramory: no engramory package beside %s or two folders above it; "
            "run `engramory install --host hermes` again" % _HERE
        )
    if root not in sys.path:
        sys.path.insert(0, root)
    from engramory.hosts.hermes import plugin

    plugin.register(ctx)
