#!/usr/bin/env bash
# Debian's chromium-headless-shell and chromium-driver for the real-browser end-to-end tests
# (tests/e2e/test_browser*.py; tests/browserhelpers.py starts it).
#
#   source scripts/ci_browser.sh       # in a script (.ci/run), before ./test.sh
#   scripts/ci_browser.sh              # or on its own
#
# Installs the packages when the headless shell or /usr/bin/chromedriver is missing (needs root).
# The test drives the browser headless, with networking features off, against 127.0.0.1 only.
# Installs axe-core (the accessibility checker tests/e2e/test_browser_a11y.py injects) from the
# npm registry into .data/npm once, when npm exists; the tests download nothing.

source "$(dirname "${BASH_SOURCE[0]}")/ci_apt.sh"

_browser_install() {
  if [ -x /usr/lib/chromium/chromium-headless-shell ] && [ -x /usr/bin/chromedriver ]; then
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "ci_browser: chromium is not installed (apt-get install chromium-headless-shell chromium-driver, as root)" >&2
    return 1
  fi
  echo "ci_browser: installing chromium-headless-shell and chromium-driver from the Debian packages"
  ci_apt_install chromium-headless-shell chromium-driver
}

AXE_CORE_VERSION=4.14.1
_axe_install() {
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  [ -f "$here/.data/npm/node_modules/axe-core/axe.min.js" ] && return 0
  if ! command -v npm >/dev/null 2>&1; then
    echo "ci_browser: npm is missing, so axe-core is not installed and the accessibility test fails under CI=true (apt-get install npm)" >&2
    return 0
  fi
  mkdir -p "$here/.data/npm"
  npm install --prefix "$here/.data/npm" --no-audit --no-fund --silent "axe-core@$AXE_CORE_VERSION"
}

_browser_install
_axe_install
/usr/lib/chromium/chromium-headless-shell --version 2>/dev/null || true
