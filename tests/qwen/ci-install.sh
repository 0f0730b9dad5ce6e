#!/usr/bin/env bash
# The real Qwen Code CLI and the Node 24 it needs (Qwen Code wants Node >= 22), both pinned in
# package-lock.json and installed from the npm registry (npm's own cache makes reruns fast).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
