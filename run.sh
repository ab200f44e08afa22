#!/usr/bin/env bash
# Set everything up (venv, requirements, WordNet) and start the app on http://localhost:8501
set -euo pipefail
cd "$(dirname "$0")"
./scripts/setup.sh
exec .venv/bin/python -m studyapp serve "$@"
