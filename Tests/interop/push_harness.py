#!/usr/bin/env python3
"""WebDAV-Push cross-check: an independent Python push client and push service.

Rolo encrypts (RFC 8291, aes128gcm) and signs (RFC 8292, VAPID) its push messages with
swift-crypto; the Swift tests decrypt with the same library. A mistake made on both sides
(the 64-byte raw key instead of the 65-byte point, a DER signature, a wrong HKDF label)
passes those tests and fails every real client. This harness checks with other code:
http_ece decrypts, py_vapid verifies.

Needs: pip install http-ece py-vapid cryptography pywebpush (pywebpush only for selftest).

As a module:
    keys = ClientKeys.generate()               # the subscriber: p256dh + auth for push-register
    with FakePushService(keys) as service:     # a push service on 127.0.0.1:<free port>
        register(service.url("/push/1"), keys.p256dh, keys.auth)   # the caller's own code
        ...change something...
        [message] = service.wait_for(1, timeout=10)
        message.plaintext, message.claims, message.vapid_key, message.headers, message.error

As a command:
    push_harness.py keys       one JSON line: p256dh, auth, private_key (all base64url)
    push_harness.py serve      a fake push service; the first JSON line gives url, origin,
                               p256dh and auth, then one JSON line per POST received
                               (--count N to stop after N, --status to answer with)
    push_harness.py selftest   pywebpush sends to the fake service, which must decrypt and
                               verify; plus the RFC 8291 vector and negative cases
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    import http_ece
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
    from py_vapid import jwt as vapid_jwt
except ImportError as missing:
    sys.exit(f"push_harness: {missing}; pip install http-ece py-vapid cryptography pywebpush")


def b64url_encode(data: bytes) -> str:
    """base64url without padding, as Web Push writes keys."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Either alphabet, with or without padding, as clients send them."""
    text = text.strip().replace("+", "-").replace("/", "_").rstrip("=")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class ClientKeys:
    """A push subscriber's keys: the private half stays here; p256dh and auth go into
    the push-register request."""

    private_key: ec.EllipticCurvePrivateKey
    auth_secret: bytes

    @classmethod
    def generate(cls) -> "ClientKeys":
        return cls(ec.generate_private_key(ec.SECP256R1()), os.urandom(16))

    @classmethod
    def from_base64url(cls, private_key: str, auth: str) -> "ClientKeys":
        scalar = int.from_bytes(b64url_decode(private_key), "big")
        return cls(ec.derive_private_key(scalar, ec.SECP256R1()), b64url_decode(auth))

    @property
    def public_key(self) -> bytes:
        """65 bytes: 0x04 || x || y."""
        return self.private_key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)

    @property
    def p256dh(self) -> str:
        return b64url_encode(self.public_key)

    @property
    def auth(self) -> str:
        return b64url_encode(self.auth_secret)

    def as_dict(self) -> dict:
        scalar = self.private_key.private_numbers().private_value.to_bytes(32, "big")
        return {"p256dh": self.p256dh, "auth": self.auth, "private_key": b64url_encode(scalar)}

    def decrypt(self, body: bytes) -> bytes:
        """http_ece reads salt, record size and the sender's key from the body's header."""
        return http_ece.decrypt(body, private_key=self.private_key, auth_secret=self.auth_secret,
                                version="aes128gcm")


class VapidError(Exception):
    pass


VAPID_HEADER = re.compile(r"^vapid t=(\S+?)\s*,\s*k=(\S+)$")


