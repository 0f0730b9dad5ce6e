#!/usr/bin/env bash
# The real GitHub Copilot CLI, pinned in package-lock.json, from the npm registry. It runs
# offline with no GitHub sign-in (COPILOT_OFFLINE and a BYOK provider on loopback).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
