#!/usr/bin/env bash
# vdirsyncer through a shared book: alice's book "family" (50 cards, synced from folder A
# over her own path) is shared read-write with bob, whose pair syncs folder B with the
# mount /dav/addressbooks/bob/family~alice/ both ways: edits, additions and deletions on
# either side converge, and alice's path shows bob's changes. Then the share becomes
# read-only: bob still pulls everything, his pushes get 403 (need-privileges) and change
# nothing on the server, and a pair with `read_only = true` (partial_sync "revert" or
# "ignore") syncs cleanly with nothing reaching the server.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"
source "$(dirname "$0")/vdirsyncer.bash"

rolo_start alice alice-secret --test-api
[ -n "$ROLO_TEST_TOKEN" ] || fail "no test_api_token in the start line: $(head -1 "$WORK/serve.out")"
rolo() { "$ROLO" "$@" --database "$ROLO_DATABASE"; }
printf 'bob-secret\n' | rolo user add bob --password-stdin >/dev/null || fail "rolo user add bob"
ALICE_BOOK="$ROLO_URL/dav/addressbooks/alice/family/"
MOUNT="$ROLO_URL/dav/addressbooks/bob/family~alice/"
# count_on_server (vdirsyncer.bash) counts through alice's own path.
VDS_BOOK=$ALICE_BOOK VDS_USER=alice VDS_PASSWORD=alice-secret

# write_config [PAIR_OPTION [STORAGE_OPTION]]: pairs alice (A <-> alice's path), bob
# (B <-> the mount) and bob_fresh (C <-> the mount); the options go into bob's pair and
# into the storage of his mount.
write_config() {
    mkdir -p "$WORK/a" "$WORK/b" "$WORK/c" "$WORK/status"
    cat >"$WORK/config" <<CONFIG
[general]
status_path = "$WORK/status/"

[pair alice]
a = "folder_a"
b = "rolo_alice"
collections = null
conflict_resolution = "a wins"

[pair bob]
a = "folder_b"
b = "rolo_bob"
collections = null
conflict_resolution = "a wins"
${1:-}

[pair bob_fresh]
a = "folder_c"
b = "rolo_bob_fresh"
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

[storage folder_c]
type = "filesystem"
path = "$WORK/c/"
fileext = ".vcf"

[storage rolo_alice]
type = "carddav"
url = "$ALICE_BOOK"
username = "alice"
password = "alice-secret"

[storage rolo_bob]
type = "carddav"
url = "$MOUNT"
username = "bob"
password = "bob-secret"
${2:-}

[storage rolo_bob_fresh]
type = "carddav"
url = "$MOUNT"
username = "bob"
password = "bob-secret"
CONFIG
}

# snapshot FILE: the book as alice's own path shows it (sync token, ctag, every card's
# href, ETag and bytes), as JSON.
snapshot() {
    python3 - "$ALICE_BOOK" alice alice-secret >"$1" <<'PY' || fail "snapshot of alice's book"
import base64, http.client, json, re, sys, urllib.parse
url, user, password = sys.argv[1:4]
parts = urllib.parse.urlsplit(url)
conn = http.client.HTTPConnection(parts.hostname, parts.port)
auth = {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}
def request(method, path, body=None, headers={}):
    conn.request(method, path, body=body, headers={**auth, **headers})
    response = conn.getresponse()
    return response.status, response.read().decode()
status, top = request("PROPFIND", parts.path, '<?xml version="1.0"?><propfind xmlns="DAV:" '
    'xmlns:CS="http://calendarserver.org/ns/"><prop><sync-token/><CS:getctag/></prop></propfind>',
    {"Depth": "0", "Content-Type": "application/xml"})
assert status == 207, f"PROPFIND depth 0: {status}"
status, listing = request("PROPFIND", parts.path, '<?xml version="1.0"?><propfind xmlns="DAV:">'
    '<prop><getetag/></prop></propfind>', {"Depth": "1", "Content-Type": "application/xml"})
assert status == 207, f"PROPFIND depth 1: {status}"
cards = {}
for href in sorted(set(re.findall(r"<[^>]*href>([^<]*\.vcf)</", listing))):
    status, body = request("GET", href)
    assert status == 200, f"GET {href}: {status}"
    cards[href] = body
tags = re.findall(r"<[^>]*(?:sync-token|getctag)>([^<]*)</", top)
print(json.dumps({"tags": tags, "etags": sorted(re.findall(r"<[^>]*getetag>([^<]*)</", listing)),
                  "cards": cards}, indent=1, sort_keys=True))
PY
}

