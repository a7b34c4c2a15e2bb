"""A loopback OpenID Connect provider that speaks the real wire format (OIDC Core 1.0, Discovery
1.0, RFC 7636 PKCE): discovery document, JWKS with a locally generated RSA key, an authorize
endpoint that signs in whoever the test says and redirects back with a code, and a token endpoint
that checks the client, the redirect URI and the PKCE verifier before it returns an ID token.

``sign_in_as(email)`` picks who the next sign-in is; ``tamper`` bends the next ID token (a wrong
key, audience, nonce, issuer or expiry) the way an attacker or a broken provider would.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode

import jwt
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.e2e.conftest import free_port

CLIENT_ID = "footnote-test-client"
CLIENT_SECRET = "client-secret/with:odd+chars"


def new_rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class Grant:
    email: str
    nonce: str
    redirect_uri: str
    challenge: str


@dataclass
class OIDCProvider:
    key: rsa.RSAPrivateKey = field(default_factory=new_rsa_key)
    kid: str = "test-key-1"
    email: str = ""  # who signs in next
    tamper: dict[str, Any] = field(default_factory=dict)
    grants: dict[str, Grant] = field(default_factory=dict)
    token_requests: list[dict] = field(default_factory=list)
    port: int = field(default_factory=free_port)
    _runner: web.AppRunner | None = None

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def sign_in_as(self, email: str) -> None:
        self.email = email

    async def start(self) -> OIDCProvider:
        app = web.Application()
        app.router.add_get("/.well-known/openid-configuration", self.discovery)
        app.router.add_get("/jwks", self.jwks)
        app.router.add_get("/authorize", self.authorize)
        app.router.add_post("/token", self.token)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def discovery(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "issuer": self.issuer,
                "authorization_endpoint": self.issuer + "/authorize",
                "token_endpoint": self.issuer + "/token",
                "jwks_uri": self.issuer + "/jwks",
                "response_types_supported": ["code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "scopes_supported": ["openid", "email", "profile"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                "code_challenge_methods_supported": ["S256"],
            }
        )

    async def jwks(self, request: web.Request) -> web.Response:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return web.json_response(
            {"keys": [public | {"kid": self.kid, "use": "sig", "alg": "RS256"}]}
        )

    async def authorize(self, request: web.Request) -> web.Response:
        q = request.query
        if (
            q.get("response_type") != "code"
            or q.get("client_id") != CLIENT_ID
            or "openid" not in q.get("scope", "").split()
            or q.get("code_challenge_method") != "S256"
            or not q.get("state")
            or not q.get("nonce")
        ):
            return web.Response(status=400, text="invalid_request")
        code = secrets.token_urlsafe(16)
        self.grants[code] = Grant(self.email, q["nonce"], q["redirect_uri"], q["code_challenge"])
        back = f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q['state']})}"
        raise web.HTTPFound(back)

    def _client_ok(self, request: web.Request) -> bool:
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Basic "):
            return False
        user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
        return unquote(user) == CLIENT_ID and unquote(password) == CLIENT_SECRET

    async def token(self, request: web.Request) -> web.Response:
        form = {k: v[0] for k, v in parse_qs(await request.text()).items()}
        self.token_requests.append(form)
        if not self._client_ok(request):
            return web.json_response({"error": "invalid_client"}, status=401)
        grant = self.grants.pop(form.get("code", ""), None)  # single use
        verifier = form.get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
        if (
            form.get("grant_type") != "authorization_code"
            or grant is None
            or form.get("redirect_uri") != grant.redirect_uri
            or challenge.decode().rstrip("=") != grant.challenge
        ):
            return web.json_response({"error": "invalid_grant"}, status=400)
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": "sub-" + grant.email,
            "aud": CLIENT_ID,
            "iat": now,
            "exp": now + 300,
            "nonce": grant.nonce,
            "email": grant.email,
            "email_verified": True,
        }
        claims |= {k: v for k, v in self.tamper.items() if k != "key"}
        claims = {k: v for k, v in claims.items() if v is not None}  # tamper {"x": None} drops x
        key = self.tamper.get("key", self.key)
        id_token = jwt.encode(claims, key, algorithm="RS256", headers={"kid": self.kid})
        return web.json_response(
            {
                "access_token": secrets.token_urlsafe(16),
                "token_type": "Bearer",
                "id_token": id_token,
            }
        )
