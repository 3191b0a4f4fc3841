#!/usr/bin/env bash
# Two `rolo serve` processes on one PostgreSQL database behind nginx's round robin (issue
# 20): litmus basic, copymove, props and locks through the balancer, so consecutive
# requests (a LOCK and the PUT with its token, a PUT and its PROPFIND) land on different
# processes. Every suite must pass, as against one process. Then a web UI session signed
# in through one process must be valid on the other. Exits non-zero on any failure.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROLO="$ROOT/.build/debug/rolo"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
for tool in litmus "$NGINX" "$ROLO"; do
    if ! command -v "$tool" >/dev/null && [ ! -x "$tool" ]; then echo "missing $tool" >&2; exit 1; fi
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rolo-litmus2.XXXXXX")
PIDS=()
PG_DIR=""
cleanup() {
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
    [ -n "$PG_DIR" ] && bash "$ROOT/scripts/pg-cluster.sh" stop "$PG_DIR" >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT

cluster=$(bash "$ROOT/scripts/pg-cluster.sh" start --owner-pid $$) || { echo "PostgreSQL did not start" >&2; exit 1; }
PG_DIR=${cluster%% *}
DB=${cluster#* }
printf 'litmus-secret\n' | "$ROLO" user add litmus --password-stdin --database "$DB" >/dev/null || exit 2

PORTS=()
for n in 1 2; do
    "$ROLO" serve --port 0 --database "$DB" --database-pool-size 4 --log-level warning >"$WORK/serve$n.out" 2>"$WORK/serve$n.err" &
    PIDS+=($!)
    port=""
    for _ in $(seq 1 200); do
        port=$(sed -n '1s|.*"port":\([0-9]*\).*|\1|p' "$WORK/serve$n.out")
        [ -n "$port" ] && break
        sleep 0.05
    done
    [ -n "$port" ] || { echo "rolo serve $n did not start:" >&2; cat "$WORK/serve$n.err" >&2; exit 2; }
    PORTS+=("$port")
done

NGINX_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/nginx/temp"
sed "s|http://127\.0\.0\.1:8800|http://rolo_processes|" "$ROOT/deploy/rolo-locations.conf" >"$WORK/nginx/rolo-locations.conf"
cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 64; }
http {
    log_format upstream '\$upstream_addr';
    access_log $WORK/nginx/access.log upstream;
    client_body_temp_path $WORK/nginx/temp/body;
    proxy_temp_path $WORK/nginx/temp/proxy;
    fastcgi_temp_path $WORK/nginx/temp/fastcgi;
    uwsgi_temp_path $WORK/nginx/temp/uwsgi;
    scgi_temp_path $WORK/nginx/temp/scgi;
    upstream rolo_processes {
        server 127.0.0.1:${PORTS[0]};
        server 127.0.0.1:${PORTS[1]};
    }
    server {
        listen 127.0.0.1:$NGINX_PORT;
        include $WORK/nginx/rolo-locations.conf;
    }
}
CONF
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' 2>"$WORK/nginx/stderr" &
PIDS+=($!)
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/health" && break
    sleep 0.05
done

AREA="http://127.0.0.1:$NGINX_PORT/dav/addressbooks/litmus/litmus-area/"
status=$(curl -s -o /dev/null -w '%{http_code}' -u litmus:litmus-secret -X MKCOL "$AREA")
[ "$status" = 201 ] || { echo "MKCOL $AREA answered $status" >&2; exit 1; }

failed=0
for suite in basic copymove props locks; do
    echo "== litmus $suite (two processes)"
    (cd "$WORK" && TESTS="$suite" litmus "$AREA" litmus litmus-secret) >"$WORK/litmus-$suite.log" 2>&1
    code=$?
    grep -E '^<- summary|^-> running|FAIL|WARNING' "$WORK/litmus-$suite.log"
    if [ $code != 0 ] || grep -q 'FAIL' "$WORK/litmus-$suite.log"; then
        failed=1
        echo "litmus $suite FAILED; full log:"
        cat "$WORK/litmus-$suite.log"
    fi
done
# Both processes answered: the balancer really alternated.
for port in "${PORTS[@]}"; do
    served=$(grep -c "127.0.0.1:$port" "$WORK/nginx/access.log" 2>/dev/null || true)
    echo "process on port $port answered ${served:-0} requests"
    [ "${served:-0}" -gt 10 ] || failed=1
done

# The web UI: signed in through one process, the session cookie works on the other.
JAR="$WORK/cookies"
login_page=$(curl -s -c "$JAR" -b "$JAR" "http://127.0.0.1:${PORTS[0]}/web/login")
csrf=$(printf '%s' "$login_page" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -n 1)
signed_in=$(curl -s -o /dev/null -w '%{http_code}' -c "$JAR" -b "$JAR" -H "Origin: http://127.0.0.1:${PORTS[0]}" \
    --data-urlencode "csrf=$csrf" --data-urlencode "next=/web/" --data-urlencode "user=litmus" \
    --data-urlencode "password=litmus-secret" "http://127.0.0.1:${PORTS[0]}/web/login")
other=$(curl -s -o /dev/null -w "%{http_code}" -b "$JAR" "http://127.0.0.1:${PORTS[1]}/web/b/default/")
if [ "$signed_in" = 303 ] && [ "$other" = 200 ]; then
    echo "ok   web session signed in through one process is valid on the other"
else
    echo "FAIL web session across processes: sign-in $signed_in, other process $other"
    failed=1
fi

if [ $failed = 0 ]; then echo "litmus through two processes: all suites passed"; else echo "litmus through two processes: failures"; fi
exit $failed
