"""A small OpenID provider on loopback for Tests/interop/oidc.sh, built on joserfc (keys,
JWS, JWKS; the JOSE library of authlib's authors, which authlib.jose now defers to) and
authlib (PKCE's S256 check). It serves discovery, an authorize page with a user-name form
("sign in as"), the token endpoint (client_secret_basic, PKCE required) and the JWKS, and
a control endpoint the test uses to rotate the signing key and to have the next tokens
come out tampered, expired, with a wrong state, or the token endpoint failing.

Run: python oidc_provider.py PORT_FILE  (writes its port, then serves until killed)."""
import base64
import json
import secrets
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

CLIENT_ID = "rolo"
CLIENT_SECRET = "rolo-client-secret"


class Provider:
    def __init__(self):
        self.lock = threading.Lock()
        self.keys = [self.new_key()]
        self.codes = {}
        # What the next tokens look like: normal, tampered, expired, wrong-state, token-down
        self.mode = "normal"
        self.groups = {"carol": ["rolo-users", "rolo-admins"], "dave": ["rolo-users"], "eve": ["others"]}
        self.issuer = None

    @staticmethod
    def new_key():
        return RSAKey.generate_key(2048, parameters={"kid": secrets.token_hex(4), "use": "sig", "alg": "RS256"})

    def rotate(self):
        # The old key leaves the JWKS at once: only a refetch finds the new one.
        with self.lock:
            self.keys = [self.new_key()]
        return self.keys[0].kid

    def jwks(self):
        with self.lock:
            return KeySet(self.keys).as_dict(private=False)

    def id_token(self, user, nonce):
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": "sub-" + user, "aud": CLIENT_ID, "iat": now, "exp": now + 300,
                  "nonce": nonce, "preferred_username": user, "groups": self.groups.get(user, [])}
        if self.mode == "expired":
            claims["iat"], claims["exp"] = now - 7200, now - 3600
        key = self.keys[0]
        token = jwt.encode({"alg": "RS256", "kid": key.kid}, claims, key)
        if self.mode == "tampered":
            header, payload, signature = token.split(".")
            claims["preferred_username"] = "root"
            forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
            token = ".".join([header, forged, signature])
        return token


PROVIDER = Provider()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body=b"", content_type="application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def form(self):
        length = int(self.headers.get("Content-Length") or 0)
        return dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        base = PROVIDER.issuer
        if url.path == "/.well-known/openid-configuration":
            return self.send(200, {
                "issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
                "jwks_uri": base + "/jwks", "response_types_supported": ["code"],
                "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            })
        if url.path == "/jwks":
            return self.send(200, PROVIDER.jwks())
        if url.path == "/authorize":
            problems = []
            if query.get("client_id") != CLIENT_ID:
                problems.append("client_id")
            if query.get("response_type") != "code":
                problems.append("response_type")
            if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
                problems.append("PKCE S256")
            if "openid" not in query.get("scope", "").split():
                problems.append("scope")
            if not query.get("state") or not query.get("nonce"):
                problems.append("state/nonce")
            if problems:
                return self.send(400, "bad authorization request: " + ", ".join(problems), "text/plain")
            hidden = "".join(f'<input type="hidden" name="{name}" value="{value}">'
                             for name, value in query.items() if name in
                             ("redirect_uri", "state", "nonce", "code_challenge"))
            page = f"""<!doctype html><html><head><title>Test provider</title></head><body>
<h1>Test provider sign-in</h1>
<form method="post" action="/authorize">{hidden}
<label for="login">User</label><input id="login" name="login">
<button type="submit" id="approve">Sign in</button></form></body></html>"""
            return self.send(200, page, "text/html; charset=utf-8")
        self.send(404, "not found", "text/plain")

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/authorize":
            form = self.form()
            code = secrets.token_urlsafe(24)
            PROVIDER.codes[code] = {"user": form["login"], "nonce": form["nonce"], "challenge": form["code_challenge"],
                                    "redirect_uri": form["redirect_uri"]}
            state = form["state"]
            if PROVIDER.mode == "wrong-state":
                state = secrets.token_urlsafe(32)
            target = form["redirect_uri"] + "?" + urllib.parse.urlencode({"code": code, "state": state})
            return self.send(302, "", "text/plain", [("Location", target)])
        if url.path == "/token":
            if PROVIDER.mode == "token-down":
                return self.send(503, {"error": "temporarily_unavailable"})
            expected = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
            if self.headers.get("Authorization") != expected:
                return self.send(401, {"error": "invalid_client"})
            form = self.form()
            grant = PROVIDER.codes.pop(form.get("code", ""), None)
            if (grant is None or form.get("grant_type") != "authorization_code"
                    or form.get("redirect_uri") != grant["redirect_uri"]):
                return self.send(400, {"error": "invalid_grant"})
            if create_s256_code_challenge(form.get("code_verifier", "")) != grant["challenge"]:
                return self.send(400, {"error": "invalid_grant", "error_description": "PKCE verifier"})
            return self.send(200, {"access_token": secrets.token_urlsafe(16), "token_type": "Bearer", "expires_in": 300,
                                   "id_token": PROVIDER.id_token(grant["user"], grant["nonce"])})
        if url.path == "/control":
            command = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            answer = {}
            if "mode" in command:
                PROVIDER.mode = command["mode"]
            if command.get("rotate"):
                answer["kid"] = PROVIDER.rotate()
            answer["mode"] = PROVIDER.mode
            return self.send(200, answer)
        self.send(404, "not found", "text/plain")


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    PROVIDER.issuer = f"http://127.0.0.1:{port}"
    with open(sys.argv[1], "w") as out:
        out.write(str(port))
    server.serve_forever()


if __name__ == "__main__":
    main()
