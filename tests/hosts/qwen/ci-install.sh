#!/usr/bin/env bash
# The real Qwen Code CLI and the Node 24 it needs (Qwen Code wants Node >= 22), both pinned in
# package-lock.json and installed from the npm registry (npm's own cache makes reruns fast).
set -euo pipefail
cd "$(dirname "$0")"
# `npm ci` refuses a lock file without the other platforms' optional packages, and a registry
# that serves only this platform's (as here) cannot record them: then `npm install` installs
# exactly the versions the lock file pins for this platform.
npm ci --no-audit --no-fund --loglevel=error 2>/dev/null || npm install --no-audit --no-fund --loglevel=error
