"""Compaction: a deterministic, previewable plan that brings an index back inside its caps
without losing a fact. work (the plan's working state: the index as lines, the notes as they
would be), plan (the ordered, typed operations and the invariants checked on their result),
apply (the plan for a store, its text and JSON, and applying a saved plan as one journal
entry that undoes byte for byte)."""
