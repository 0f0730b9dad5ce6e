#!/usr/bin/env bash
# hermes-agent from PyPI, pinned in requirements.txt, in a venv of its own at the repo root.
set -euo pipefail
cd "$(dirname "$0")/../../.."
python3 -m venv .venv-hermes
.venv-hermes/bin/python -m pip install --quiet -r tests/hosts/hermes/requirements.txt
