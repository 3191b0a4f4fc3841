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
SLAPD_PID=""
stop_slapd() {
    if [ -n "$SLAPD_PID" ] && kill -0 "$SLAPD_PID" 2>/dev/null; then
        kill -TERM "$SLAPD_PID" 2>/dev/null
        for _ in $(seq 1 50); do kill -0 "$SLAPD_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SLAPD_PID" 2>/dev/null
        wait "$SLAPD_PID" 2>/dev/null
    fi
}
trap 'stop_slapd; rolo_cleanup' EXIT

step "slapd with $PEOPLE people on a free loopback port"
mkdir -p "$WORK/slapd/data"
LDAP_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LDAP_URL="ldap://127.0.0.1:$LDAP_PORT"
cat >"$WORK/slapd/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
sizelimit size.soft=500 size.hard=500 size.prtotal=unlimited
pidfile $WORK/slapd/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 67108864
suffix "dc=example,dc=org"
rootdn "cn=admin,dc=example,dc=org"
rootpw admin-secret
directory $WORK/slapd/data
access to attrs=userPassword by anonymous auth by * none
access to * by * read
CONF
/usr/sbin/slapd -d 0 -f "$WORK/slapd/slapd.conf" -h "$LDAP_URL/" 2>"$WORK/slapd/log" &
SLAPD_PID=$!
for _ in $(seq 1 100); do
    ldapsearch -x -H "$LDAP_URL" -b "" -s base >/dev/null 2>&1 && break
    sleep 0.1
done
python3 - "$PEOPLE" >"$WORK/slapd/people.ldif" <<'PY'
import sys
print("""dn: dc=example,dc=org
objectClass: dcObject
objectClass: organization
dc: example
o: Example

dn: ou=people,dc=example,dc=org
objectClass: organizationalUnit
ou: people

dn: cn=rolo-service,dc=example,dc=org
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: rolo-service
userPassword: service-secret
""")
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
ldapadd -x -H "$LDAP_URL" -D "cn=admin,dc=example,dc=org" -w admin-secret -f "$WORK/slapd/people.ldif" >/dev/null \
    || fail "ldapadd: $(tail -5 "$WORK/slapd/log")"
printf 'service-secret\n' >"$WORK/slapd/service-password"
LDAP_FLAGS=(--ldap-url "$LDAP_URL" --ldap-base-dn "ou=people,dc=example,dc=org"
            --ldap-bind-dn "cn=rolo-service,dc=example,dc=org" --ldap-bind-password-file "$WORK/slapd/service-password")
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
