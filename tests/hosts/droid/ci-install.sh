#!/usr/bin/env bash
# The real Factory droid binary, pinned in package-lock.json, from the npm registry. The
# wrapper @factory/cli@0.225.1 pins a platform package that is not on the registry (npm then
# silently installs no binary), so the platform package itself is pinned.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
