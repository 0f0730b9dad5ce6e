"""One module per host dialect: translate the host's payload into an `edits.Request`, and
the core's `guard.Decision` into the host's reply. No decisions are made here."""
