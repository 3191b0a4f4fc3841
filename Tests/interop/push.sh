#!/usr/bin/env bash
# WebDAV-Push checked from outside Swift: a real `rolo serve`, and a push client and push
# service written in Python (push_harness.py: http_ece decrypts, py_vapid verifies). A
# mistake made the same way in Rolo's sender and in the Swift tests' decryption (a raw
# 64-byte key, a DER signature, a wrong HKDF label) fails here.
set -uo pipefail
source "$(dirname "$0")/rolo-server.bash"

VENV="$ROOT/.build-venv"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" || exit 2
if ! "$VENV/bin/python" -c 'import http_ece, py_vapid, cryptography, pywebpush' 2>/dev/null; then
    echo "== installing http-ece, py-vapid, pywebpush into $VENV"
    "$VENV/bin/pip" install -q http-ece py-vapid cryptography pywebpush || exit 2
fi

echo "== push_harness.py selftest"
"$VENV/bin/python" "$ROOT/Tests/interop/push_harness.py" selftest || exit 1

rolo_start alice alice-pw --public-url http://rolo.test --push-allow-loopback
ROLO_URL="$ROLO_URL" "$VENV/bin/python" - "$ROOT/Tests/interop" <<'PY'
import base64, re, sys, time, urllib.request
sys.path.insert(0, sys.argv[1])
from push_harness import ClientKeys, FakePushService

import os
base = os.environ["ROLO_URL"]
auth = "Basic " + base64.b64encode(b"alice:alice-pw").decode()
failures = 0

def check(name, ok, detail=""):
    global failures
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    failures += 0 if ok else 1

def request(method, path, body=b"", headers=None):
    req = urllib.request.Request(base + path, data=body or None, method=method,
                                 headers={"Authorization": auth, **(headers or {})})
    try:
        with urllib.request.urlopen(req) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()

def book_properties():
    status, _, text = request("PROPFIND", "/dav/addressbooks/alice/default/", headers={"Depth": "0"}, body=b"""<?xml version="1.0"?>
        <d:propfind xmlns:d="DAV:" xmlns:p="https://bitfire.at/webdav-push"><d:prop>
        <p:transports/><p:topic/><d:sync-token/></d:prop></d:propfind>""")
    def value(name):
        match = re.search(r"<(?:\w+:)?%s(?:\s[^>]*)?>([^<]*)</" % name, text)
        return match and match.group(1)
    return value("vapid-public-key"), value("topic"), value("sync-token")

keys = ClientKeys.generate()
with FakePushService(keys) as service:
    register = f"""<?xml version="1.0" encoding="utf-8"?>
<push-register xmlns="https://bitfire.at/webdav-push"><subscription><web-push-subscription>
<push-resource>{service.url('/up/python')}</push-resource>
<subscription-public-key type="p256dh">{keys.p256dh}</subscription-public-key>
<auth-secret>{keys.auth}</auth-secret></web-push-subscription></subscription></push-register>"""
    status, headers, _ = request("POST", "/dav/addressbooks/alice/default/", register.encode(),
                                 {"Content-Type": "application/xml; charset=utf-8"})
    check("push-register answers 2xx with an absolute Location", 200 <= status < 300
          and headers.get("Location", "").startswith("http://rolo.test/dav/push/"), f"{status} {headers}")
    status, _, _ = request("PUT", "/dav/addressbooks/alice/default/ann.vcf",
                           b"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ann\r\nFN:Ann\r\nEND:VCARD\r\n", {"Content-Type": "text/vcard"})
    check("PUT", status == 201, status)
    messages = service.wait_for(1, timeout=15)
    check("one push message arrives", len(messages) == 1, len(messages))
    if messages:
        message = messages[0]
        key, topic, token = book_properties()
        check("http_ece decrypts it and py_vapid verifies its JWT", message.error is None, message.error)
        plaintext = (message.plaintext or b"").decode()
        check("it names the book's topic", f"<topic>{topic}</topic>" in plaintext, plaintext)
        check("it carries the book's sync token", f"<D:sync-token>{token}</D:sync-token>" in plaintext, plaintext)
        check("signed by the advertised VAPID key", message.vapid_key == key, (message.vapid_key, key))
        claims = message.claims or {}
        check("aud is the push service's origin", claims.get("aud") == service.origin, claims)
        check("exp within 24 h", 0 < claims.get("exp", 0) - time.time() <= 86400, claims)
        check("TTL and aes128gcm", message.headers.get("content-encoding") == "aes128gcm"
              and int(message.headers.get("ttl", "0")) > 0, message.headers)
sys.exit(1 if failures else 0)
PY
