"""Every exit status an engramory command returns, in one table.

A command's answer is 0, 1, 2 or 3; the errors that are not an answer take sysexits.h's
numbers, so a script never reads "could not check" as "fine". Each command's --help epilog says
which of these it uses and what each means for it (the documents are held to them by
tests/test_docs.py). The hooks never exit with any of these on their own account: a hook fails
open (engramory.hosts.run).

A leaf module: it imports nothing, so the library (a Refusal carries its code) and the cheap
paths (merge-index as git runs it) can take the numbers without loading a command's parser.
"""

EX_OK = 0  # done, or all well: an index inside its caps, no errors, a match, a clean merge
EX_REFUSED = 1  # refused with nothing changed, or the answer is no (the message says why and what to do)
EX_WARN = 1  # check: an index is past its warn cap
EX_NO_MATCH = 1  # search: nothing matched
EX_CONFLICT = 1  # merge-index: conflicts, or the merged index is over its cap (every line kept)
EX_OVER = 2  # check: an index is over its hard cap
EX_DOCTOR_FAILED = 2  # doctor: a usage error, or a root it cannot read (its codes predate this table)
EX_BUSY = 3  # another writer held the store, or the remote moved on while syncing: run it again
EX_USAGE = 64  # the command line is wrong (argparse's own 2 is check's OVER)
EX_DATAERR = 65  # compact --apply: not a plan compact wrote, or the store changed since it was made
EX_NOINPUT = 66  # a file or store folder cannot be read
