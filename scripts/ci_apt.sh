#!/usr/bin/env bash
# Debian packages for the ci_*.sh scripts (sourced by them): `ci_apt_install PACKAGE...`
# installs quietly and non-interactively, refreshing the package lists once per shell however
# many of the scripts install something.

ci_apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "${CI_APT_UPDATED:-}" ]; then
    apt-get update -qq || return 1
    CI_APT_UPDATED=1
  fi
  apt-get install -y -qq "$@" >/dev/null
}
