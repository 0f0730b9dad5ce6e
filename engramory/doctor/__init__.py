"""The doctor: a store read once, checks that are pure functions from it to findings (a
finding is data: code, severity, path, line, message), and their renderers.

codes (the one table of checks and what a finding is), index (the store as a whole, its index,
pointers and graph), notes (one note at a time), scan (secrets, injection, hidden characters),
run (every check over a store, the quick audit), check (one index against its host's window)."""
