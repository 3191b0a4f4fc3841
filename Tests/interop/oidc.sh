#!/usr/bin/env bash
# OIDC sign-in to the web UI and Nextcloud Login Flow v2 (issue 30), against a real OpenID
# provider run here on loopback (oidc_provider.py: joserfc and authlib from PyPI), driven in
# Debian's chromium by Playwright (oidc_browser.py; never `playwright install`). First the
# start-up refusals: an unreadable client-secret file, a provider whose discovery fails and a
# plain-http issuer off loopback each stop `rolo serve` naming the setting.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
    echo "missing $CHROMIUM: run scripts/install-deps.sh --test" >&2
    exit 2
fi
VENV="$ROOT/.build-venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" || exit 2
if ! "$VENV/bin/python" -c 'import playwright, authlib, joserfc' 2>/dev/null; then
    echo "== installing playwright, authlib into $VENV"
    "$VENV/bin/pip" install -q playwright==1.65.2 authlib || exit 2
fi

"$VENV/bin/python" "$ROOT/Tests/interop/oidc_provider.py" "$WORK/provider-port" 2>"$WORK/provider.err" &
PROVIDER_PID=$!
trap 'kill -TERM $PROVIDER_PID 2>/dev/null; wait $PROVIDER_PID 2>/dev/null; rolo_cleanup' EXIT
for _ in $(seq 1 200); do [ -s "$WORK/provider-port" ] && break; sleep 0.05; done
[ -s "$WORK/provider-port" ] || { echo "the test provider did not start:" >&2; cat "$WORK/provider.err" >&2; exit 2; }
PROVIDER="http://127.0.0.1:$(cat "$WORK/provider-port")"
printf 'rolo-client-secret\n' >"$WORK/client-secret"

failures=0
check() { # check NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected $2, got $3"; failures=$((failures + 1)); fi
}
# refused NAME SETTING SERVE-FLAGS...: serve stops at start, its message naming SETTING.
refused() {
    local name=$1 setting=$2
    shift 2
    timeout 60 "$ROLO" serve --port 0 --database "$WORK/refused.sqlite" --auth-source oidc --oidc-client-id rolo "$@" \
        >"$WORK/refused.out" 2>"$WORK/refused.err"
    local status=$?
    if [ "$status" != 0 ] && [ "$status" != 124 ] && grep -q "$setting" "$WORK/refused.err"; then
        echo "ok   $name"
    else
        echo "FAIL $name: exit $status, $(head -c 300 "$WORK/refused.err")"
        failures=$((failures + 1))
    fi
}
refused "unreadable secret file stops serve" oidc_client_secret_file \
    --oidc-issuer "$PROVIDER" --oidc-client-secret-file "$WORK/no-such-secret"
refused "discovery failure stops serve" oidc_issuer --oidc-issuer "http://127.0.0.1:1/realms/none"
refused "plain http off loopback stops serve" oidc_issuer --oidc-issuer "http://id.example.org"
refused "oidc without an issuer stops serve" oidc_issuer

# At notice, for the auth_failed lines and the outage's lines checked below.
ROLO_LOG_LEVEL=notice rolo_start local-admin local-admin-pw --auth-source local --auth-source oidc \
    --oidc-issuer "$PROVIDER" --oidc-client-id rolo --oidc-client-secret-file "$WORK/client-secret" \
    --oidc-display-name "Test SSO" --oidc-required-group rolo-users --oidc-admin-group rolo-admins

ROLO_URL="$ROLO_URL" PROVIDER_URL="$PROVIDER" CHROMIUM="$CHROMIUM" ROLO_BIN="$ROLO" ROLO_DATABASE="$ROLO_DATABASE" \
    "$VENV/bin/python" "$ROOT/Tests/interop/oidc_browser.py"
status=$?
if [ "$status" != 0 ]; then
    failures=$((failures + 1))
    echo "-- rolo serve stderr (last 30 lines):"
    tail -n 30 "$WORK/serve.err"
fi
# Refused sign-ins are failed logins like a wrong password (the throttle, fail2ban's line):
# eve is outside the required group; the tampered, wrong-state and expired ones name nobody.
log_count() { grep -cF -- "$1" "$WORK/serve.err" || true; }
check "eve's refusal is logged for fail2ban" 1 "$(log_count 'auth_failed user=eve ip=127.0.0.1 reason=sso_refused')"
check "the three refusals of no verified user are logged" 3 "$(log_count 'auth_failed user=- ip=127.0.0.1 reason=sso_refused')"
check "each refusal's reason is logged for the admin" 4 "$(log_count 'OpenID sign-in refused')"
check "... eve's naming her" 1 "$(grep -F 'OpenID sign-in refused' "$WORK/serve.err" | grep -c 'eve' || true)"
check "the provider's outage is logged once, over two sign-ins" 1 "$(log_count 'OpenID provider Test SSO unavailable')"
check "... and its end once" 1 "$(log_count 'OpenID provider Test SSO reachable again')"
if [ $failures = 0 ]; then echo "oidc interop: all checks passed"; else echo "oidc interop: $failures failed"; fi
[ $failures = 0 ]
