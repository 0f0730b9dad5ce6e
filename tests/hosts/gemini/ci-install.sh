#!/usr/bin/env bash
# The real Gemini CLI, pinned in package-lock.json (npm's own cache makes reruns fast).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
