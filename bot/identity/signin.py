"""Sign-in for ``/docs`` links with the company's OpenID Connect provider.

Sign in with Slack and Microsoft Entra ID are both standard OIDC providers. The flow is the
authorization-code flow with ``state``, ``nonce`` and PKCE:

1. ``GET /docs/…`` with a valid link but no session: 302 to the provider's authorize endpoint
   (found through ``{issuer}/.well-known/openid-configuration``). A signed cookie, named after the
   ``state`` and scoped to the callback, remembers the nonce, the PKCE verifier and the link.
2. ``GET /auth/callback?code=…&state=…``: the cookie must match the state; the code is exchanged
   at the token endpoint; the ID token's signature is checked against the provider's JWKS, and its
   ``iss``, ``aud``, ``exp`` and ``nonce`` against what was sent.
3. A signed session cookie (HttpOnly, SameSite=Lax, Secure when the public URL is https) names the
   signed-in e-mail for ``session_ttl_s``; the browser returns to the link, and ``docs_route``
   shows the page only if THAT person may read it.

Junk at the callback is a 4xx; an unreachable or misbehaving provider is a 502.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import aiohttp
import jwt
from aiohttp import web

from bot.settings import OIDCSettings
from bot.web.pages import html_page

log = logging.getLogger(__name__)

CALLBACK_PATH = "/auth/callback"
SESSION_COOKIE = "footnote_session"
FLOW_COOKIE_PREFIX = "footnote_signin_"  # + state: two tabs signing in at once do not collide
FLOW_TTL_S = 600  # time to finish signing in at the provider
SESSION_AUDIENCE = "footnote-session"
FLOW_AUDIENCE = "footnote-signin"
# Asymmetric algorithms only: "none" and HS* (keyed with the client secret) are never accepted.
ID_TOKEN_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
LEEWAY_S = 60  # clock difference allowed with the provider
DISCOVERY_TTL_S = 3600
JWKS_REFRESH_S = 30  # an unknown key id refetches the JWKS at most this often (key rotation)
_STATE = re.compile(r"[A-Za-z0-9_-]{32}")
MAX_CODE_CHARS = 4096
MAX_COOKIE_CHARS = 4096


class SignInFailed(Exception):
    """The sign-in cannot go on; the status and words become the page the reader sees."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message

    def page(self) -> web.Response:
        title = "Sign-in unavailable" if self.status >= 500 else "Sign-in failed"
        return html_page(title, f"<h1>{title}</h1><p>{self.message}</p>", self.status)


AGAIN = "Open the source again from the chat."


