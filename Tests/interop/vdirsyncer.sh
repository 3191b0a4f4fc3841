#!/usr/bin/env bash
# Two-way sync with vdirsyncer: 200 generated vCards go from folder A to a Rolo book and
# from there into an empty folder B; then edits, additions and deletions are made on both
# sides and synced until both folders and the server agree (same UIDs, same contents).
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"
source "$(dirname "$0")/vdirsyncer.bash"

rolo_start sync sync-secret
BOOK="$ROLO_URL/dav/addressbooks/sync/default/"
vds_setup "$BOOK" sync sync-secret

step "generate 200 vCards in A"
generate_cards "$WORK/a" 200

step "discover and sync A -> Rolo"
vds discover >/dev/null || fail "discover"
vds sync a_rolo || fail "sync A"
[ "$(count_on_server)" = 200 ] || fail "server holds $(count_on_server) cards, expected 200"

step "sync Rolo -> empty B"
vds sync b_rolo || fail "sync B"
compare "$WORK/a" "$WORK/b" || fail "A and B differ after the first sync"

step "edit 10 and delete 5 in A; edit 5, delete 5 and add 3 in B"
python3 - "$WORK/a" "$WORK/b" <<'PY'
import sys, os
a, b = sys.argv[1], sys.argv[2]
def path_of(folder, uid):
    return next(os.path.join(folder, n) for n in os.listdir(folder)
                if f"UID:{uid}\r\n" in open(os.path.join(folder, n), newline="").read())
def edit(folder, uid, suffix):
    p = path_of(folder, uid)
    text = open(p, newline="").read().replace("\r\nFN:", "\r\nNOTE:edited " + suffix + "\r\nFN:", 1)
    open(p, "w", newline="").write(text)
for i in range(0, 10): edit(a, f"interop-{i:04d}", "in A")
for i in range(10, 15): os.remove(path_of(a, f"interop-{i:04d}"))
for i in range(20, 25): edit(b, f"interop-{i:04d}", "in B")
for i in range(30, 35): os.remove(path_of(b, f"interop-{i:04d}"))
for i in range(3):
    uid = f"new-in-b-{i}"
    open(os.path.join(b, uid + ".vcf"), "w", newline="").write(
        f"BEGIN:VCARD\r\nVERSION:4.0\r\nUID:{uid}\r\nFN:Newcomer {i}\r\nEND:VCARD\r\n")
PY

step "sync both ways until converged"
vds sync a_rolo || fail "sync A (edits)"
vds sync b_rolo || fail "sync B (edits)"
vds sync a_rolo || fail "sync A (pull B's edits)"
compare "$WORK/a" "$WORK/b" || fail "A and B differ after edits"
expected=$((200 - 5 - 5 + 3))
[ "$(count_on_server)" = "$expected" ] || fail "server holds $(count_on_server) cards, expected $expected"
[ "$(ls "$WORK/a" | wc -l)" = "$expected" ] || fail "A holds $(ls "$WORK/a" | wc -l) cards, expected $expected"
grep -l "NOTE:edited in B" "$WORK/a"/*.vcf | wc -l | grep -qx 5 || fail "B's edits did not reach A"
grep -l "NOTE:edited in A" "$WORK/b"/*.vcf | wc -l | grep -qx 10 || fail "A's edits did not reach B"

rolo_pair_answers || fail "nginx did not spread the requests over both processes"
echo "vdirsyncer interop: 200 cards synced both ways; edits, additions and deletions converged ($expected cards)"
