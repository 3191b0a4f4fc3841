# Shared by the interop scripts (sourced, not run; not *.sh so scripts/test.sh skips it): starts `rolo serve` from
# .build/debug/rolo on a free 127.0.0.1 port with a temporary database, and cleans up.
# After `rolo_start USER PASSWORD [SERVE FLAGS...]`: $ROLO_PORT, $ROLO_URL (http://127.0.0.1:PORT), $WORK,
# $ROLO_DATABASE (what `rolo ... --database` takes), and with `--test-api` $ROLO_TEST_TOKEN plus
# `rolo_control METHOD ENDPOINT [JSON]` for /_rolo/.
#
# With ROLO_INTEROP_BACKEND=postgres-pair (Tests/interop/scale-out.sh) the same scripts run against
# the scale-out set-up instead: a throwaway PostgreSQL cluster (scripts/pg-cluster.sh), two
# `rolo serve` processes on it and nginx balancing them round robin; $ROLO_URL is nginx, and
# $ROLO_URL_A / $ROLO_URL_B reach each process directly, $PG_DIR is the cluster's folder.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROLO="$ROOT/.build/debug/rolo"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rolo-interop.XXXXXX")
ROLO_PID=""
ROLO_PID_B=""
NGINX_PID=""
PG_DIR=""
ROLO_DATABASE="$WORK/rolo.sqlite"

rolo_cleanup() {
    local pid
    for pid in "$NGINX_PID" "$ROLO_PID" "$ROLO_PID_B"; do
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null
            # A server still waiting on a stuck request does not end on SIGTERM: 10 s, then KILL.
            for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
        fi
    done
    if [ -n "$PG_DIR" ]; then bash "$ROOT/scripts/pg-cluster.sh" stop "$PG_DIR"; fi
    rm -rf "$WORK"
}
trap rolo_cleanup EXIT

# rolo_serve_process OUT_PREFIX [SERVE FLAGS...]: starts one `rolo serve` on a free port; sets
# $SERVED_PID and $SERVED_PORT (the first stdout line is the JSON start line: {"port":N,...}).
rolo_serve_process() {
    local prefix=$1
    shift
    "$ROLO" serve --port 0 --database "$ROLO_DATABASE" --log-level "${ROLO_LOG_LEVEL:-warning}" "$@" \
        >"$WORK/$prefix.out" 2>"$WORK/$prefix.err" &
    SERVED_PID=$!
    SERVED_PORT=""
    for _ in $(seq 1 400); do
        SERVED_PORT=$(sed -n '1s|.*"port":\([0-9]*\).*|\1|p' "$WORK/$prefix.out")
        [ -n "$SERVED_PORT" ] && break
        kill -0 "$SERVED_PID" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$SERVED_PORT" ]; then
        echo "rolo serve did not start:" >&2
        cat "$WORK/$prefix.out" "$WORK/$prefix.err" >&2
        exit 2
    fi
}

# Two processes behind nginx (round robin, one request each in turn) on a fresh cluster.
rolo_start_postgres_pair() {
    local cluster
    cluster=$(bash "$ROOT/scripts/pg-cluster.sh" start --owner-pid $$) || { echo "PostgreSQL did not start" >&2; exit 2; }
    PG_DIR=${cluster%% *}
    ROLO_DATABASE=${cluster#* }
    rolo_serve_process serve "$@"
    ROLO_PID=$SERVED_PID; ROLO_URL_A="http://127.0.0.1:$SERVED_PORT"
    ROLO_TEST_TOKEN=$(sed -n '1s|.*"test_api_token":"\([^"]*\)".*|\1|p' "$WORK/serve.out")
    rolo_serve_process serve-b "$@"
    ROLO_PID_B=$SERVED_PID; ROLO_URL_B="http://127.0.0.1:$SERVED_PORT"

    local nginx port
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    [ -x "$nginx" ] || { echo "nginx not installed" >&2; exit 2; }
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p "$WORK/nginx/temp"
    # deploy/rolo-locations.conf pointed at an upstream of both processes, as
    # deploy/scale-out/nginx.conf does.
    sed "s|http://127\.0\.0\.1:8800|http://rolo_pair|" "$ROOT/deploy/rolo-locations.conf" >"$WORK/nginx/rolo-locations.conf"
    cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 256; }
http {
    # Which process answered each request (rolo_pair_answers).
    log_format upstream '\$upstream_addr';
    access_log $WORK/nginx/access.log upstream;
    client_body_temp_path $WORK/nginx/temp/body;
    proxy_temp_path $WORK/nginx/temp/proxy;
    fastcgi_temp_path $WORK/nginx/temp/fastcgi;
    uwsgi_temp_path $WORK/nginx/temp/uwsgi;
    scgi_temp_path $WORK/nginx/temp/scgi;
    upstream rolo_pair {
        server ${ROLO_URL_A#http://};
        server ${ROLO_URL_B#http://};
        keepalive 16;
    }
    server {
        listen 127.0.0.1:$port;
        include $WORK/nginx/rolo-locations.conf;
    }
}
CONF
    "$nginx" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' 2>"$WORK/nginx/stderr" &
    NGINX_PID=$!
    for _ in $(seq 1 100); do
        curl -s -o /dev/null "http://127.0.0.1:$port/health" && break
        sleep 0.05
    done
    ROLO_PORT=$port
    ROLO_URL="http://127.0.0.1:$port"
}

# rolo_pair_answers: fails unless nginx really alternated (each process answered > 10
# requests through it); prints the counts. Call before the script ends.
rolo_pair_answers() {
    [ "${ROLO_INTEROP_BACKEND:-}" = postgres-pair ] || return 0
    local a b
    a=$(grep -c "${ROLO_URL_A#http://}" "$WORK/nginx/access.log" 2>/dev/null || true)
    b=$(grep -c "${ROLO_URL_B#http://}" "$WORK/nginx/access.log" 2>/dev/null || true)
    echo "through nginx: process A answered ${a:-0} requests, process B ${b:-0}"
    [ "${a:-0}" -gt 10 ] && [ "${b:-0}" -gt 10 ]
}

rolo_start() {
    local user=$1 password=$2
    shift 2
    if [ ! -x "$ROLO" ]; then
        echo "missing $ROLO: run swift build first" >&2
        exit 2
    fi
    if [ "${ROLO_INTEROP_BACKEND:-}" = postgres-pair ]; then
        rolo_start_postgres_pair "$@"
        printf '%s\n' "$password" | "$ROLO" user add "$user" --password-stdin --database "$ROLO_DATABASE" >/dev/null || exit 2
        return
    fi
    printf '%s\n' "$password" | "$ROLO" user add "$user" --password-stdin --create-database --database "$ROLO_DATABASE" >/dev/null || exit 2
    rolo_serve_process serve "$@"
    ROLO_PID=$SERVED_PID
    ROLO_PORT=$SERVED_PORT
    ROLO_URL="http://127.0.0.1:$ROLO_PORT"
    ROLO_TEST_TOKEN=$(sed -n '1s|.*"test_api_token":"\([^"]*\)".*|\1|p' "$WORK/serve.out")
}

# rolo_control METHOD ENDPOINT [JSON]: a test-control API request (`rolo_start ... --test-api`);
# prints the JSON answer, fails on an HTTP error.
rolo_control() {
    local method=$1 endpoint=$2 body=${3:-}
    local args=(-sf -X "$method" -H "Authorization: Bearer $ROLO_TEST_TOKEN")
    [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
    curl "${args[@]}" "$ROLO_URL/_rolo/$endpoint"
}
