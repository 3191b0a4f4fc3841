#!/usr/bin/env bash
# The `proxy` source behind nginx: nginx checks a password of its own (auth_basic, standing in
# for Authelia/authentik's auth_request) and names the user in Remote-User; Rolo believes that
# header only from nginx's address. nginx connects from 127.0.0.2 (`proxy_bind`), the only
# trusted proxy, so the same header sent straight to Rolo from 127.0.0.1 counts for nothing.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ]; then
    echo "nginx not installed" >&2
    exit 1
fi

rolo_start local-admin local-admin-secret --auth-source proxy --auth-source local \
    --proxy-user-header Remote-User --trusted-proxy 127.0.0.2
NGINX_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/nginx/temp"
printf 'ssouser:%s\n' "$(openssl passwd -apr1 'sso-secret-1')" >"$WORK/nginx/htpasswd"
# nginx's workers run as nobody: they must reach the password file in the private folder.
chmod 711 "$WORK" "$WORK/nginx"
chmod 644 "$WORK/nginx/htpasswd"
cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $WORK/nginx/temp/body;
    proxy_temp_path $WORK/nginx/temp/proxy;
    fastcgi_temp_path $WORK/nginx/temp/fastcgi;
    uwsgi_temp_path $WORK/nginx/temp/uwsgi;
    scgi_temp_path $WORK/nginx/temp/scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        location / {
            auth_basic "Rolo";
            auth_basic_user_file $WORK/nginx/htpasswd;
            proxy_pass http://127.0.0.1:$ROLO_PORT;
            proxy_bind 127.0.0.2;
            proxy_http_version 1.1;
            proxy_set_header Host \$host;
            # Always set, so a client's own Remote-User never passes through.
            proxy_set_header Remote-User \$remote_user;
            proxy_set_header Authorization "";
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_set_header Connection "";
        }
    }
}
CONF
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' 2>"$WORK/nginx/stderr" &
NGINX_PID=$!
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/" && break
    sleep 0.05
done

PROXY="http://127.0.0.1:$NGINX_PORT"
SSO=(-u ssouser:sso-secret-1)
failures=0
check() { # check NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected $2, got $3"; failures=$((failures + 1)); fi
}
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
users() { "$ROLO" user list --database "$ROLO_DATABASE" 2>&1; }

check "no account for ssouser before" no "$(users | grep -qw ssouser && echo yes || echo no)"
check "nginx refuses without its password" 401 "$(code -X PROPFIND -H 'Depth: 0' "$PROXY/dav/addressbooks/ssouser/")"
check "nginx refuses a wrong password" 401 "$(code -u ssouser:wrong-password -X PROPFIND -H 'Depth: 0' "$PROXY/dav/addressbooks/ssouser/")"
check "PROPFIND through nginx signs in (user made)" 207 "$(code "${SSO[@]}" -X PROPFIND -H 'Depth: 1' "$PROXY/dav/addressbooks/ssouser/")"
check "account made on first sight" yes "$(users | grep -qw ssouser && echo yes || echo no)"
printf 'BEGIN:VCARD\r\nVERSION:3.0\r\nUID:sso-1\r\nFN:Single Sign\r\nN:Sign;Single;;;\r\nEND:VCARD\r\n' >"$WORK/card.vcf"
check "PUT card through nginx" 201 "$(code "${SSO[@]}" -T "$WORK/card.vcf" -H 'Content-Type: text/vcard' "$PROXY/dav/addressbooks/ssouser/default/sso-1.vcf")"
curl -s "${SSO[@]}" -o "$WORK/back.vcf" "$PROXY/dav/addressbooks/ssouser/default/sso-1.vcf"
check "GET returns the same bytes" yes "$(cmp -s "$WORK/card.vcf" "$WORK/back.vcf" && echo yes || echo no)"
check "a client's own Remote-User does not pass nginx" 207 \
    "$(code "${SSO[@]}" -H 'Remote-User: local-admin' -X PROPFIND -H 'Depth: 0' "$PROXY/dav/addressbooks/ssouser/")"
check "... and opens nobody else's home (404: not theirs to see)" 404 \
    "$(code "${SSO[@]}" -H 'Remote-User: local-admin' -X PROPFIND -H 'Depth: 0' "$PROXY/dav/addressbooks/local-admin/")"
page=$(curl -s -L "${SSO[@]}" -c "$WORK/jar" -b "$WORK/jar" "$PROXY/web/account")
check "web UI through nginx signs in without the form" yes \
    "$(grep -q '<span class="who">ssouser</span>' <<<"$page" && echo yes || echo no)"

# Straight to Rolo, the header is as if absent.
check "spoofed header straight to Rolo: DAV" 401 "$(code -H 'Remote-User: ssouser' -X PROPFIND -H 'Depth: 0' "$ROLO_URL/dav/addressbooks/ssouser/")"
check "spoofed header straight to Rolo: GET card" 401 "$(code -H 'Remote-User: ssouser' "$ROLO_URL/dav/addressbooks/ssouser/default/sso-1.vcf")"
check "spoofed header makes no account" 401 "$(code -H 'Remote-User: mallory' -X PROPFIND -H 'Depth: 0' "$ROLO_URL/dav/addressbooks/mallory/")"
check "no account for mallory" no "$(users | grep -qw mallory && echo yes || echo no)"
check "spoofed header straight to Rolo: web UI" 303 "$(code -H 'Remote-User: ssouser' "$ROLO_URL/web/")"
check "local password still works beside the proxy" 207 \
    "$(code -u local-admin:local-admin-secret -X PROPFIND -H 'Depth: 0' "$ROLO_URL/dav/addressbooks/local-admin/")"

if [ $failures = 0 ]; then echo "nginx proxy sign-in interop: all checks passed"; else echo "nginx proxy sign-in interop: $failures failed"; cat "$WORK/nginx/error.log"; fi
[ $failures = 0 ]