# mark NAME: a mark in the server's request log (test API).
mark() { rolo_control POST marks "{\"name\": \"$1\"}" >/dev/null || fail "could not set mark $1"; }

# writes_since MARK STATUS...: every PUT/DELETE/MKCOL/PROPPATCH/MOVE/COPY since MARK was
# answered with one of STATUS (none at all when no STATUS is given); prints a summary.
writes_since() {
    local log
    log=$(rolo_control GET "requests?since=$1") || fail "could not list the requests since $1"
    python3 - "$log" "${@:2}" <<'PY' || fail "request log since $1"
import json, sys
log, allowed = json.loads(sys.argv[1]), {int(s) for s in sys.argv[2:]}
assert log["complete"], "request log incomplete"
writes = [(r["method"], r["path"], r["status"]) for r in log["requests"]
          if r["method"] in ("PUT", "DELETE", "MKCOL", "PROPPATCH", "MOVE", "COPY")]
bad = [w for w in writes if w[2] not in allowed]
assert not bad, f"unexpected writes: {bad}"
print(f"request log: {len(log['requests'])} requests, {len(writes)} writes"
      + (f", all answered {'/'.join(map(str, sorted(allowed)))}" if writes else ""))
PY
}

# edit FOLDER NOTE UID...: adds NOTE:<NOTE> to each card.
edit() {
    python3 - "$@" <<'PY'
import os, sys
folder, note, uids = sys.argv[1], sys.argv[2], sys.argv[3:]
for uid in uids:
    path = os.path.join(folder, uid + ".vcf")
    text = open(path, newline="").read()
    assert f"UID:{uid}\r\n" in text, path
    open(path, "w", newline="").write(text.replace("\r\nFN:", f"\r\nNOTE:{note}\r\nFN:", 1))
PY
}

# add FOLDER UID: a new vCard 4.0.
add() {
    printf 'BEGIN:VCARD\r\nVERSION:4.0\r\nUID:%s\r\nFN:New %s\r\nEND:VCARD\r\n' "$2" "$2" >"$1/$2.vcf"
}

# uids FIRST LAST: interop-FIRST ... interop-LAST. vdirsyncer names each card <UID>.vcf,
# in the folders and on the server, so the cards are addressed by file name.
uids() { seq -f "interop-%04g" "$@"; }

step "alice: book family with 50 cards, synced from A over her own path"
rolo book create alice family --display-name Family >/dev/null || fail "rolo book create"
write_config
vds discover alice >/dev/null || fail "discover alice"
generate_cards "$WORK/a" 50
vds sync alice || fail "sync alice"
[ "$(count_on_server)" = 50 ] || fail "alice's book holds $(count_on_server) cards, expected 50"

step "share family with bob read-write, accepted; bob pulls the mount into B"
rolo share add alice family bob --read-write --accept || fail "rolo share add --read-write"
vds discover bob bob_fresh >/dev/null || fail "discover bob"
vds sync bob || fail "first sync bob"
compare "$WORK/a" "$WORK/b" || fail "B differs from A after bob's first sync"

step "bob edits 5, deletes 3, adds 2 in B; alice edits 5, deletes 3, adds 1 in A"
edit "$WORK/b" "edited by bob" $(uids 0 4)
rm "$WORK"/b/interop-001[0-2].vcf
add "$WORK/b" new-by-bob-1
add "$WORK/b" new-by-bob-2
edit "$WORK/a" "edited by alice" $(uids 20 24)
rm "$WORK"/a/interop-003[0-2].vcf
add "$WORK/a" new-by-alice

