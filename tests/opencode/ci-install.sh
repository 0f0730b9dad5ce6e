#!/usr/bin/env bash
# The real opencode CLI, pinned in package-lock.json, from the npm registry; and, in seed/, the
# @opencode-ai/plugin package opencode installs into every config folder it loads plugins from
# (the tests copy it in, so a run never waits on that background install).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
(cd seed && npm ci --no-audit --no-fund --loglevel=error)