def verify_vapid(authorization: str) -> tuple[dict, str]:
    """The claims and the k= key of an RFC 8292 `Authorization: vapid t=..., k=...` header,
    after checking the ES256 signature; raises VapidError otherwise.

    py_vapid.jwt.decode does the check: it wants a 64-byte r||s signature (DER fails) and
    a 65-byte key. Not Vapid02.verify: it asserts unless the header is exactly
    't=...,k=...' with no space after the comma, which RFC 8292 does not require.
    """
    match = VAPID_HEADER.match(authorization.strip())
    if not match:
        raise VapidError(f"not a vapid header: {authorization!r}")
    token, key = match.group(1), match.group(2)
    parts = token.split(".")
    if len(parts) != 3:
        raise VapidError("the token is not a JWS compact serialization")
    try:
        header = json.loads(b64url_decode(parts[0]))
    except ValueError as error:
        raise VapidError(f"the JWT header is not JSON: {error}") from None
    if header.get("alg") != "ES256" or header.get("typ") != "JWT":
        raise VapidError(f"unexpected JWT header {header}")
    if len(b64url_decode(key)) != 65:
        raise VapidError("k is not a 65-byte uncompressed P-256 key")
    try:
        claims = vapid_jwt.decode(token, key)
    except InvalidSignature:
        raise VapidError("the signature does not verify against k") from None
    for name in ("aud", "exp", "sub"):
        if name not in claims:
            raise VapidError(f"the claims lack {name}: {claims}")
    return claims, key


@dataclass
class Received:
    """One POST as the fake service saw it. `error` says what failed to decrypt or
    verify; the other fields hold whatever did succeed."""

    path: str
    headers: dict
    body: bytes
    plaintext: bytes | None = None
    claims: dict | None = None
    vapid_key: str | None = None
    errors: list = field(default_factory=list)

    @property
    def error(self) -> str | None:
        return "; ".join(self.errors) or None

    def as_dict(self) -> dict:
        return {
            "path": self.path,
            "headers": self.headers,
            "body_length": len(self.body),
            "plaintext": self.plaintext.decode("utf-8", "replace") if self.plaintext is not None else None,
            "claims": self.claims,
            "vapid_key": self.vapid_key,
            "error": self.error,
        }


