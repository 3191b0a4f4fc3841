#!/usr/bin/env bash
# vdirsyncer as a directory user: a throwaway OpenLDAP slapd on a free loopback port holds
# alice (password alice-password, in group rolo-users); `rolo serve` has only the ldap
# source. Her first sync makes her account (home, default book); 30 cards go from folder A
# to the server with her directory password, then into folder B with an app password made
# for her with `rolo token add`. A wrong directory password is refused (401); with slapd
# stopped, the app password still syncs and a new login gets 503 with Retry-After.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"
source "$(dirname "$0")/vdirsyncer.bash"

source "$(dirname "$0")/slapd.bash"
trap 'slapd_stop; rolo_cleanup' EXIT

step "slapd with alice and the service account on a free loopback port"
slapd_start "moduleload memberof" "overlay memberof"
slapd_service_account
slapd_add <<'LDIF'
dn: uid=alice,ou=people,dc=example,dc=org
objectClass: inetOrgPerson
uid: alice
cn: Alice Archer
sn: Archer
mail: alice@example.org
userPassword: alice-password

dn: cn=rolo-users,dc=example,dc=org
objectClass: groupOfNames
cn: rolo-users
member: uid=alice,ou=people,dc=example,dc=org
LDIF

# A local admin account so the database exists; alice comes from the directory alone.
rolo_start admin admin-secret-1 --auth-source ldap --ldap-url "$LDAP_URL" \
    --ldap-base-dn "ou=people,dc=example,dc=org" --ldap-bind-dn "cn=rolo-service,dc=example,dc=org" \
    --ldap-bind-password-file "$LDAP_SERVICE_PASSWORD_FILE" --ldap-user-groups-attribute memberOf \
    --ldap-required-group "cn=rolo-users,dc=example,dc=org" --auth-cache-seconds 60
rolo() { "$ROLO" "$@" --database "$ROLO_DATABASE"; }
BOOK="$ROLO_URL/dav/addressbooks/alice/default/"
vds_setup "$BOOK" alice alice-password

step "a wrong directory password is refused"
status=$(curl -s -o /dev/null -w '%{http_code}' -u alice:not-her-password -X PROPFIND -H 'Depth: 0' "$BOOK")
[ "$status" = 401 ] || fail "a wrong password answered $status, expected 401"

step "alice's first sync makes her account; 30 cards A -> Rolo with her directory password"
generate_cards "$WORK/a" 30
vds discover a_rolo >/dev/null || fail "discover a_rolo"
vds sync a_rolo || fail "sync A"
[ "$(count_on_server)" = 30 ] || fail "server holds $(count_on_server) cards, expected 30"
rolo user show alice | grep -qx "source: ldap" || fail "alice's source is not ldap: $(rolo user show alice)"
rolo user show alice | grep -qx "display name: Alice Archer" || fail "alice's display name did not come from the directory"

step "an app password for alice; Rolo -> empty B with it"
APP_PASSWORD=$(rolo token add alice phone | tail -1)
case "$APP_PASSWORD" in rolo_*) ;; *) fail "no app password: $APP_PASSWORD" ;; esac
python3 - "$WORK/config" "$APP_PASSWORD" <<'PY' || fail "config"
import sys
path, secret = sys.argv[1], sys.argv[2]
text = open(path).read()
head, tail = text.split("[storage rolo_b]")
open(path, "w").write(head + "[storage rolo_b]" + tail.replace('password = "alice-password"', f'password = "{secret}"'))
PY
grep -q "$APP_PASSWORD" "$WORK/config" || fail "the app password is not in the config"
vds discover b_rolo >/dev/null || fail "discover b_rolo"
vds sync b_rolo || fail "sync B with the app password"
compare "$WORK/a" "$WORK/b" || fail "A and B differ"

step "slapd stopped: the app password still syncs; a login the directory must answer gets 503"
slapd_stop
printf 'BEGIN:VCARD\r\nVERSION:3.0\r\nUID:during-outage\r\nFN:During Outage\r\nEND:VCARD\r\n' >"$WORK/b/during-outage.vcf"
vds sync b_rolo || fail "sync B during the outage"
[ "$(count_on_server)" = 31 ] || fail "server holds $(count_on_server) cards, expected 31"
headers=$(curl -s -o /dev/null -D - -u alice:another-password -X PROPFIND -H 'Depth: 0' "$BOOK")
echo "$headers" | head -1 | grep -q " 503" || fail "a new login during the outage answered: $(echo "$headers" | head -1)"
echo "$headers" | grep -qi "^retry-after:" || fail "the 503 has no Retry-After"
echo "vdirsyncer ldap interop passed"
