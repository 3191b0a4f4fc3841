#!/usr/bin/env bash
# Several Rolo processes on one PostgreSQL database (issue 20, Docs/scale-out.md): two
# `rolo serve` on a throwaway cluster behind nginx balancing them round robin.
#  1. The existing litmus and vdirsyncer scripts, unchanged, through nginx
#     (ROLO_INTEROP_BACKEND=postgres-pair makes rolo-server.bash start this set-up).
#  2. scale_out_checks.py against each process directly and through nginx: a card written
#     through one is read, listed, queried and synced through the other at once; sync tokens
#     of one process are valid on the other; racing If-Match PUTs on both never both win; a
#     push is sent once although both processes run a notifier.
#  3. An outage: PostgreSQL stops in the middle of a PUT storm and starts again; while it is
#     down the answers are 503 with Retry-After (after --database-connection-timeout); afterwards both processes serve without a
#     restart, and every acknowledged card is there with the bytes sent, no half card.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export ROLO_INTEROP_BACKEND=postgres-pair

failed=0
for script in ${SCALE_OUT_SCRIPTS-litmus.sh vdirsyncer.sh}; do
    echo "== $script through nginx, two processes on PostgreSQL"
    if bash "$HERE/$script"; then echo "ok   $script"; else echo "FAIL $script"; failed=1; fi
done

source "$HERE/rolo-server.bash"
VENV="$ROOT/.build-venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" || exit 2
if ! "$VENV/bin/python" -c 'import http_ece, py_vapid, cryptography' 2>/dev/null; then
    echo "== installing http-ece, py-vapid into $VENV"
    "$VENV/bin/pip" install -q http-ece py-vapid cryptography pywebpush || exit 2
fi

echo "== cross-process checks and the outage"
# A request waits at most 1 s for a database connection (default 10 s) before its 503, so
# that the outage below (4 s) is seen as one.
rolo_start alice alice-pw --public-url http://rolo.test --push-allow-loopback --database-connection-timeout 1
ROLO_URL="$ROLO_URL" ROLO_URL_A="$ROLO_URL_A" ROLO_URL_B="$ROLO_URL_B" PG_DIR="$PG_DIR" \
    ROLO="$ROLO" ROLO_DATABASE="$ROLO_DATABASE" PG_CLUSTER="$ROOT/scripts/pg-cluster.sh" \
    "$VENV/bin/python" "$HERE/scale_out_checks.py" || failed=1
if [ $failed != 0 ]; then
    for log in serve.err serve-b.err; do
        echo "-- $log (last 20 lines)"; tail -n 20 "$WORK/$log"
    done
    mkdir -p "$ROOT/.build/scale-out-logs" && cp "$WORK"/*.err "$ROOT/.build/scale-out-logs/" 2>/dev/null
    echo "(both processes' logs: .build/scale-out-logs/)"
fi
[ $failed = 0 ] && echo "scale-out: all checks passed"
exit $failed