class FakePushService:
    """A push service on 127.0.0.1 (a free port unless told) that decrypts and verifies
    every POST, records it, and answers `status` (201 unless set per path with `answer`)."""

    def __init__(self, keys: ClientKeys, status: int = 201, host: str = "127.0.0.1", port: int = 0,
                 on_receive=None):
        self.keys = keys
        self.default_status = status
        self.answers: dict[str, tuple[int, dict]] = {}
        self.received: list[Received] = []
        self.on_receive = on_receive
        self._condition = threading.Condition()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def origin(self) -> str:
        """What the VAPID `aud` claim must be for url()."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/push/1") -> str:
        return self.origin + path

    def answer(self, path: str, status: int, headers: dict | None = None) -> None:
        self.answers[path] = (status, headers or {})

    def start(self) -> "FakePushService":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "FakePushService":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Waits until `count` POSTs have arrived or `timeout` seconds pass; returns all so far."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while len(self.received) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._condition.wait(remaining)
            return list(self.received)

    def _record(self, path: str, headers: dict, body: bytes) -> tuple[int, dict]:
        message = Received(path=path, headers=headers, body=body)
        if headers.get("content-encoding", "").lower() != "aes128gcm":
            message.errors.append(f"content-encoding is {headers.get('content-encoding')!r}, not aes128gcm")
        if "ttl" not in headers:
            message.errors.append("no TTL header (RFC 8030 requires one)")
        try:
            message.plaintext = self.keys.decrypt(body)
        except Exception as error:  # http_ece raises several kinds
            message.errors.append(f"decrypt failed: {type(error).__name__}: {error}")
        authorization = headers.get("authorization")
        if authorization is None:
            message.errors.append("no Authorization header")
        else:
            try:
                message.claims, message.vapid_key = verify_vapid(authorization)
            except VapidError as error:
                message.errors.append(f"VAPID: {error}")
        with self._condition:
            self.received.append(message)
            self._condition.notify_all()
        if self.on_receive:
            self.on_receive(message)
        return self.answers.get(path, (self.default_status, {}))

    def _handler(self):
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {name.lower(): value for name, value in self.headers.items()}
                status, extra = service._record(self.path, headers, body)
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        return Handler


# --- selftest ---------------------------------------------------------------------------

RFC8291 = {
    "as_private": "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw",
    "ua_public": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
    "ua_private": "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94",
    "auth": "BTBZMqHH6r4Tts7J_aSIgg",
    "salt": "DGv6ra1nlYgDCS1FRnbzlw",
    "plaintext": b"When I grow up, I want to be a watermelon",
    "body": "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8w"
            "EqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN",
}

MESSAGE = (b'<?xml version="1.0" encoding="utf-8"?><push-message xmlns="https://bitfire.at/webdav-push" '
           b'xmlns:D="DAV:"><topic>Xq3bR0kP2vM8tWcQe1yN7a</topic><content-update>'
           b'<D:sync-token>http://rolo/sync/42</D:sync-token></content-update></push-message>')


def selftest() -> int:
    import requests
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import utils
    from py_vapid import Vapid02
    from pywebpush import webpush

    results: list[tuple[str, str | None]] = []

    def check(name, function):
        try:
            function()
            results.append((name, None))
        except Exception as error:  # report and go on
            results.append((name, f"{type(error).__name__}: {error}"))

    def rfc_vector_encrypts():
        as_private = ec.derive_private_key(int.from_bytes(b64url_decode(RFC8291["as_private"]), "big"),
                                           ec.SECP256R1())
        body = http_ece.encrypt(RFC8291["plaintext"], salt=b64url_decode(RFC8291["salt"]), private_key=as_private,
                                dh=b64url_decode(RFC8291["ua_public"]), auth_secret=b64url_decode(RFC8291["auth"]),
                                version="aes128gcm", rs=4096)
        assert b64url_encode(body) == RFC8291["body"], b64url_encode(body)

    def rfc_vector_decrypts():
        keys = ClientKeys.from_base64url(RFC8291["ua_private"], RFC8291["auth"])
        assert keys.p256dh == RFC8291["ua_public"]
        assert keys.decrypt(b64url_decode(RFC8291["body"])) == RFC8291["plaintext"]

    def pywebpush_round_trip():
        keys = ClientKeys.generate()
        vapid = Vapid02()
        vapid.generate_keys()
        vapid_public = b64url_encode(vapid.public_key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint))
        with FakePushService(keys) as service:
            session = requests.Session()
            session.trust_env = False          # no proxy for loopback, whatever the environment says
            webpush({"endpoint": service.url("/push/self"), "keys": {"p256dh": keys.p256dh, "auth": keys.auth}},
                    data=MESSAGE.decode(), vapid_private_key=vapid, vapid_claims={"sub": "mailto:a@b.c"}, ttl=60,
                    requests_session=session)
            [message] = service.wait_for(1, timeout=5)
        assert message.error is None, message.error
        assert message.plaintext == MESSAGE, message.plaintext
        assert message.claims["aud"] == service.origin, message.claims
        assert message.claims["sub"] == "mailto:a@b.c", message.claims
        assert message.vapid_key == vapid_public
        assert message.headers["ttl"] == "60"

    def status_is_answered():
        keys = ClientKeys.generate()
        with FakePushService(keys) as service:
            service.answer("/gone", 410)
            session = requests.Session()
            session.trust_env = False
            response = session.post(service.url("/gone"), data=b"x", headers={"TTL": "0"})
            assert response.status_code == 410, response.status_code
            [message] = service.wait_for(1, timeout=5)
            assert message.plaintext is None and "decrypt failed" in message.error

    def der_signature_is_refused():
        key = ec.generate_private_key(ec.SECP256R1())
        signing_input = (b64url_encode(b'{"typ":"JWT","alg":"ES256"}') + "." +
                         b64url_encode(b'{"aud":"https://a.example","exp":9999999999,"sub":"mailto:a@b.c"}'))
        der = key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        k = b64url_encode(key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint))
        try:
            verify_vapid(f"vapid t={signing_input}.{b64url_encode(der)}, k={k}")
        except VapidError:
            pass
        else:
            raise AssertionError("a DER signature verified")
        r, s = utils.decode_dss_signature(der)
        raw = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        claims, _ = verify_vapid(f"vapid t={signing_input}.{b64url_encode(raw)}, k={k}")
        assert claims["aud"] == "https://a.example"

    def another_key_is_refused():
        vapid = Vapid02()
        vapid.generate_keys()
        token = vapid_jwt.sign({"aud": "https://a.example", "exp": 9999999999, "sub": "mailto:a@b.c"},
                               vapid.private_key)
        stranger = b64url_encode(ec.generate_private_key(ec.SECP256R1()).public_key()
                                 .public_bytes(Encoding.X962, PublicFormat.UncompressedPoint))
        try:
            verify_vapid(f"vapid t={token}, k={stranger}")
        except VapidError:
            return
        raise AssertionError("a token verified against another key")

    def wrong_client_cannot_decrypt():
        sender_keys, stranger = ClientKeys.generate(), ClientKeys.generate()
        body = http_ece.encrypt(MESSAGE, private_key=ec.generate_private_key(ec.SECP256R1()),
                                dh=sender_keys.public_key, auth_secret=sender_keys.auth_secret, version="aes128gcm")
        assert sender_keys.decrypt(body) == MESSAGE
        try:
            stranger.decrypt(body)
        except Exception:
            return
        raise AssertionError("another client decrypted the message")

    for name, function in [
        ("rfc8291 vector encrypts", rfc_vector_encrypts),
        ("rfc8291 vector decrypts", rfc_vector_decrypts),
        ("pywebpush to the fake service decrypts and verifies", pywebpush_round_trip),
        ("fake service answers the configured status", status_is_answered),
        ("a DER signature is refused, raw r||s accepted", der_signature_is_refused),
        ("a token checked against another key is refused", another_key_is_refused),
        ("another client cannot decrypt", wrong_client_cannot_decrypt),
    ]:
        check(name, function)

    failed = [(name, error) for name, error in results if error]
    for name, error in results:
        print(f"{'ok  ' if error is None else 'FAIL'} {name}" + (f": {error}" if error else ""))
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


# --- command line -----------------------------------------------------------------------

def serve(arguments) -> int:
    keys = (ClientKeys.from_base64url(arguments.private_key, arguments.auth)
            if arguments.private_key else ClientKeys.generate())
    done = threading.Event()
    count = 0

    def on_receive(message: Received):
        nonlocal count
        print(json.dumps(message.as_dict()), flush=True)
        count += 1
        if arguments.count and count >= arguments.count:
            done.set()

    with FakePushService(keys, status=arguments.status, port=arguments.port, on_receive=on_receive) as service:
        print(json.dumps({"url": service.url(arguments.path), "origin": service.origin, **keys.as_dict()}),
              flush=True)
        if not done.wait(arguments.timeout or None):
            print(json.dumps({"timeout": True, "received": count}), flush=True)
            return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("keys", help="print a new client key pair and auth secret")
    serve_parser = commands.add_parser("serve", help="run a fake push service")
    serve_parser.add_argument("--port", type=int, default=0)
    serve_parser.add_argument("--path", default="/push/1", help="path of the URL printed first")
    serve_parser.add_argument("--status", type=int, default=201)
    serve_parser.add_argument("--count", type=int, default=0, help="stop after this many POSTs")
    serve_parser.add_argument("--timeout", type=float, default=0, help="give up after this many seconds")
    serve_parser.add_argument("--private-key", help="base64url client private key (from 'keys')")
    serve_parser.add_argument("--auth", help="base64url auth secret, with --private-key")
    commands.add_parser("selftest", help="check the harness against pywebpush and RFC 8291")
    arguments = parser.parse_args(argv)
    if arguments.command == "keys":
        print(json.dumps(ClientKeys.generate().as_dict()))
        return 0
    if arguments.command == "serve":
        if bool(arguments.private_key) != bool(arguments.auth):
            parser.error("--private-key and --auth go together")
        return serve(arguments)
    return selftest()


if __name__ == "__main__":
    sys.exit(main())
