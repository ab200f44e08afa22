#!/usr/bin/env bash
# N app instances on loopback ports behind HAProxy (deploy/haproxy.cfg), in the foreground;
# Ctrl-C stops them all. Options: see `deploy/run_cluster.sh --help` (deploy/cluster.py).
#
#   deploy/run_cluster.sh --instances 2 --db postgresql+psycopg://studyapp:...@db-host/studyapp
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m deploy.cluster "$@"
