"""A small LTI 1.3 platform (an LMS's side of the protocol) for the ``lms`` tests, on 127.0.0.1.

Real keys and real signatures: an RSA key made per run signs the ``id_token``s (RS256) and is
published at ``/jwks``; the tool's client-credentials assertions are verified against the tool's
public key.  Endpoints (IMS Security Framework 1.0, LTI 1.3, AGS 2.0):

* ``GET /jwks`` — the platform's JSON Web Key Set;
* ``GET /auth`` — the OIDC authentication request: checks ``client_id``, ``redirect_uri``,
  ``response_type=id_token``, ``response_mode=form_post``, ``scope=openid`` and answers with the
  auto-submitting form (``id_token``, ``state``) a browser would post to the tool;
* ``POST /token`` — the client-credentials grant with a ``jwt-bearer`` client assertion signed by
  the tool (issuer = subject = client id, audience = this URL, unexpired, unused ``jti``);
* ``GET/POST /lineitems``, ``POST /lineitems/<n>/scores`` — AGS line items and scores, only with
  a bearer token holding the needed scope.

``users`` maps a ``login_hint`` to the claims of that person's launch; ``forge`` set by a test
changes how the next ``id_token`` is made (``tampered``, ``expired``, ``wrong_audience``,
``other_key``) to prove the tool refuses it.
"""
from __future__ import annotations

import base64
import html
import json
import secrets
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
LEARNER, INSTRUCTOR = f"{MEMBERSHIP}#Learner", f"{MEMBERSHIP}#Instructor"
TA = f"{MEMBERSHIP}/Instructor#TeachingAssistant"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"


