#!/usr/bin/env bash
# Rolo behind nginx with the locations of deploy/rolo-locations.conf (plain HTTP on a
# free loopback port instead of TLS): discovery redirect, authenticated PROPFIND, a card
# stored and read back byte for byte, an oversized PUT refused by Rolo's own 413, and the
# URLs device set-up hands out (a feed, a profile's account, Login Flow v2) working through it.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
if [ ! -x "$NGINX" ]; then
    echo "nginx not installed" >&2
    exit 1
fi

NGINX_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The public URL is nginx's: every URL Rolo hands out (feeds, profiles, Login Flow v2) names it.
rolo_start proxied proxied-secret --public-url "http://127.0.0.1:$NGINX_PORT"
mkdir -p "$WORK/nginx/temp"
sed "s|127\.0\.0\.1:8800|127.0.0.1:$ROLO_PORT|" "$ROOT/deploy/rolo-locations.conf" >"$WORK/nginx/rolo-locations.conf"
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
        include $WORK/nginx/rolo-locations.conf;
    }
}
CONF
"$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' 2>"$WORK/nginx/stderr" &
NGINX_PID=$!
trap 'kill -TERM $NGINX_PID 2>/dev/null; wait $NGINX_PID 2>/dev/null; rolo_cleanup' EXIT
for _ in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/health" && break
    sleep 0.05
done

PROXY="http://127.0.0.1:$NGINX_PORT"
AUTH=(-u proxied:proxied-secret)
failures=0
check() { # check NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: expected $2, got $3"; failures=$((failures + 1)); fi
}

check "health through nginx" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$PROXY/health")"
location=$(curl -s -o /dev/null -w '%{redirect_url}' "$PROXY/.well-known/carddav")
check "well-known redirect ends in /dav/" yes "$([[ $location == */dav/ ]] && echo yes || echo "no ($location)")"
check "PROPFIND without credentials" 401 "$(curl -s -o /dev/null -w '%{http_code}' -X PROPFIND -H 'Depth: 0' "$PROXY/dav/addressbooks/proxied/")"
check "PROPFIND home" 207 "$(curl -s -o /dev/null -w '%{http_code}' "${AUTH[@]}" -X PROPFIND -H 'Depth: 1' "$PROXY/dav/addressbooks/proxied/")"

printf 'BEGIN:VCARD\r\nVERSION:3.0\r\nUID:proxied-1\r\nFN:Through Nginx\r\nN:Nginx;Through;;;\r\nEND:VCARD\r\n' >"$WORK/card.vcf"
check "PUT card" 201 "$(curl -s -o /dev/null -w '%{http_code}' "${AUTH[@]}" -T "$WORK/card.vcf" -H 'Content-Type: text/vcard' "$PROXY/dav/addressbooks/proxied/default/proxied-1.vcf")"
curl -s "${AUTH[@]}" -o "$WORK/back.vcf" "$PROXY/dav/addressbooks/proxied/default/proxied-1.vcf"
check "GET returns the same bytes" yes "$(cmp -s "$WORK/card.vcf" "$WORK/back.vcf" && echo yes || echo no)"

# 10.5 MiB: over Rolo's 10 MiB card limit, under nginx's 11m, so Rolo answers.
head -c 11010048 /dev/zero | tr '\0' 'a' >"$WORK/big.vcf"
code=$(curl -s -o "$WORK/big.out" -w '%{http_code}' "${AUTH[@]}" -T "$WORK/big.vcf" -H 'Content-Type: text/vcard' "$PROXY/dav/addressbooks/proxied/default/big.vcf")
check "oversized PUT refused" 413 "$code"
check "413 carries CARDDAV:max-resource-size" yes "$(grep -q max-resource-size "$WORK/big.out" && echo yes || echo no)"

# Issue 33's URLs through the same recipe: a feed, a device profile's account, Login Flow v2.
feed_url=$("$ROLO" feed add proxied birthdays --database "$ROLO_DATABASE" --public-url "$PROXY" | tail -n 1)
check "the feed URL is the public one" yes "$([[ $feed_url == "$PROXY"/feeds/* ]] && echo yes || echo "no ($feed_url)")"
check "the birthday feed through nginx" 200 "$(curl -s -o "$WORK/feed.ics" -w '%{http_code}' "$feed_url")"
check "it is a calendar" yes "$(grep -q '^BEGIN:VCALENDAR' "$WORK/feed.ics" && echo yes || echo no)"
check "a wrong secret through nginx" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$PROXY/feeds/not-a-secret")"
"$ROLO" device-profile proxied "Proxied iPhone" --output "$WORK/phone.mobileconfig" --public-url "$PROXY" \
    --database "$ROLO_DATABASE" >/dev/null
profile=$(python3 - "$WORK/phone.mobileconfig" <<'PY'
import plistlib, sys
account = plistlib.load(open(sys.argv[1], "rb"))["PayloadContent"][0]
print(account["CardDAVHostName"], account["CardDAVPort"], account["CardDAVPrincipalURL"], account["CardDAVUseSSL"],
      account["CardDAVUsername"], account["CardDAVPassword"])
PY
)
read -r host port principal ssl username password <<<"$profile"
check "the profile names nginx" "127.0.0.1 $NGINX_PORT False proxied" "$host $port $ssl $username"
check "the profile's account works through nginx" 207 "$(curl -s -o /dev/null -w '%{http_code}' -u "proxied:$password" \
    -X PROPFIND -H 'Depth: 0' "$PROXY$principal")"
flow=$(curl -s -X POST -A "Thunderbird CardBook" "$PROXY/index.php/login/v2")
check "Login Flow v2 through nginx names the public URL" yes "$(python3 -c '
import json, sys
answer = json.loads(sys.argv[1]); prefix = sys.argv[2]
print("yes" if answer["login"].startswith(prefix) and answer["poll"]["endpoint"].startswith(prefix) else answer)' "$flow" "$PROXY")"

if [ $failures = 0 ]; then echo "nginx interop: all checks passed"; else echo "nginx interop: $failures failed"; cat "$WORK/nginx/error.log"; fi
[ $failures = 0 ]
