# Shared by the vdirsyncer interop scripts (sourced after rolo-server.bash; not *.sh so
# scripts/test.sh does not run it): a two-pair vdirsyncer setup (folder A <-> Rolo book,
# folder B <-> the same book) and the checks both scripts make.

if ! command -v vdirsyncer >/dev/null; then
    echo "vdirsyncer not on PATH (scripts/test.sh installs it into .build-venv)" >&2
    exit 1
fi

step() { echo "== $*"; }
fail() { echo "vdirsyncer interop FAILED: $*"; exit 1; }

# vds_setup BOOK_URL USER PASSWORD: folders $WORK/a and $WORK/b, config $WORK/config with
# the pairs a_rolo and b_rolo ("a wins" on conflicts).
vds_setup() {
    VDS_BOOK=$1 VDS_USER=$2 VDS_PASSWORD=$3
    local book=$1 user=$2 password=$3
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
url = "$book"
username = "$user"
password = "$password"

[storage rolo_b]
type = "carddav"
url = "$book"
username = "$user"
password = "$password"
CONFIG
}

vds() { vdirsyncer --config "$WORK/config" --verbosity WARNING "$@"; }

# generate_cards DIR COUNT: vCards interop-0000 ... in DIR.
generate_cards() {
    python3 - "$1" "$2" <<'PY'
import sys, os
for i in range(int(sys.argv[2])):
    uid = f"interop-{i:04d}"
    with open(os.path.join(sys.argv[1], uid + ".vcf"), "w", newline="") as f:
        f.write(f"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:{uid}\r\nFN:Person {i}\r\nN:{i};Person;;;\r\n"
                f"EMAIL;TYPE=INTERNET:person{i}@example.org\r\nTEL;TYPE=CELL:+1 555 {i:04d}\r\nEND:VCARD\r\n")
PY
}

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

# count_on_server: the number of cards PROPFIND lists in the book of vds_setup.
count_on_server() {
    curl -s -u "$VDS_USER:$VDS_PASSWORD" -X PROPFIND -H 'Depth: 1' "$VDS_BOOK" | grep -o '\.vcf</' | wc -l
}
