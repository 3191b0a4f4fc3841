# Shared by the interop scripts that need LDAP (sourced after rolo-server.bash; not *.sh, so
# scripts/test.sh does not run it): a throwaway OpenLDAP slapd on a free 127.0.0.1 port,
# its data in $WORK/slapd, the suffix dc=example,dc=org with the admin
# cn=admin,dc=example,dc=org (password admin-secret).
#
# `slapd_start [GLOBAL_LINE] [DATABASE_LINE...]`: GLOBAL_LINE goes before the database
# (a size limit, `moduleload memberof`), the others after it (`overlay memberof`). Sets
# $SLAPD_PID, $LDAP_PORT and $LDAP_URL, and waits until it answers. `slapd_add` adds the
# LDIF on standard input; `slapd_stop` stops it (safe to call twice: the EXIT trap does).
# `slapd_service_account` adds cn=rolo-service (password service-secret) and writes the
# password into $LDAP_SERVICE_PASSWORD_FILE.

SLAPD_PID=""
LDAP_SERVICE_PASSWORD_FILE="$WORK/slapd/service-password"

slapd_start() {
    local global="${1:-}"
    shift || true
    mkdir -p "$WORK/slapd/data"
    LDAP_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    LDAP_URL="ldap://127.0.0.1:$LDAP_PORT"
    {
        echo "include /etc/ldap/schema/core.schema"
        echo "include /etc/ldap/schema/cosine.schema"
        echo "include /etc/ldap/schema/inetorgperson.schema"
        echo "pidfile $WORK/slapd/slapd.pid"
        echo "modulepath /usr/lib/ldap"
        echo "moduleload back_mdb"
        [ -n "$global" ] && echo "$global"
        echo "database mdb"
        echo "maxsize 67108864"
        echo 'suffix "dc=example,dc=org"'
        echo 'rootdn "cn=admin,dc=example,dc=org"'
        echo "rootpw admin-secret"
        echo "directory $WORK/slapd/data"
        for line in "$@"; do echo "$line"; done
        echo "access to attrs=userPassword by anonymous auth by * none"
        echo "access to * by * read"
    } >"$WORK/slapd/slapd.conf"
    /usr/sbin/slapd -d 0 -f "$WORK/slapd/slapd.conf" -h "$LDAP_URL/" 2>"$WORK/slapd/log" &
    SLAPD_PID=$!
    for _ in $(seq 1 100); do
        ldapsearch -x -H "$LDAP_URL" -b "" -s base >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    fail "slapd did not answer on $LDAP_URL: $(tail -5 "$WORK/slapd/log")"
}

slapd_add() {
    ldapadd -x -H "$LDAP_URL" -D "cn=admin,dc=example,dc=org" -w admin-secret >/dev/null \
        || fail "ldapadd: $(tail -5 "$WORK/slapd/log")"
}

slapd_service_account() {
    slapd_add <<'LDIF'
dn: dc=example,dc=org
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
LDIF
    printf 'service-secret\n' >"$LDAP_SERVICE_PASSWORD_FILE"
}

slapd_stop() {
    if [ -n "$SLAPD_PID" ] && kill -0 "$SLAPD_PID" 2>/dev/null; then
        kill -TERM "$SLAPD_PID" 2>/dev/null
        for _ in $(seq 1 50); do kill -0 "$SLAPD_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SLAPD_PID" 2>/dev/null
        wait "$SLAPD_PID" 2>/dev/null
    fi
}
