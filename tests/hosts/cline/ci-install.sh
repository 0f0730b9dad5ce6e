#!/usr/bin/env bash
# The real Cline CLI, pinned in package-lock.json, from the npm registry.
set -euo pipefail
cd "$(dirname "$0")"
# `npm ci` refuses a lock file without the other platforms' optional packages, and a registry
# that serves only this platform's (as here) cannot record them: then `npm install` installs
# exactly the versions the lock file pins for this platform.
npm ci --no-audit --no-fund --loglevel=error 2>/dev/null || npm install --no-audit --no-fund --loglevel=error
