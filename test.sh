#!/usr/bin/env bash
# Set everything up (venv, requirements, WordNet) and run the test suite, one test file per
# worker process on three workers, the files marked slow first (tests/conftest.py; TEST_WORKERS=0
# runs everything in this process).
set -euo pipefail
cd "$(dirname "$0")"
./scripts/setup.sh --dev
exec .venv/bin/python -m pytest -n "${TEST_WORKERS:-3}" --dist loadfile --no-loadscope-reorder "$@"
