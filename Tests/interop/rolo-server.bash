# Shared by the interop scripts (sourced, not run; not *.sh so scripts/test.sh skips it): starts `rolo serve` from
# .build/debug/rolo on a free 127.0.0.1 port with a temporary database, and cleans up.
# After `rolo_start USER PASSWORD [SERVE FLAGS...]`: $ROLO_PORT, $ROLO_URL (http://127.0.0.1:PORT), $WORK,
# and with `--test-api` $ROLO_TEST_TOKEN plus `rolo_control METHOD ENDPOINT [JSON]` for /_rolo/.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROLO="$ROOT/.build/debug/rolo"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rolo-interop.XXXXXX")
ROLO_PID=""

rolo_cleanup() {
    if [ -n "$ROLO_PID" ] && kill -0 "$ROLO_PID" 2>/dev/null; then
        kill -TERM "$ROLO_PID" 2>/dev/null
        wait "$ROLO_PID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap rolo_cleanup EXIT

rolo_start() {
    local user=$1 password=$2
    shift 2
    if [ ! -x "$ROLO" ]; then
        echo "missing $ROLO: run swift build first" >&2
        exit 2
    fi
    printf '%s\n' "$password" | "$ROLO" user add "$user" --password-stdin --database "$WORK/rolo.sqlite" >/dev/null || exit 2
    "$ROLO" serve --port 0 --database "$WORK/rolo.sqlite" --log-level "${ROLO_LOG_LEVEL:-warning}" "$@" \
        >"$WORK/serve.out" 2>"$WORK/serve.err" &
    ROLO_PID=$!
    for _ in $(seq 1 200); do
        # With --port 0 the first stdout line is the JSON start line: {"port":N,"url":...}.
        ROLO_PORT=$(sed -n '1s|.*"port":\([0-9]*\).*|\1|p' "$WORK/serve.out")
        [ -n "$ROLO_PORT" ] && break
        kill -0 "$ROLO_PID" 2>/dev/null || break
        sleep 0.05
    done
    if [ -z "$ROLO_PORT" ]; then
        echo "rolo serve did not start:" >&2
        cat "$WORK/serve.out" "$WORK/serve.err" >&2
        exit 2
    fi
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
