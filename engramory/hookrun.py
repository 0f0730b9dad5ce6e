"""The one hook runtime under every entry script: read the payload, call the host's answer,
write it back, and fail open.

An entry script (hooks/engramory_<host>_*.py) puts the bundle root on sys.path and calls

    from engramory.hookrun import finish, run
    finish(run("claude"))            # the host module's respond(raw, env)
    finish(run("claude", "post"))    # or another of its entry points

`finish(code)` flushes stdout and stderr and ends the process at once, without the
interpreter's teardown (which costs a hook more than its own work); in process (tests) call
`run` alone and use the code it returns.

`run_respond(respond, tag, limit, fail_open)` is the same process around any callable (the
backstop hooks use it). `run(host, entry="respond")` imports `engramory.hosts.<host>` (or, for a dotted name, that
module), reads stdin up to the module's STDIN_LIMIT (default 256 MiB; one byte more means
"not a payload we can judge": the fail-open answer, with one line on stderr), calls
`<entry>(raw, env)` -> (stdout, stderr, exit code), and writes them: stdout with a trailing
newline when not empty, stderr as given.

Fail-open policy, the same for every host: any exception of ours (import, parse, decide,
write) prints the module's FAIL_OPEN stdout ("" unless the host needs an answer, e.g. "{}"
for Cursor), one line on stderr naming the hook, and exits FAIL_OPEN_EXIT (0). Never an exit
the host reads as "block everything". A closed stdout pipe is ignored (the exit code still
carries the answer). KeyboardInterrupt also fails open.

The code lives in engramory/hosts/__init__.py (every hook imports that package anyway, and
a module import costs a hook about 0.15 ms): `from engramory.hosts import run` is the same
function without this module's import; the bundled entry scripts use that form.
"""

from engramory.hosts import HOSTS_PACKAGE, STDIN_LIMIT, answer, finish, run, run_respond

__all__ = ["HOSTS_PACKAGE", "STDIN_LIMIT", "answer", "finish", "run", "run_respond"]
