#!/usr/bin/env bash
# The real Kilo Code CLI, pinned in package-lock.json, from the npm registry. The platform
# package, not @kilocode/cli: that wrapper's own pin (7.8.1) names a platform package that was
# never published, and npm then installs a wrapper with no binary without a word. Nothing to
# seed: the driver makes Kilo's start-up install of @kilocode/plugin fail at once instead.
set -euo pipefail
cd "$(dirname "$0")"
# `npm ci` refuses a lock file without the other platforms' optional packages; `npm install`
# then installs exactly what the lock file pins (from npm's cache when it is there).
npm ci --no-audit --no-fund --loglevel=error --prefer-offline 2>/dev/null \
  || npm install --no-audit --no-fund --loglevel=error --prefer-offline
