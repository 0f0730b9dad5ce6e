#!/usr/bin/env bash
# The real Cline CLI, pinned in package-lock.json, from the npm registry.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
