#!/usr/bin/env bash
# Installs the Debian packages Rolo builds and tests with, when missing (needs root or sudo).
# Usage: scripts/install-deps.sh [--test | --bench]
#   --test adds litmus, nginx, curl, fail2ban, PostgreSQL, slapd, chromium and fonts;
#   --bench adds to those wrk (the benchmarks' GET phases) and valgrind (import-instructions,
#   routing-instructions --callgrind).
set -euo pipefail
packages=(libsqlite3-dev libxml2-dev libcurl4-openssl-dev libldap-dev libqrencode-dev)
# fail2ban: only for fail2ban-regex in Tests/interop/fail2ban.sh (it pulls in just python3). On a host
# running systemd the package also enables its own service, with Debian's default sshd jail.
# postgresql: the server the store tests start a throwaway cluster of (scripts/pg-cluster.sh);
# openssl: its self-signed certificate for the TLS test.
# slapd and ldap-utils: the throwaway OpenLDAP server the LDAP tests start (Tests/LDAPTestSupport);
# the preseed below keeps the package from configuring (and starting) a system slapd of its own.
# chromium and two fonts: the web UI's browser tests (Tests/interop/web.sh), driven by Playwright
# through executable_path; Playwright's own browser download is never used.
# zbar-tools: zbarimg, which reads the QR codes the server draws back in QRCodeTests.
case "${1:-}" in --test|--bench) packages+=(litmus nginx-light curl fail2ban postgresql openssl slapd ldap-utils chromium fonts-dejavu-core fonts-liberation zbar-tools) ;; esac
[ "${1:-}" = "--bench" ] && packages+=(wrk valgrind)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "== installing Debian packages: ${missing[*]}"
run() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
run apt-get update -qq
# No database and no running system slapd: the tests start their own.
if [[ " ${missing[*]} " == *" slapd "* ]]; then
    echo "slapd slapd/no_configuration boolean true" | run debconf-set-selections
fi
run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
