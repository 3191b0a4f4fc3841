#!/usr/bin/env bash
# The organisation's directory filled from LDAP, as a vdirsyncer client sees it (issue 32):
# a throwaway slapd on a free loopback port holds 2,000 generated people (more than its
# size limit of 500 for one plain search, so the listing must page); `rolo serve` with
# `directory = all` and the ldap source builds the directory at start; vdirsyncer, as the
# local user admin, syncs `directory~rolo` into a folder (2,001 cards). One title changed
# with ldapmodify, `rolo directory sync` says "1 changed", and the next vdirsyncer sync
# changes exactly that one card in the folder.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"
source "$(dirname "$0")/vdirsyncer.bash"

PEOPLE=2000
source "$(dirname "$0")/slapd.bash"
trap 'slapd_stop; rolo_cleanup' EXIT

step "slapd with $PEOPLE people on a free loopback port"
slapd_start "sizelimit size.soft=500 size.hard=500 size.prtotal=unlimited"
slapd_service_account
python3 - "$PEOPLE" >"$WORK/slapd/people.ldif" <<'PY'
import sys
for i in range(1, int(sys.argv[1]) + 1):
    uid = f"person{i:04d}"
    print(f"""dn: uid={uid},ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: {uid}
cn: Person {i}
sn: Number{i}
displayName: Person Number{i}
mail: {uid}@example.org
telephoneNumber: +1 555 {i:04d}
mobile: +1 666 {i:04d}
title: Engineer {i % 7}
departmentNumber: dept-{i % 10}
o: Example
userPassword: {uid}-password
""")
PY
slapd_add <"$WORK/slapd/people.ldif"
LDAP_FLAGS=(--ldap-url "$LDAP_URL" --ldap-base-dn "ou=people,dc=example,dc=org"
            --ldap-bind-dn "cn=rolo-service,dc=example,dc=org" --ldap-bind-password-file "$LDAP_SERVICE_PASSWORD_FILE")
plain=$(ldapsearch -x -H "$LDAP_URL" -D "cn=rolo-service,dc=example,dc=org" -w service-secret \
    -b "ou=people,dc=example,dc=org" '(uid=*)' uid 2>&1 | grep -c '^uid:')
[ "$plain" -le 500 ] || fail "slapd's size limit did not hold: one plain search listed $plain people"

step "rolo serve with directory = all and the ldap source builds the directory at start"
rolo_start admin admin-secret-1 --auth-source local --auth-source ldap "${LDAP_FLAGS[@]}" --directory all
BOOK="$ROLO_URL/dav/addressbooks/admin/directory~rolo/"
vds_setup "$BOOK" admin admin-secret-1
expected=$((PEOPLE + 1))
for _ in $(seq 1 600); do
    [ "$(count_on_server)" = "$expected" ] && break
    sleep 0.2
done
[ "$(count_on_server)" = "$expected" ] || fail "the directory holds $(count_on_server) cards, expected $expected: $(tail -5 "$WORK/serve.err")"

step "vdirsyncer syncs the directory: $expected cards"
vds discover a_rolo >/dev/null || fail "discover a_rolo"
vds sync a_rolo || fail "first sync"
[ "$(ls "$WORK/a" | wc -l)" = "$expected" ] || fail "the folder holds $(ls "$WORK/a" | wc -l) cards, expected $expected"
grep -l "TITLE:Engineer 0" "$WORK/a"/*.vcf | xargs grep -l "FN:Person Number42" >/dev/null || fail "person0042's card is not as LDAP has it"
cp -a "$WORK/a" "$WORK/a-before"

step "one title changed in LDAP; rolo directory sync reports one changed card"
ldapmodify -x -H "$LDAP_URL" -D "cn=admin,dc=example,dc=org" -w admin-secret >/dev/null <<'LDIF' || fail "ldapmodify"
dn: uid=person0042,ou=people,dc=example,dc=org
changetype: modify
replace: title
title: Chief Engineer
LDIF
output=$("$ROLO" directory sync --database "$ROLO_DATABASE" --directory all --auth-source ldap "${LDAP_FLAGS[@]}" 2>&1) \
    || fail "rolo directory sync: $output"
echo "$output" | grep -qx "changed person0042" || fail "rolo directory sync did not name person0042: $output"
echo "$output" | grep -q "Directory rebuilt: 0 added, 1 changed, 0 removed" || fail "rolo directory sync said: $output"
again=$("$ROLO" directory sync --database "$ROLO_DATABASE" --directory all --auth-source ldap "${LDAP_FLAGS[@]}" 2>&1)
[ "$again" = "Directory unchanged." ] || fail "a second rebuild changed something: $again"

step "vdirsyncer's next sync changes exactly that card"
vds sync a_rolo || fail "second sync"
changed=$(diff -rq "$WORK/a-before" "$WORK/a" | wc -l)
[ "$changed" = 1 ] || fail "$changed files differ after the sync: $(diff -rq "$WORK/a-before" "$WORK/a" | head -5)"
file=$(diff -rq "$WORK/a-before" "$WORK/a" | sed -n 's|^Files .* and \(.*\) differ$|\1|p')
grep -q "TITLE:Chief Engineer" "$file" && grep -q "FN:Person Number42" "$file" || fail "the changed card is not person0042's new one: $file"
echo "vdirsyncer directory interop passed"