step "sync both ways until converged"
vds sync bob || fail "sync bob (push his changes)"
vds sync alice || fail "sync alice (push hers, pull bob's)"
vds sync bob || fail "sync bob (pull alice's)"
compare "$WORK/a" "$WORK/b" || fail "A and B differ after the edits"
expected=$((50 - 3 - 3 + 2 + 1))
[ "$(count_on_server)" = "$expected" ] || fail "alice's path lists $(count_on_server) cards, expected $expected"
[ "$(grep -l "NOTE:edited by bob" "$WORK"/a/*.vcf | wc -l)" = 5 ] || fail "bob's edits did not reach alice"
[ "$(grep -l "NOTE:edited by alice" "$WORK"/b/*.vcf | wc -l)" = 5 ] || fail "alice's edits did not reach bob"
[ -f "$WORK/a/new-by-bob-2.vcf" ] && [ ! -e "$WORK/a/interop-0011.vcf" ] || fail "bob's addition/deletion did not reach alice"
snapshot "$WORK/rw.json"
python3 - "$WORK/rw.json" "$WORK/b" <<'PY' || fail "alice's path does not hold bob's folder"
import json, os, sys
cards = json.load(open(sys.argv[1]))["cards"]
names = {href.rsplit("/", 1)[1] for href in cards}
assert names == set(os.listdir(sys.argv[2])), "hrefs on alice's path differ from the files in B"
for href, body in cards.items():
    local = open(os.path.join(sys.argv[2], href.rsplit("/", 1)[1]), newline="").read()
    assert body.replace("\r\n", "\n").strip() == local.replace("\r\n", "\n").strip(), href
print(f"alice's path holds B's {len(cards)} cards byte for byte")
PY

step "alice makes the share read-only; she edits one more card; bob pulls it"
rolo share add alice family bob || fail "rolo share add (to read-only)"
edit "$WORK/a" "edited by alice after read-only" interop-0040
vds sync alice || fail "sync alice (read-only phase)"
vds sync bob || fail "sync bob: pulling from the read-only mount failed"
compare "$WORK/a" "$WORK/b" || fail "B differs from A after pulling from the read-only mount"
vds sync bob_fresh || fail "sync of an empty folder C from the read-only mount"
compare "$WORK/a" "$WORK/c" || fail "C differs from A after pulling from the read-only mount"
snapshot "$WORK/ro-before.json"

step "bob edits 2, deletes 1, adds 1 in B and syncs: the server refuses with 403"
edit "$WORK/b" "edited by bob while read-only" $(uids 41 42)
rm "$WORK/b/interop-0043.vcf"
add "$WORK/b" new-by-bob-read-only
mark refused
for attempt in 1 2; do
    output=$(vds sync bob 2>&1)
    status=$?
    [ "$status" != 0 ] || fail "sync bob succeeded against the read-only mount: $output"
    echo "$output" | grep -q "403" || fail "sync bob did not report the 403: $output"
    echo "vdirsyncer (attempt $attempt) exited $status and printed:"
    echo "$output" | sed 's/^/    /'
done
writes_since refused 403
snapshot "$WORK/ro-after.json"
cmp -s "$WORK/ro-before.json" "$WORK/ro-after.json" \
    || fail "the server changed after refused pushes: $(diff "$WORK/ro-before.json" "$WORK/ro-after.json" | head -20)"
vds sync alice || fail "sync alice after bob's refused pushes"
[ "$(grep -l "edited by bob while read-only" "$WORK"/a/*.vcf | wc -l)" = 0 ] || fail "a refused edit reached alice"
[ -f "$WORK/a/interop-0043.vcf" ] && [ ! -e "$WORK/a/new-by-bob-read-only.vcf" ] || fail "a refused deletion/addition reached alice"

