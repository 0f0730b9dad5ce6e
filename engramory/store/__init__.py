"""A memory store: reading it once (reader, frontmatter, pointers), writing it through one
lock and one journal (journal, journalfile, blobstore, retention, lock, metadir), what others
changed (review, manifest), the secret patterns and the one masker every echo goes through
(secrets), and every store Claude Code knows on this machine (discovery)."""
