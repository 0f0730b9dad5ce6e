"""Sharing a store through git: the index merge driver keyed by pointer target, `--resolve`
for an index that went through another merge, `sync init` and `sync`, the doctor's sync
checks, and undo of one index entry by key once the rest of the index has moved on."""
