"""`engramory verify`: check the paths, symbols, packages, commands and commits a memory note
names against the repository the store describes (anchors, repo, resolve, cache, mark, run,
doctor_check, notice)."""
