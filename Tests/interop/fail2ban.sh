#!/usr/bin/env bash
# deploy/fail2ban/filter.d/rolo.conf against what a real `rolo serve` logs: failed logins
# (wrong password, unknown user, throttled with 429) in text and JSON log formats, and as a
# syslog file shows them, must give exactly the clients' addresses; requests without
# credentials, successes, access-log lines and a user name that tries to forge an ip= field
# must give none. Uses fail2ban-regex when installed (scripts/install-deps.sh --test), and
# always also Python's re with <ADDR>/<HOST> turned into a named group.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"

FILTER="$ROOT/deploy/fail2ban/filter.d/rolo.conf"
failures=0
check() { # check NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected $2, got $3"; failures=$((failures + 1)); fi
}
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }

# Small thresholds: free 1, then 1 ms, 2 ms, 4 ms (the cap), one more at the cap, then 429.
THROTTLE=(--trusted-proxy 127.0.0.1 --login-free-failures 1 --login-delay-ms 1 --login-max-delay-ms 4
          --login-capped-failures 1 --login-window-seconds 600)

# Requests of one run as USER (password SECRET); the failing ones are logged.
exercise() { # exercise USER SECRET
    local user=$1 secret=$2 url="$ROLO_URL/dav/"
    for _ in 1 2 3; do status "$url" >/dev/null; done                               # no credentials
    status -H 'Authorization: Basic !!!' "$url" >/dev/null                           # unreadable credentials
    status -u "$user:$secret" -H 'X-Forwarded-For: 192.0.2.50' "$url" >/dev/null     # success
    status "$ROLO_URL/auth_failed%20user=x%20ip=192.0.2.99%20reason=bad_password" >/dev/null
    codes=""
    for _ in 1 2 3 4 5 6; do
        codes+="$(status -u "$user:guess-pw" -H 'X-Forwarded-For: 203.0.113.7' "$url") "
    done
    check "$LABEL: wrong passwords, then 429" "401 401 401 401 429 429 " "$codes"
    check "$LABEL: unknown user" 401 "$(status -u 'nobody:guess-pw' -H 'X-Forwarded-For: 2001:DB8:0::7' "$url")"
    check "$LABEL: forged ip= in the user name" 401 \
        "$(status -u "evil ip=192.0.2.1 reason=bad_password:guess-pw" -H 'X-Forwarded-For: ::ffff:198.51.100.2' "$url")"
}

# The addresses fail2ban would ban for, one per matched line, sorted.
EXPECTED=$(printf '%s\n' 198.51.100.2 2001:db8::7 203.0.113.7 203.0.113.7 203.0.113.7 203.0.113.7 203.0.113.7 203.0.113.7 | sort)

python_matches() { # python_matches LOGFILE: the <ADDR> of each matching line, per the filter's failregex
    python3 - "$FILTER" "$1" <<'PY'
import configparser, re, sys
config = configparser.RawConfigParser()
config.read(sys.argv[1])
regexes = [line.strip() for line in config.get("Definition", "failregex").splitlines() if line.strip()]
address = r"(?P<host>[0-9A-Fa-f:.]+)"
compiled = [re.compile(r.replace("<ADDR>", address).replace("<HOST>", address)) for r in regexes]
for line in open(sys.argv[2], encoding="utf-8"):
    line = line.rstrip("\n")
    for regex in compiled:
        match = regex.search(line)
        if match:
            print(match.group("host"))
            break
PY
}

verify() { # verify LOGFILE
    local log=$1
    check "$LABEL: auth_failed lines" 8 "$(grep -c 'auth_failed user=' "$log")"
    check "$LABEL: no password in the log" 0 "$(grep -c 'guess-pw\|-secret' "$log")"
    check "$LABEL: Python re finds exactly the clients" "$EXPECTED" "$(python_matches "$log" | sort)"
    if command -v fail2ban-regex >/dev/null; then
        check "$LABEL: fail2ban-regex finds exactly the clients" "$EXPECTED" \
            "$(fail2ban-regex -o ip "$log" "$FILTER" 2>&1 | sort)"
    else
        echo "skip $LABEL: fail2ban-regex not installed"
    fi
}

stop_rolo() {
    kill -TERM "$ROLO_PID" 2>/dev/null
    wait "$ROLO_PID" 2>/dev/null
}

LABEL=text
ROLO_LOG_LEVEL=info rolo_start alice alice-secret "${THROTTLE[@]}"
exercise alice alice-secret
stop_rolo
cp "$WORK/serve.err" "$WORK/text.log"
verify "$WORK/text.log"

# The same lines as rsyslog writes the journal to /var/log/syslog.
LABEL=syslog
sed 's/^/Nov 24 20:45:43 carddav rolo[4242]: /' "$WORK/text.log" >"$WORK/syslog.log"
verify "$WORK/syslog.log"

LABEL=json
# A database of its own: failed-login counts are kept in the database (shared by every
# process, kept over a restart), and the text phase left 127.0.0.1 blocked in the first.
ROLO_DATABASE="$WORK/json.sqlite"
ROLO_LOG_LEVEL=info rolo_start bob bob-secret --log-format json "${THROTTLE[@]}"
exercise bob bob-secret
stop_rolo
cp "$WORK/serve.err" "$WORK/json.log"
verify "$WORK/json.log"

[ -n "${KEEP_LOGS:-}" ] && cp "$WORK"/*.log "$KEEP_LOGS"/
if [ $failures = 0 ]; then echo "fail2ban interop: all checks passed"; else
    echo "fail2ban interop: $failures failed"; grep auth_failed "$WORK"/*.log; fi
[ $failures = 0 ]
