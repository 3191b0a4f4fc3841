#!/usr/bin/env bash
# WebDAV compliance with litmus: the basic, copymove and props suites (and locks when the
# server advertises DAV class 2) run in a plain collection of the user's home and must
# pass completely. Exits non-zero on any failure.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"

if ! command -v litmus >/dev/null; then
    echo "litmus not installed (scripts/install-deps.sh --test)" >&2
    exit 1
fi

rolo_start litmus litmus-secret
AREA="$ROLO_URL/dav/addressbooks/litmus/litmus-area/"
status=$(curl -s -o /dev/null -w '%{http_code}' -u litmus:litmus-secret -X MKCOL "$AREA")
if [ "$status" != 201 ]; then
    echo "MKCOL $AREA answered $status" >&2
    exit 1
fi

suites="basic copymove props"
if curl -s -D - -o /dev/null -X OPTIONS "$AREA" | grep -i '^dav:' | grep -q '\b2\b'; then
    suites="$suites locks"
fi

failed=0
for suite in $suites; do
    echo "== litmus $suite"
    # litmus writes debug.log and child.log into the current folder: keep them in $WORK.
    (cd "$WORK" && TESTS="$suite" litmus "$AREA" litmus litmus-secret) >"$WORK/litmus-$suite.log" 2>&1
    code=$?
    grep -E '^<- summary|^-> running|FAIL|WARNING' "$WORK/litmus-$suite.log"
    if [ $code != 0 ] || grep -q 'FAIL' "$WORK/litmus-$suite.log"; then
        failed=1
        echo "litmus $suite FAILED; full log:"
        cat "$WORK/litmus-$suite.log"
    fi
done

rolo_pair_answers || failed=1
if [ $failed = 0 ]; then echo "litmus: all suites passed ($suites)"; else echo "litmus: failures"; fi
exit $failed
