#!/usr/bin/env bash
# Debian's haproxy for the load-balancer deployment test (tests/e2e/test_balancer.py) and
# deploy/run_cluster.sh.
#
#   source scripts/ci_balancer.sh      # in a script (.ci/run), before ./test.sh
#   scripts/ci_balancer.sh             # or on its own
#
# Installs the package when haproxy is missing (needs root). The test runs it on 127.0.0.1 only.

source "$(dirname "${BASH_SOURCE[0]}")/ci_apt.sh"

_balancer_install() {
  if command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; then
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "ci_balancer: haproxy is not installed (apt-get install haproxy, as root)" >&2
    return 1
  fi
  echo "ci_balancer: installing haproxy from the Debian packages"
  ci_apt_install haproxy
}

_balancer_install
(/usr/sbin/haproxy -v 2>/dev/null || haproxy -v 2>/dev/null) | head -1 || true
