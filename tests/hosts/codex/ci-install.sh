#!/usr/bin/env bash
# The real OpenAI Codex CLI, pinned in package-lock.json (npm's own cache makes reruns fast).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
