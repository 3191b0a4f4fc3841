#!/usr/bin/env bash
# vdirsyncer against a misbehaving server: `rolo serve --test-api` fails one PUT with 503
# (first an upload, then an update). vdirsyncer reports the failure, uploads the rest and
# exits non-zero; the next sync re-sends the same bytes, and a second folder synced from
# the server ends identical to the first: nothing lost.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"
source "$(dirname "$0")/vdirsyncer.bash"

rolo_start sync sync-secret --test-api
[ -n "$ROLO_TEST_TOKEN" ] || fail "no test_api_token in the start line: $(head -1 "$WORK/serve.out")"
BOOK="$ROLO_URL/dav/addressbooks/sync/default/"
BOOK_PATH="/dav/addressbooks/sync/default/"
vds_setup "$BOOK" sync sync-secret

# fail_next_put CARD MARK: a rule failing the next PUT of CARD with 503, and a mark to list
# the requests from here on.
fail_next_put() {
    rolo_control POST faults "{\"fault\": \"status\", \"method\": \"PUT\", \"path\": \"$BOOK_PATH$1\",
        \"status\": 503, \"body\": \"maintenance\", \"headers\": {\"Retry-After\": \"1\"}}" >/dev/null \
        || fail "could not install the fault rule"
    rolo_control POST marks "{\"name\": \"$2\"}" >/dev/null || fail "could not set mark $2"
}

# sync_expecting_failure PAIR: the sync must fail and name the 503.
sync_expecting_failure() {
    local output
    output=$(vds sync "$1" 2>&1) && fail "sync $1 succeeded although a PUT failed with 503"
    echo "$output" | grep -q "503" || fail "sync $1 did not report the 503: $output"
    echo "vdirsyncer reported: $(echo "$output" | grep -m1 503)"
    [ "$(rolo_control GET faults)" = '{"faults":[]}' ] || fail "the fault rule was not used up"
}

# check_puts MARK CARD: since MARK, CARD got exactly one 503 and then one 201/204 with the
# same body (the client re-sent the same bytes); every other request succeeded.
check_puts() {
    local log
    log=$(rolo_control GET "requests?since=$1") || fail "could not list the requests since $1"
    python3 - "$BOOK_PATH$2" "$log" <<'PY' || fail "request log check"
import json, sys
card, log = sys.argv[1], json.loads(sys.argv[2])
assert log["complete"], "request log incomplete"
puts = [r for r in log["requests"] if r["method"] == "PUT" and r["path"] == card]
statuses = [r["status"] for r in puts]
assert len(puts) == 2 and statuses[0] == 503 and statuses[1] in (201, 204), f"PUTs of {card}: {statuses}"
assert puts[0]["bodySHA256"] == puts[1]["bodySHA256"], "the retried PUT sent different bytes"
failures = [(r["method"], r["path"], r["status"]) for r in log["requests"] if r["status"] >= 400 and r is not puts[0]]
assert not failures, f"unexpected failures: {failures}"
print(f"{card}: 503, then {statuses[1]} with the same {puts[0]['bodyLength']} bytes; {len(log['requests'])} requests logged")
PY
}

step "generate 50 vCards in A"
generate_cards "$WORK/a" 50
vds discover >/dev/null || fail "discover"

step "first upload: the PUT of interop-0007 fails with 503"
fail_next_put interop-0007.vcf upload
sync_expecting_failure a_rolo
[ "$(count_on_server)" = 49 ] || fail "server holds $(count_on_server) cards, expected 49"

step "sync again: the missing card is uploaded"
vds sync a_rolo || fail "second sync A"
[ "$(count_on_server)" = 50 ] || fail "server holds $(count_on_server) cards, expected 50"
check_puts upload interop-0007.vcf
vds sync b_rolo || fail "sync B"
compare "$WORK/a" "$WORK/b" || fail "A and B differ after the recovered upload"

step "edit 5 cards in A: the update of interop-0002 fails with 503"
python3 - "$WORK/a" <<'PY'
import sys, os
for i in range(5):
    path = os.path.join(sys.argv[1], f"interop-{i:04d}.vcf")
    text = open(path, newline="").read().replace("\r\nFN:", "\r\nNOTE:edited while the server failed\r\nFN:", 1)
    open(path, "w", newline="").write(text)
PY
fail_next_put interop-0002.vcf update
sync_expecting_failure a_rolo
vds sync a_rolo || fail "sync A after the failed update"
check_puts update interop-0002.vcf
vds sync b_rolo || fail "sync B (edits)"
compare "$WORK/a" "$WORK/b" || fail "A and B differ after the recovered update"
[ "$(grep -l "NOTE:edited while the server failed" "$WORK/b"/*.vcf | wc -l)" = 5 ] || fail "B lacks some of the 5 edits"
[ "$(count_on_server)" = 50 ] || fail "server holds $(count_on_server) cards, expected 50"

echo "vdirsyncer faults interop: a 503 on one upload and on one update was reported, the next sync recovered, nothing lost (50 cards)"
