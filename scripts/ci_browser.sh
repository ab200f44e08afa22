#!/usr/bin/env bash
# Debian's chromium and chromium-driver for the real-browser end-to-end test (tests/e2e/test_browser.py).
#
#   source scripts/ci_browser.sh       # in a script (.ci/run), before ./test.sh
#   scripts/ci_browser.sh              # or on its own
#
# Installs the packages when /usr/bin/chromium or /usr/bin/chromedriver is missing (needs root).
# The test drives the browser headless, with networking features off, against 127.0.0.1 only.

_browser_install() {
  if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "ci_browser: chromium is not installed (apt-get install chromium chromium-driver, as root)" >&2
    return 1
  fi
  echo "ci_browser: installing chromium and chromium-driver from the Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null
}

_browser_install
/usr/bin/chromium --version 2>/dev/null || true
