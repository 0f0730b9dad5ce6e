#!/usr/bin/env bash
# The real OpenClaw CLI and the Node 24 it needs, both pinned in package-lock.json, from the npm
# registry. Install scripts are skipped: OpenClaw's preinstall only checks the Node that runs
# npm (the image's Node 20), and the tests run OpenClaw on the pinned Node 24.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error --ignore-scripts
