#!/usr/bin/env bash
# A throw-away PostgreSQL server on 127.0.0.1 for the storage tests and the load benchmark.
#
#   source scripts/ci_postgres.sh      # in a script (.ci/run): exports STUDYAPP_TEST_POSTGRES_URL,
#                                      # stops the server and removes its data at exit
#   scripts/ci_postgres.sh ./test.sh   # or run one command with the server up, e.g.
#   scripts/ci_postgres.sh ./test.sh tests/studyapp/test_store.py
#
# Installs Debian's `postgresql` package when its binaries are missing (needs root), runs
# initdb as the `postgres` user (when root) into a temporary directory, starts the server on
# a free port, listening on 127.0.0.1 only, and creates the database `studyapp_test` owned by
# the user `studyapp` (password auth over TCP). Nothing outside the temporary directory changes.

source "$(dirname "${BASH_SOURCE[0]}")/ci_apt.sh"

_pg_find_bin() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$dir/pg_ctl" ] && { echo "$dir"; return 0; }
  done
  command -v pg_ctl >/dev/null 2>&1 && { dirname "$(command -v pg_ctl)"; return 0; }
  return 1
}

_pg_start() {
  local bin
  if ! bin=$(_pg_find_bin); then
    if [ "$(id -u)" != 0 ]; then
      echo "ci_postgres: PostgreSQL is not installed (apt-get install postgresql, as root)" >&2
      return 1
    fi
    echo "ci_postgres: installing PostgreSQL from the Debian packages"
    # the package's own cluster is not needed: only the binaries are used
    mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.d/no-main.conf
    ci_apt_install postgresql || return 1
    bin=$(_pg_find_bin) || { echo "ci_postgres: pg_ctl not found after install" >&2; return 1; }
  fi

  PG_TMP=$(mktemp -d /tmp/studyapp-pg.XXXXXX)
  local data="$PG_TMP/data" log="$PG_TMP/server.log"
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local password
  password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  local as=()
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$PG_TMP"
    chmod 700 "$PG_TMP"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$bin/initdb" -D "$data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >"$PG_TMP/initdb.log" 2>&1 \
    || { cat "$PG_TMP/initdb.log" >&2; return 1; }
  "${as[@]}" "$bin/pg_ctl" -D "$data" -l "$log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $PG_TMP -c max_connections=300 -c fsync=on" \
    >/dev/null || { cat "$log" >&2; return 1; }
  PG_CTL_STOP=("${as[@]}" "$bin/pg_ctl" -D "$data" -m fast -w stop)
  "${as[@]}" "$bin/psql" -q -v ON_ERROR_STOP=1 -h "$PG_TMP" -p "$port" -U postgres -d postgres \
    -c "CREATE ROLE studyapp LOGIN PASSWORD '$password'" \
    -c "CREATE DATABASE studyapp_test OWNER studyapp" >/dev/null
  export STUDYAPP_TEST_POSTGRES_URL="postgresql+psycopg://studyapp:$password@127.0.0.1:$port/studyapp_test"
  echo "ci_postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" \
       "(data $data; STUDYAPP_TEST_POSTGRES_URL exported)"
}

_pg_stop() {
  if [ -n "${PG_CTL_STOP+x}" ]; then
    "${PG_CTL_STOP[@]}" >/dev/null 2>&1 || true
    unset PG_CTL_STOP
  fi
  [ -n "${PG_TMP:-}" ] && rm -rf "$PG_TMP"
  unset PG_TMP
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then  # executed: start, run the command, stop
  set -euo pipefail
  trap _pg_stop EXIT
  _pg_start
  if [ $# -gt 0 ]; then
    "$@"
  else
    echo "ci_postgres: no command given; stopping the server" >&2
  fi
else  # sourced: start and stop at the caller's exit (chained with any EXIT trap already set)
  _pg_prev_trap=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
  trap "_pg_stop; ${_pg_prev_trap:-:}" EXIT
  _pg_start
fi