def new_key() -> rsa.RSAPrivateKey:
    """A fresh 2048-bit RSA key."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(key: rsa.RSAPrivateKey) -> bytes:
    """``key`` as unencrypted PKCS#8 PEM."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class Platform:
    """The platform; ``start()`` serves it on a free loopback port, ``stop()`` ends it."""

    def __init__(self, client_id: str, redirect_uri: str, tool_public_key, deployment_id: str = "dep-1"):
        self.key, self.kid = new_key(), uuid.uuid4().hex
        self.client_id, self.redirect_uri, self.deployment_id = client_id, redirect_uri, deployment_id
        self.tool_public_key = tool_public_key
        self.users: dict[str, dict] = {}
        self.forge: str | None = None
        self.tokens: dict[str, set[str]] = {}
        self.used_jti: set[str] = set()
        self.lineitems: list[dict] = []
        self.scores: dict[str, list[dict]] = {}  # lineitem id → scores received
        self.refused: list[str] = []
        self._server: ThreadingHTTPServer | None = None

    # ------------------------------------------------------------------ server
    def start(self) -> "Platform":
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                platform._dispatch(self, "GET")

            def do_POST(self):
                platform._dispatch(self, "POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def issuer(self) -> str:
        return self.url

    def jwks(self) -> dict:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**jwk, "kid": self.kid, "alg": "RS256", "use": "sig"}]}

    # ------------------------------------------------------------------ handlers
    def _dispatch(self, h: BaseHTTPRequestHandler, method: str) -> None:
        url = urlparse(h.path)
        body = h.rfile.read(int(h.headers.get("Content-Length") or 0)) if method == "POST" else b""
        try:
            if url.path == "/jwks" and method == "GET":
                return self._send(h, 200, self.jwks())
            if url.path == "/auth" and method == "GET":
                return self._auth(h, {k: v[0] for k, v in parse_qs(url.query).items()})
            if url.path == "/token" and method == "POST":
                return self._token(h, {k: v[0] for k, v in parse_qs(body.decode()).items()})
            if url.path.startswith("/lineitems"):
                return self._ags(h, method, url.path, body)
            self._send(h, 404, {"error": "not found"})
        except Exception as err:  # noqa: BLE001 - a test server answers 500 and records why
            self.refused.append(f"{url.path}: {err!r}")
            self._send(h, 500, {"error": repr(err)})

    def _send(self, h, code: int, body, ctype: str = "application/json") -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        h.send_response(code)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _refuse(self, h, code: int, why: str) -> None:
        self.refused.append(why)
        self._send(h, code, {"error": why})

    def _auth(self, h, q: dict) -> None:
        expect = {"response_type": "id_token", "response_mode": "form_post", "scope": "openid",
                  "client_id": self.client_id, "redirect_uri": self.redirect_uri}
        for k, v in expect.items():
            if q.get(k) != v:
                return self._refuse(h, 400, f"auth request: {k}={q.get(k)!r}, expected {v!r}")
        user = self.users.get(q.get("login_hint", ""))
        if user is None:
            return self._refuse(h, 400, "auth request: unknown login_hint")
        token = self.id_token(user, q["nonce"])
        form = (f'<form method="post" action="{html.escape(q["redirect_uri"])}">'
                f'<input type="hidden" name="id_token" value="{html.escape(token)}">'
                f'<input type="hidden" name="state" value="{html.escape(q["state"])}"></form>')
        self._send(h, 200, form, "text/html")

    def id_token(self, user: dict, nonce: str) -> str:
        """A signed launch ``id_token`` (LtiResourceLinkRequest) for ``user``'s claims."""
        now = int(time.time())
        claims = {
            "iss": self.issuer, "aud": self.client_id, "iat": now, "exp": now + 300, "nonce": nonce,
            "https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiResourceLinkRequest",
            "https://purl.imsglobal.org/spec/lti/claim/version": "1.3.0",
            "https://purl.imsglobal.org/spec/lti/claim/deployment_id": self.deployment_id,
            "https://purl.imsglobal.org/spec/lti/claim/target_link_uri": self.redirect_uri,
            "https://purl.imsglobal.org/spec/lti/claim/resource_link": {"id": "rl-1"},
            "https://purl.imsglobal.org/spec/lti/claim/context": {"id": "ctx-1", "label": "ATTN", "title": "Attention"},
            "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": {
                "scope": [LINEITEM_SCOPE, SCORE_SCOPE], "lineitems": f"{self.url}/lineitems"},
            **user,
        }
        key, kid = self.key, self.kid
        if self.forge == "expired":
            claims.update(iat=now - 3600, exp=now - 3000)
        elif self.forge == "wrong_audience":
            claims["aud"] = "some-other-tool"
        elif self.forge == "other_key":
            key = new_key()  # same kid, a key the JWKS does not hold
        token = jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})
        if self.forge == "tampered":  # a Learner who rewrote the payload to say Instructor
            head, payload, sig = token.split(".")
            body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            body["https://purl.imsglobal.org/spec/lti/claim/roles"] = [INSTRUCTOR]
            payload = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
            token = ".".join([head, payload, sig])
        return token

    def _token(self, h, form: dict) -> None:
        if form.get("grant_type") != "client_credentials" or form.get("client_assertion_type") != \
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            return self._refuse(h, 400, "token: not a client_credentials jwt-bearer grant")
        try:
            claims = jwt.decode(form.get("client_assertion", ""), self.tool_public_key, algorithms=["RS256"],
                                audience=f"{self.url}/token", issuer=self.client_id,
                                options={"require": ["exp", "iat", "jti", "sub"]})
        except jwt.PyJWTError as err:
            return self._refuse(h, 401, f"token: client assertion refused: {err}")
        if claims["sub"] != self.client_id or claims["jti"] in self.used_jti:
            return self._refuse(h, 401, "token: wrong subject or a replayed assertion")
        self.used_jti.add(claims["jti"])
        token = secrets.token_urlsafe(24)
        self.tokens[token] = set(form.get("scope", "").split())
        self._send(h, 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600,
                            "scope": form.get("scope", "")})

    def _ags(self, h, method: str, path: str, body: bytes) -> None:
        auth = h.headers.get("Authorization", "")
        scopes = self.tokens.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
        if scopes is None:
            return self._refuse(h, 401, f"{path}: no valid bearer token")
        parts = path.strip("/").split("/")
        if parts == ["lineitems"] and method == "GET":
            if LINEITEM_SCOPE not in scopes:
                return self._refuse(h, 403, "lineitems: scope missing")
            return self._send(h, 200, self.lineitems, "application/vnd.ims.lis.v2.lineitemcontainer+json")
        if parts == ["lineitems"] and method == "POST":
            if LINEITEM_SCOPE not in scopes or h.headers.get("Content-Type") != "application/vnd.ims.lis.v2.lineitem+json":
                return self._refuse(h, 403, "lineitems: scope or content type wrong")
            item = json.loads(body)
            item["id"] = f"{self.url}/lineitems/{len(self.lineitems) + 1}"
            self.lineitems.append(item)
            return self._send(h, 201, item, "application/vnd.ims.lis.v2.lineitem+json")
        if len(parts) == 3 and parts[0] == "lineitems" and parts[2] == "scores" and method == "POST":
            if SCORE_SCOPE not in scopes or h.headers.get("Content-Type") != "application/vnd.ims.lis.v1.score+json":
                return self._refuse(h, 403, "scores: scope or content type wrong")
            item_id = f"{self.url}/lineitems/{parts[1]}"
            if not any(i["id"] == item_id for i in self.lineitems):
                return self._refuse(h, 404, "scores: no such line item")
            score = json.loads(body)
            for k in ("userId", "scoreGiven", "scoreMaximum", "activityProgress", "gradingProgress", "timestamp"):
                if k not in score:
                    return self._refuse(h, 400, f"scores: {k} missing")
            self.scores.setdefault(item_id, []).append(score)
            return self._send(h, 204, "")
        self._refuse(h, 404, f"{method} {path}: not an AGS endpoint here")
