"""Curation: the mechanical part of keeping a store, done exactly. notes (slugs, frontmatter,
an index's pointer lines), indexline (what engramory's own commands put on an index line),
operations (new, archive, restore), update, index (the store's index and its judgement),
common (what they share), search (ranked lexical search) and history (log and undo). Every
write is one locked, atomic, journaled step (engramory.store.journal)."""
