#!/usr/bin/env bash
# Two-way sync with vdirsyncer: 200 generated vCards go from folder A to a Rolo book and
# from there into an empty folder B; then edits, additions and deletions are made on both
# sides and synced until both folders and the server agree (same UIDs, same contents).
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"

if ! command -v vdirsyncer >/dev/null; then
    echo "vdirsyncer not on PATH (scripts/test.sh installs it into .build-venv)" >&2
    exit 1
fi

rolo_start sync sync-secret
BOOK="$ROLO_URL/dav/addressbooks/sync/default/"
mkdir -p "$WORK/a" "$WORK/b" "$WORK/status"

cat >"$WORK/config" <<CONFIG
[general]
status_path = "$WORK/status/"

[pair a_rolo]
a = "folder_a"
b = "rolo_a"
collections = null
conflict_resolution = "a wins"

[pair b_rolo]
a = "folder_b"
b = "rolo_b"
collections = null
conflict_resolution = "a wins"

[storage folder_a]
type = "filesystem"
path = "$WORK/a/"
fileext = ".vcf"

[storage folder_b]
type = "filesystem"
path = "$WORK/b/"
fileext = ".vcf"

[storage rolo_a]
type = "carddav"
url = "$BOOK"
username = "sync"
password = "sync-secret"

[storage rolo_b]
type = "carddav"
url = "$BOOK"
username = "sync"
password = "sync-secret"
CONFIG

vds() { vdirsyncer --config "$WORK/config" --verbosity WARNING "$@"; }

step() { echo "== $*"; }
fail() { echo "vdirsyncer interop FAILED: $*"; exit 1; }

# compare DIR1 DIR2: same UIDs, same card bytes (line endings normalized).
compare() {
    python3 - "$1" "$2" <<'PY'
import os, sys
def cards(folder):
    result = {}
    for name in os.listdir(folder):
        if not name.endswith(".vcf"):
            continue
        text = open(os.path.join(folder, name), encoding="utf-8").read().replace("\r\n", "\n").strip()
        uid = next(line[4:] for line in text.split("\n") if line.startswith("UID:"))
        result[uid] = text
    return result
a, b = cards(sys.argv[1]), cards(sys.argv[2])
if a.keys() != b.keys():
    print(f"UIDs differ: only in A {sorted(a.keys() - b.keys())[:5]}, only in B {sorted(b.keys() - a.keys())[:5]}")
    sys.exit(1)
different = [uid for uid in a if a[uid] != b[uid]]
if different:
    print(f"{len(different)} cards differ, e.g. {different[0]}:\n{a[different[0]]}\n---\n{b[different[0]]}")
    sys.exit(1)
print(f"{len(a)} cards identical")
PY
}

count_on_server() {
    curl -s -u sync:sync-secret -X PROPFIND -H 'Depth: 1' "$BOOK" | grep -o '\.vcf</' | wc -l
}

step "generate 200 vCards in A"
python3 - "$WORK/a" <<'PY'
import sys, os
for i in range(200):
    uid = f"interop-{i:04d}"
    with open(os.path.join(sys.argv[1], uid + ".vcf"), "w", newline="") as f:
        f.write(f"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{uid}\r\nFN:Person {i}\r\nN:{i};Person;;;\r\n"
                f"EMAIL;TYPE=INTERNET:person{i}@example.org\r\nTEL;TYPE=CELL:+1 555 {i:04d}\r\nEND:VCARD\r\n")
PY

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

echo "vdirsyncer interop: 200 cards synced both ways; edits, additions and deletions converged ($expected cards)"