step "curl: PUT, new PUT and DELETE through the read-only mount get 403 need-privileges"
CRLF=$'\r\n'
card=$(cat "$WORK/a/interop-0041.vcf")
etag=$(curl -s -o /dev/null -D - -u bob:bob-secret "${MOUNT}interop-0041.vcf" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
[ -n "$etag" ] || fail "no ETag on GET through the read-only mount"
check_403() {
    local what=$1 status
    shift
    status=$(curl -s -o "$WORK/answer" -w '%{http_code}' -u bob:bob-secret "$@")
    [ "$status" = 403 ] || fail "$what through the read-only mount: $status, expected 403"
    grep -q "need-privileges" "$WORK/answer" || fail "$what: the 403 body lacks need-privileges: $(cat "$WORK/answer")"
    echo "$what: 403 with need-privileges"
}
check_403 "PUT If-Match" -X PUT -H "If-Match: $etag" -H 'Content-Type: text/vcard' \
    --data-binary "${card/FN:/NOTE:curl${CRLF}FN:}" "${MOUNT}interop-0041.vcf"
check_403 "PUT If-None-Match" -X PUT -H 'If-None-Match: *' -H 'Content-Type: text/vcard' \
    --data-binary $'BEGIN:VCARD\r\nVERSION:4.0\r\nUID:curl-new\r\nFN:Curl\r\nEND:VCARD\r\n' "${MOUNT}curl-new.vcf"
check_403 "DELETE" -X DELETE "${MOUNT}interop-0041.vcf"
snapshot "$WORK/ro-curl.json"
cmp -s "$WORK/ro-before.json" "$WORK/ro-curl.json" || fail "the server changed after refused curl requests"

step "bob's storage marked read_only, partial_sync = \"revert\": clean sync, local changes reverted"
write_config 'partial_sync = "revert"' 'read_only = true'
vds discover bob >/dev/null || fail "discover bob (partial_sync = revert)"
mark revert
# vdirsyncer reverts in two steps: the first sync records the local changes as synced
# without sending them, the next one finds the server's versions newer and restores them.
for sync in 1 2 3; do
    vds sync bob || fail "sync $sync of bob with partial_sync = revert"
    compare "$WORK/a" "$WORK/b" >/dev/null && break
    [ "$sync" = 3 ] && { compare "$WORK/a" "$WORK/b"; fail "B's refused changes were not reverted after 3 syncs"; }
done
echo "B reverted to the server's cards after $sync clean syncs"
compare "$WORK/a" "$WORK/b" || fail "B differs from A after the revert"
writes_since revert
snapshot "$WORK/ro-revert.json"
cmp -s "$WORK/ro-before.json" "$WORK/ro-revert.json" || fail "the server changed with partial_sync = revert"

step "partial_sync = \"ignore\": clean sync, local changes stay local"
write_config 'partial_sync = "ignore"' 'read_only = true'
vds discover bob >/dev/null || fail "discover bob (partial_sync = ignore)"
edit "$WORK/b" "kept locally by bob" interop-0044
rm "$WORK/b/interop-0045.vcf"
add "$WORK/b" new-kept-locally
edit "$WORK/a" "edited by alice while bob ignores" interop-0046
vds sync alice || fail "sync alice (ignore phase)"
snapshot "$WORK/ro-ignore-before.json"
mark ignore
vds sync bob || fail "sync bob with partial_sync = ignore"
vds sync bob || fail "second sync bob with partial_sync = ignore"
writes_since ignore
snapshot "$WORK/ro-ignore.json"
cmp -s "$WORK/ro-ignore-before.json" "$WORK/ro-ignore.json" || fail "the server changed with partial_sync = ignore"
grep -q "kept locally by bob" "$WORK/b/interop-0044.vcf" && [ -f "$WORK/b/new-kept-locally.vcf" ] \
    && [ ! -e "$WORK/b/interop-0045.vcf" ] || fail "partial_sync = ignore did not keep bob's local changes"
grep -q "edited by alice while bob ignores" "$WORK/b/interop-0046.vcf" || fail "partial_sync = ignore: alice's edit did not arrive"

echo "vdirsyncer shared interop: a read-write mount synced both ways ($expected cards, alice's path agrees);" \
    "a read-only mount pulled, refused pushes with 403 need-privileges and stayed unchanged;" \
    "partial_sync revert/ignore synced cleanly with no writes"
