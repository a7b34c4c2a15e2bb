"""Who may open ``/admin``, and how they get in: a sign-in link sent in a DM, then a session cookie.

1. An admin writes "admin" to the bot in a direct message (Slack) or personal chat (Teams). If
   the directory puts them in one of ``FOOTNOTE_ADMIN_GROUPS``, the bot answers with a link
   ``{public_url}/admin/signin?t=…``: a token signed with a key derived from the link secret,
   naming the person, expiring after ``FOOTNOTE_SERVER__ADMIN_LINK_TTL_S`` (10 min). Anyone else
   gets a polite refusal and no link.
2. Opening the link shows a "Continue" button (link previewers that fetch a URL do not use it
   up); pressing it spends the link — its id is written to Redis with ``SET NX``, so a second use
   fails — and sets a session cookie (HttpOnly, SameSite=Strict, Secure when the public URL is
   https, path ``/admin``) valid for ``FOOTNOTE_SERVER__ADMIN_SESSION_TTL_S`` (8 h).
3. Every request re-reads the person from the directory: someone who left the admin group is
   out at their next click. Every POST carries a CSRF token bound to the session. Signing out
   revokes the session in Redis until it would have expired, so a copied cookie dies with it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlencode

import jwt
from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.identity.directory import Directory, DirectoryUnavailable, Person

SESSION_COOKIE = "footnote_admin"
LINK_AUDIENCE = "footnote-admin-link"
SESSION_AUDIENCE = "footnote-admin-session"
SIGNIN_PATH = "/admin/signin"
MAX_TOKEN_CHARS = 2048
LEEWAY_S = 30  # replicas' clocks may differ this much

LinkVerdict = Literal["ok", "expired", "invalid", "used", "not_admin", "unavailable"]

ADMIN_COMMANDS = ("admin", "/footnote admin", "footnote admin")
ADMIN_LINK = (
    "Here is your sign-in link to the admin page. It works once, for {minutes} minutes, "
    "and only for you — don't share it:\n{link}"
)
ADMIN_REFUSED = (
    "Sorry, the admin page is only for members of the admin group. "
    "If you need access, ask the person who runs Footnote."
)

ADMIN_LINK_SENT = "I've sent you a sign-in link to the admin page in a direct message."
ADMIN_OFF = (
    "The admin page is not turned on here. If you need it, ask the person who runs Footnote."
)


def is_admin_request(text: str) -> bool:
    """A chat message that asks for the admin link (``admin``, ``/footnote admin``)."""
    return " ".join(text.lower().split()) in ADMIN_COMMANDS


@dataclass(frozen=True)
class Session:
    person: Person
    csrf: str  # the token every POST of this session must carry
    session_id: str = ""
    expires: float = 0.0


class AdminAccess:
    """Signs sign-in links and session cookies; decides, per request, who is an admin."""

    def __init__(
        self,
        *,
        key: bytes,
        public_url: str,
        directory: Directory,
        admin_groups: Sequence[str],
        redis: Redis,
        redis_prefix: str = "footnote:",
        link_ttl_s: int = 600,
        session_ttl_s: int = 8 * 3600,
        clock: Callable[[], float] = time.time,
    ):
        self._key = key
        self._csrf_key = hmac.new(key, b"footnote/admin-csrf", hashlib.sha256).digest()
        self.public_url = public_url.rstrip("/")
        self.secure = self.public_url.startswith("https://")
        self.directory = directory
        self.admin_groups = frozenset(admin_groups)
        self.redis, self.used_prefix = redis, redis_prefix + "admin-link-used:"
        self.revoked_prefix = redis_prefix + "admin-session-revoked:"
        self.link_ttl_s, self.session_ttl_s = link_ttl_s, session_ttl_s
        self.clock = clock

    # ── who ──────────────────────────────────────────────────────────────────────────────────

    def is_admin(self, person: Person | None) -> bool:
        return person is not None and bool(self.admin_groups.intersection(person.groups))

    def admin(self, user_id: str) -> Person | None:
        """The directory's entry for ``user_id`` if it is (still) an admin."""
        person = self.directory.find(user_id)
        if person is None or person.user_id != user_id or not self.is_admin(person):
            return None
        return person

    # ── sign-in links ────────────────────────────────────────────────────────────────────────

    def link(self, user_id: str) -> str:
        now = int(self.clock())
        token = jwt.encode(
            {
                "sub": user_id,
                "aud": LINK_AUDIENCE,
                "iat": now,
                "exp": now + self.link_ttl_s,
                "jti": secrets.token_urlsafe(16),
            },
            self._key,
            algorithm="HS256",
        )
        return f"{self.public_url}{SIGNIN_PATH}?{urlencode({'t': token})}"

    def _claims(self, token: str, audience: str) -> dict | Literal["expired", "invalid"]:
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS:
            return "invalid"
        try:
            claims = jwt.decode(
                token,
                self._key,
                algorithms=["HS256"],
                audience=audience,
                leeway=0,
                options={"require": ["exp", "sub", "aud", "jti"]},
            )
        except jwt.ExpiredSignatureError:
            return "expired"
        except jwt.PyJWTError:
            return "invalid"
        if not isinstance(claims.get("sub"), str) or not isinstance(claims.get("jti"), str):
            return "invalid"
        now = self.clock()
        if claims["exp"] < now:
            return "expired"
        ttl = self.link_ttl_s if audience == LINK_AUDIENCE else self.session_ttl_s
        if claims["exp"] > now + ttl + LEEWAY_S:  # signed under an older, longer TTL
            return "expired"
        return claims

    def check_link(self, token: str) -> tuple[LinkVerdict, Person | None]:
        """Whether a sign-in link is good, without spending it."""
        claims = self._claims(token, LINK_AUDIENCE)
        if isinstance(claims, str):
            return claims, None
        try:
            person = self.admin(claims["sub"])
        except DirectoryUnavailable:
            return "unavailable", None
        return ("ok", person) if person else ("not_admin", None)

    async def spend_link(self, token: str) -> tuple[LinkVerdict, str]:
        """Use a sign-in link up: the session cookie's value, or why not."""
        claims = self._claims(token, LINK_AUDIENCE)
        if isinstance(claims, str):
            return claims, ""
        try:
            if await asyncio.to_thread(self.admin, claims["sub"]) is None:
                return "not_admin", ""
        except DirectoryUnavailable:
            return "unavailable", ""
        ttl = max(1, int(claims["exp"] - self.clock()) + LEEWAY_S)
        try:
            fresh = await self.redis.set(self.used_prefix + claims["jti"], "1", nx=True, ex=ttl)
        except (RedisError, OSError):
            return "unavailable", ""  # cannot tell a used link from a fresh one: refuse
        if not fresh:
            return "used", ""
        return "ok", self.session_cookie(claims["sub"])

    # ── sessions ─────────────────────────────────────────────────────────────────────────────

    def session_cookie(self, user_id: str) -> str:
        now = int(self.clock())
        return jwt.encode(
            {
                "sub": user_id,
                "aud": SESSION_AUDIENCE,
                "iat": now,
                "exp": now + self.session_ttl_s,
                "jti": secrets.token_urlsafe(16),
            },
            self._key,
            algorithm="HS256",
        )

    def session(self, cookie: str | None) -> Session | Literal["none", "not_admin", "unavailable"]:
        """The admin a session cookie names, or "none" (no, junk or expired cookie) or
        "not_admin" (a good cookie for someone the directory no longer puts in an admin group)
        or "unavailable" (the directory cannot say). It may wait on the directory: call it off
        the event loop."""
        claims = self._claims(cookie or "", SESSION_AUDIENCE)
        if isinstance(claims, str):
            return "none"
        try:
            person = self.admin(claims["sub"])
        except DirectoryUnavailable:
            return "unavailable"
        if person is None:
            return "not_admin"
        return Session(person, self.csrf(claims["jti"]), claims["jti"], float(claims["exp"]))

    async def revoked(self, session: Session) -> bool:
        """Whether the session was signed out; when Redis cannot say, it counts as signed out."""
        try:
            return bool(await self.redis.exists(self.revoked_prefix + session.session_id))
        except (RedisError, OSError):
            return True

    async def revoke(self, session: Session) -> None:
        ttl = max(1, int(session.expires - self.clock()) + LEEWAY_S)
        await self.redis.set(self.revoked_prefix + session.session_id, "1", ex=ttl)

    def csrf(self, session_id: str) -> str:
        return hmac.new(self._csrf_key, session_id.encode(), hashlib.sha256).hexdigest()[:32]

    def cookie_options(self) -> dict[str, object]:
        return {
            "path": "/admin",
            "httponly": True,
            "samesite": "Strict",
            "secure": self.secure,
            "max_age": self.session_ttl_s,
        }