@dataclass(frozen=True)
class Provider:
    """What discovery told us about the provider."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    basic_auth: bool  # client_secret_basic (the default) or client_secret_post
    algorithms: tuple[str, ...]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


class SignIn:
    """One OIDC client: starts sign-ins, finishes them at the callback, reads sessions."""

    def __init__(self, oidc: OIDCSettings, public_url: str, key: bytes):
        self.oidc = oidc
        self.public_url = public_url.rstrip("/")
        self.redirect_uri = self.public_url + CALLBACK_PATH
        self.secure = self.public_url.startswith("https://")
        self._key = key  # signs the two cookies (derived from the link secret)
        self._http: aiohttp.ClientSession | None = None
        self._provider: tuple[float, Provider] | None = None
        self._jwks: tuple[float, jwt.PyJWKSet] | None = None

    # ── sessions ─────────────────────────────────────────────────────────────────────────────

    def reader(self, request: web.Request) -> str | None:
        """The e-mail of the signed-in reader, from a valid, unexpired session cookie."""
        value = request.cookies.get(SESSION_COOKIE, "")
        if not value or len(value) > MAX_COOKIE_CHARS:
            return None
        try:
            claims = jwt.decode(
                value,
                self._key,
                algorithms=["HS256"],
                audience=SESSION_AUDIENCE,
                issuer=self.oidc.issuer,
                options={"require": ["exp", "iss", "aud", "email"]},
            )
        except jwt.PyJWTError:
            return None
        email = claims["email"]
        return email if isinstance(email, str) else None

    def _set_cookie(self, response: web.StreamResponse, name: str, value: str, **kw: Any) -> None:
        response.set_cookie(name, value, httponly=True, samesite="Lax", secure=self.secure, **kw)

    # ── step 1: send the reader to the provider ──────────────────────────────────────────────

    async def challenge(self, request: web.Request) -> web.Response:
        """302 to the provider's sign-in, remembering (signed) where to come back to."""
        try:
            provider = await self.provider()
        except SignInFailed as exc:
            return exc.page()
        state = secrets.token_urlsafe(24)
        nonce = secrets.token_urlsafe(24)
        verifier = secrets.token_urlsafe(48)
        now = int(time.time())
        flow = jwt.encode(
            {
                "aud": FLOW_AUDIENCE,
                "exp": now + FLOW_TTL_S,
                "state": state,
                "nonce": nonce,
                "verifier": verifier,
                "next": str(request.rel_url),
            },
            self._key,
            algorithm="HS256",
        )
        params = {
            "response_type": "code",
            "client_id": self.oidc.client_id,
            "redirect_uri": self.redirect_uri,
            "scope": " ".join(self.oidc.scopes),
            "state": state,
            "nonce": nonce,
            "code_challenge": _b64(hashlib.sha256(verifier.encode()).digest()),
            "code_challenge_method": "S256",
        }
        endpoint = provider.authorization_endpoint
        location = f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(params)}"
        response = web.Response(
            status=302, headers={"Location": location, "Cache-Control": "no-store"}
        )
        self._set_cookie(
            response, FLOW_COOKIE_PREFIX + state, flow, max_age=FLOW_TTL_S, path=CALLBACK_PATH
        )
        return response

    # ── step 2: the provider sends the reader back ───────────────────────────────────────────

    async def callback(self, request: web.Request) -> web.Response:
        """``GET /auth/callback``: check state, exchange the code, verify the ID token, start a session."""
        try:
            return await self._callback(request)
        except SignInFailed as exc:
            return exc.page()

    async def _callback(self, request: web.Request) -> web.Response:
        query = request.query
        if any(len(query.getall(name)) > 1 for name in query):
            raise SignInFailed(400, f"The sign-in answer was damaged. {AGAIN}")
        if "error" in query:
            raise SignInFailed(403, f"The sign-in did not complete. {AGAIN}")
        code, state = query.get("code", ""), query.get("state", "")
        if not (0 < len(code) <= MAX_CODE_CHARS and _STATE.fullmatch(state)):
            raise SignInFailed(400, f"The sign-in answer was damaged. {AGAIN}")
        flow = self._flow(request, state)
        provider = await self.provider()
        id_token = await self._exchange(provider, code, flow["verifier"])
        claims = await self._verify_id_token(provider, id_token, flow["nonce"])
        email = claims.get(self.oidc.email_claim)
        if not (isinstance(email, str) and "@" in email and len(email) <= 320):
            log.warning(
                "the ID token has no e-mail in claim %r; set FOOTNOTE_SERVER__OIDC__EMAIL_CLAIM",
                self.oidc.email_claim,
            )
            raise SignInFailed(403, "Your sign-in did not say who you are (no e-mail address).")
        if claims.get("email_verified") is False:
            raise SignInFailed(
                403, "Your e-mail address is not verified with the sign-in provider."
            )
        now = int(time.time())
        session = jwt.encode(
            {
                "aud": SESSION_AUDIENCE,
                "iss": self.oidc.issuer,
                "iat": now,
                "exp": now + self.oidc.session_ttl_s,
                "sub": str(claims["sub"]),
                "email": email,
            },
            self._key,
            algorithm="HS256",
        )
        response = web.Response(
            status=302, headers={"Location": flow["next"], "Cache-Control": "no-store"}
        )
        self._set_cookie(
            response, SESSION_COOKIE, session, max_age=self.oidc.session_ttl_s, path="/docs"
        )
        response.del_cookie(FLOW_COOKIE_PREFIX + state, path=CALLBACK_PATH)
        return response

    def _flow(self, request: web.Request, state: str) -> dict:
        """The signed cookie this browser got when its sign-in began; it must carry this state."""
        value = request.cookies.get(FLOW_COOKIE_PREFIX + state, "")
        try:
            if not value or len(value) > MAX_COOKIE_CHARS:
                raise jwt.InvalidTokenError("no sign-in cookie")
            flow = jwt.decode(
                value,
                self._key,
                algorithms=["HS256"],
                audience=FLOW_AUDIENCE,
                options={"require": ["exp", "aud", "state", "nonce", "verifier", "next"]},
            )
        except jwt.PyJWTError as exc:
            raise SignInFailed(
                400,
                "This sign-in expired or began in another browser. " + AGAIN,
            ) from exc
        next_url = flow["next"]
        if not (
            hmac.compare_digest(str(flow["state"]), state)
            and isinstance(next_url, str)
            and next_url.startswith("/docs/")
        ):
            raise SignInFailed(400, f"The sign-in answer was damaged. {AGAIN}")
        return flow

    # ── the provider ─────────────────────────────────────────────────────────────────────────

    def _client(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        return self._http

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()

    async def _get_json(self, url: str, what: str) -> dict:
        try:
            async with self._client().get(url, headers={"Accept": "application/json"}) as resp:
                body = await resp.json(content_type=None) if resp.status == 200 else None
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            log.warning("the sign-in provider's %s at %s failed: %s", what, url, exc)
            body = None
        if not isinstance(body, dict):
            raise SignInFailed(502, "The sign-in provider cannot be reached. Try again shortly.")
        return body

    async def provider(self) -> Provider:
        """Discovery, cached for an hour; its issuer must be the configured one (OIDC Discovery §4.3)."""
        if self._provider is not None and time.monotonic() - self._provider[0] < DISCOVERY_TTL_S:
            return self._provider[1]
        url = self.oidc.issuer + "/.well-known/openid-configuration"
        doc = await self._get_json(url, "discovery document")
        endpoints = [doc.get(k) for k in ("authorization_endpoint", "token_endpoint", "jwks_uri")]
        plain_ok = self.oidc.issuer.startswith("http://")  # a loopback issuer (checked in settings)
        if doc.get("issuer") != self.oidc.issuer or not all(
            isinstance(e, str)
            and (e.startswith("https://") or (plain_ok and e.startswith("http://")))
            for e in endpoints
        ):
            log.warning(
                "the discovery document at %s does not describe issuer %s with https endpoints; "
                "check FOOTNOTE_SERVER__OIDC__ISSUER",
                url,
                self.oidc.issuer,
            )
            raise SignInFailed(502, "The sign-in provider is misconfigured. Tell your admin.")
        methods = doc.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        offered = doc.get("id_token_signing_alg_values_supported") or ["RS256"]
        algorithms = tuple(a for a in ID_TOKEN_ALGORITHMS if a in offered)
        if not algorithms:
            log.warning("the provider signs ID tokens only with %s; none is accepted", offered)
            raise SignInFailed(502, "The sign-in provider is misconfigured. Tell your admin.")
        provider = Provider(
            issuer=self.oidc.issuer,
            authorization_endpoint=str(endpoints[0]),
            token_endpoint=str(endpoints[1]),
            jwks_uri=str(endpoints[2]),
            basic_auth="client_secret_basic" in methods or "client_secret_post" not in methods,
            algorithms=algorithms,
        )
        self._provider = (time.monotonic(), provider)
        return provider

    async def _exchange(self, provider: Provider, code: str, verifier: str) -> str:
        """The authorization code for an ID token, at the token endpoint."""
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": verifier,
        }
        headers = {"Accept": "application/json"}
        secret = self.oidc.client_secret.get_secret_value()
        if provider.basic_auth:  # RFC 6749 §2.3.1: each part form-encoded, then base64
            pair = f"{quote(self.oidc.client_id, safe='')}:{quote(secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form |= {"client_id": self.oidc.client_id, "client_secret": secret}
        try:
            async with self._client().post(
                provider.token_endpoint, data=form, headers=headers
            ) as resp:
                status = resp.status
                body = await resp.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            log.warning("the token endpoint %s failed: %s", provider.token_endpoint, exc)
            raise SignInFailed(502, "The sign-in provider cannot be reached. Try again.") from exc
        if status != 200 or not isinstance(body, dict):
            error = body.get("error") if isinstance(body, dict) else None
            log.warning("the token endpoint refused the code: HTTP %s %s", status, error)
            if 400 <= status < 500:
                raise SignInFailed(
                    403, f"The sign-in provider did not accept this sign-in. {AGAIN}"
                )
            raise SignInFailed(502, "The sign-in provider cannot be reached. Try again.")
        token = body.get("id_token")
        if not isinstance(token, str):
            raise SignInFailed(403, "The sign-in provider sent no ID token.")
        return token

    async def _keys(self, provider: Provider, refresh: bool) -> jwt.PyJWKSet | None:
        age = time.monotonic() - self._jwks[0] if self._jwks is not None else None
        if self._jwks is not None and not (refresh and age is not None and age > JWKS_REFRESH_S):
            return self._jwks[1]
        doc = await self._get_json(provider.jwks_uri, "key set (JWKS)")
        try:
            keys = jwt.PyJWKSet.from_dict(doc)
        except (jwt.PyJWTError, ValueError, TypeError, KeyError) as exc:
            log.warning("the provider's JWKS holds no usable key: %s", exc)
            return None
        self._jwks = (time.monotonic(), keys)
        return keys

    async def _signing_key(self, provider: Provider, kid: object) -> Any:
        for refresh in (False, True):  # an unknown kid: the provider may have rotated its keys
            keys = await self._keys(provider, refresh)
            usable = [k for k in (keys.keys if keys else []) if k.public_key_use in (None, "sig")]
            found = [k for k in usable if k.key_id == kid] if kid is not None else usable
            if len(found) == 1:
                return found[0].key
        raise SignInFailed(403, f"The sign-in could not be verified. {AGAIN}")

    async def _verify_id_token(self, provider: Provider, token: str, nonce: str) -> dict:
        """Signature (provider's JWKS), issuer, audience, expiry and our nonce — or a 403."""
        failed = SignInFailed(403, f"The sign-in could not be verified. {AGAIN}")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise failed from exc
        alg = header.get("alg")
        if alg not in provider.algorithms:
            log.warning("an ID token signed with %r was refused", alg)
            raise failed
        key = await self._signing_key(provider, header.get("kid"))
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[str(alg)],
                audience=self.oidc.client_id,
                issuer=provider.issuer,
                leeway=LEEWAY_S,
                options={"require": ["iss", "aud", "exp", "iat", "sub", "nonce"]},
            )
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            log.warning("an ID token was refused: %s", exc)
            raise failed from exc
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if not hmac.compare_digest(str(claims["nonce"]), nonce) or (
            len(audiences) > 1 and claims.get("azp") != self.oidc.client_id
        ):
            log.warning("an ID token with a wrong nonce or azp was refused")
            raise failed
        return claims
