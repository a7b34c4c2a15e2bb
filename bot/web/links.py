"""Citation links a reader can click: the source's own URL, or a short-lived signed ``/docs`` link.

A local file has no URL of its own, so the bot serves it: ``{public_url}/docs/{doc_id}?u=…&exp=…&sig=…#anchor``.
The signature (HMAC-SHA256 with the link secret) binds the document, the reader and the expiry;
the page itself re-checks access when it is opened. Without sign-in the link's ``u`` decides who
reads, so a link works for whoever holds it until it expires (15 minutes by default); with
OpenID Connect configured (``bot/identity/signin.py``) the person who signs in decides, so a forwarded
link shows nothing to a reader who may not see the document.

The secret comes from ``link_secret``: ``footnote serve`` needs a strong configured one; local
runs and tests get a random one kept in ``data_dir/link-secret``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import html
import json
import logging
import os
import re
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol
from urllib.parse import quote, urlencode

from aiohttp import web
from pydantic import SecretStr

from agent.turns import Citation
from bot.identity.directory import Directory, DirectoryUnavailable, find_off_loop
from bot.settings import Settings
from bot.web.pages import html_page
from ingest.chunk import strip_overlap
from ingest.documents import ChunkPayload
from ingest.errors import ConfigError

if TYPE_CHECKING:
    from bot.identity.signin import SignIn

log = logging.getLogger(__name__)

Verdict = Literal["ok", "expired", "forged", "malformed"]

LINK_SECRET_VAR = "FOOTNOTE_SERVER__LINK_SECRET"
MIN_SECRET_BYTES = 32
# Values from our own docs and examples, and the usual stand-ins: anyone can sign with them.
PLACEHOLDERS = (
    "change-me",
    "changeme",
    "replace-with",
    "replace-me",
    "placeholder",
    "your-secret",
    "example",
)
SECRET_FILE = "link-secret"
CLOCK_SKEW_S = 60  # replicas' clocks may differ this much
_EXP = re.compile(r"[0-9]{1,12}")
_SIG = re.compile(r"[A-Za-z0-9_-]{24}")  # 18 bytes of HMAC, base64url without padding
MAX_USER_CHARS = 256
MAX_DOC_ID_CHARS = 2048


def weak_secret_reason(secret: str) -> str | None:
    """Why ``secret`` must not sign links (anyone could guess it), or None when it will do."""
    size = len(secret.encode("utf-8", "surrogatepass"))
    if size < MIN_SECRET_BYTES:
        return f"it is {size} bytes long; at least {MIN_SECRET_BYTES} are needed"
    lowered = secret.lower()
    if any(p in lowered for p in PLACEHOLDERS):
        return "it is a placeholder, not a secret"
    if len(set(secret)) < 8:
        return "it repeats too few characters to be random"
    return None


def _refusal(reason: str) -> ConfigError:
    return ConfigError(
        f"{LINK_SECRET_VAR} {reason}. Citation links are signed with it: generate one with "
        f"`openssl rand -hex 32` and set {LINK_SECRET_VAR} (the same value on every replica)"
    )


def link_secret(settings: Settings, *, generate: bool) -> SecretStr:
    """The secret that signs citation links; the one place that decides where it comes from.

    A configured ``server.link_secret`` must be strong (>= 32 bytes, not a placeholder), or this
    raises. Without one, ``generate=False`` (``footnote serve``) raises too; ``generate=True``
    (local runs, tests) reads ``data_dir/link-secret``, creating it (random, mode 0600) the first time.
    """
    configured = settings.server.link_secret
    if configured is not None:
        reason = weak_secret_reason(configured.get_secret_value())
        if reason:
            raise _refusal(f"cannot sign citation links: {reason}")
        return configured
    if not generate:
        raise _refusal("is not set")
    return SecretStr(_local_secret(settings.data_dir / SECRET_FILE))


def _local_secret(path: Path) -> str:
    """Read the generated secret, creating it the first time; only its owner may read it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # made by an earlier run (or a concurrent one): reuse it
        else:
            with os.fdopen(fd, "w", encoding="ascii") as f:
                f.write(secrets.token_hex(32) + "\n")
                f.flush()
                os.fsync(f.fileno())
        if path.stat().st_mode & 0o077:
            log.warning("%s was readable by others; made it owner-only (0600)", path)
            path.chmod(0o600)
        secret = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot keep a generated link secret in {path}: {exc}; "
            f"set FOOTNOTE_DATA_DIR to a writable folder, or set {LINK_SECRET_VAR}"
        ) from exc
    reason = weak_secret_reason(secret)
    if reason:
        raise ConfigError(f"{path} does not hold a usable link secret ({reason}); delete it")
    return secret


def links_posture(settings: Settings) -> str:
    """How links are protected, for the start-up log line (never the secret itself)."""
    server = settings.server
    source = (
        LINK_SECRET_VAR
        if server.link_secret is not None
        else f"a generated file ({settings.data_dir / SECRET_FILE})"
    )
    signin = (
        f"sign-in oidc ({server.oidc.issuer})"
        if server.oidc is not None
        else "sign-in off (a link opens for whoever holds it until it expires)"
    )
    return f"links: secret from {source}, ttl {server.link_ttl_s}s, {signin}"


class DocumentSource(Protocol):
    def document(self, doc_id: str, groups: Sequence[str]) -> list[ChunkPayload]: ...


class LinkSigner:
    def __init__(
        self, public_url: str, secret: str, ttl_s: int, clock: Callable[[], float] = time.time
    ):
        reason = weak_secret_reason(secret)
        if reason:
            raise _refusal(f"cannot sign citation links: {reason}")
        self.public_url = public_url.rstrip("/")
        self._key = secret.encode()
        self.ttl_s = ttl_s
        self.clock = clock

    @classmethod
    def from_settings(cls, settings: Settings, *, generate: bool = True) -> LinkSigner:
        secret = link_secret(settings, generate=generate)
        return cls(
            settings.server.public_url, secret.get_secret_value(), settings.server.link_ttl_s
        )

    def derive(self, purpose: str) -> bytes:
        """A key for another use (session cookies), so no two uses share the link key."""
        return hmac.new(self._key, f"footnote/{purpose}".encode(), hashlib.sha256).digest()

    def _sig(self, doc_id: str, user_id: str, exp: int) -> str:
        # JSON with ASCII escapes: unambiguous whatever the strings hold (newlines, lone surrogates)
        message = json.dumps(["footnote-link", doc_id, user_id, exp], separators=(",", ":"))
        mac = hmac.new(self._key, message.encode("ascii"), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac[:18]).decode().rstrip("=")

    def sign(self, doc_id: str, user_id: str, anchor: str = "") -> str:
        exp = int(self.clock()) + self.ttl_s
        query = urlencode({"u": user_id, "exp": exp, "sig": self._sig(doc_id, user_id, exp)})
        url = f"{self.public_url}/docs/{quote(doc_id, safe='/')}?{query}"
        return f"{url}#{quote(anchor, safe='=-_.')}" if anchor else url

    def verify(self, doc_id: str, user_id: str, exp: str, sig: str) -> Verdict:
        """Constant-time for well-formed input; anything else is "malformed" before any MAC is made."""
        if not (
            isinstance(exp, str)
            and isinstance(sig, str)
            and _EXP.fullmatch(exp)
            and _SIG.fullmatch(sig)
            and 0 < len(user_id) <= MAX_USER_CHARS
            and 0 < len(doc_id) <= MAX_DOC_ID_CHARS
        ):
            return "malformed"
        exp_i = int(exp)
        if not hmac.compare_digest(self._sig(doc_id, user_id, exp_i), sig):
            return "forged"
        now = self.clock()
        # a link that lives longer than the TTL allows was signed under an older, longer TTL
        if exp_i < now or exp_i > now + self.ttl_s + CLOCK_SKEW_S:
            return "expired"
        return "ok"

    def link(self, citation: Citation, user_id: str) -> str:
        """Where a citation points for this reader."""
        if citation.link.startswith(("http://", "https://")):
            return citation.link
        anchor = f"page={citation.page}" if citation.page else citation.anchor
        return self.sign(citation.doc_id, user_id, anchor)

    def linker(self, user_id: str) -> Callable[[Citation], str]:
        return lambda c: self.link(c, user_id)


# ---------------------------------------------------------------------------------------------
# The /docs/{doc_id} page


def render_document(doc_id: str, chunks: Sequence[ChunkPayload]) -> str:
    """The document's sections in order; each section carries its anchor (heading slug / page=N) as id."""
    title = chunks[0].get("title") or doc_id
    parts = [f"<h1>{html.escape(title)}</h1>"]
    updated = chunks[0].get("updated")
    if updated:
        parts.append(f'<p class="crumbs">Updated {html.escape(str(updated)[:10])}</p>')
    seen_ids: set[str] = set()
    current: tuple | None = None
    previous = ""
    for chunk in chunks:
        crumbs = chunk.get("breadcrumbs", "")
        text = chunk.get("text", "")
        if crumbs and text.startswith(crumbs):
            text = text[len(crumbs) :].lstrip()
        anchor = chunk.get("anchor") or ""
        page = chunk.get("page")
        key = (anchor, page, chunk.get("parent_id"))
        if key != current:
            if current is not None:
                parts.append("</section>")
            ids = [a for a in (anchor, f"page={page}" if page else "") if a and a not in seen_ids]
            seen_ids.update(ids)
            id_attr = f' id="{html.escape(ids[0])}"' if ids else ""
            parts.append(f"<section{id_attr}>")
            # a second id (page=N next to a heading slug) as an empty target
            parts += [f'<a id="{html.escape(i)}"></a>' for i in ids[1:]]
            if crumbs:
                parts.append(f'<h2 class="crumbs">{html.escape(crumbs)}</h2>')
            current, previous = key, ""
        else:
            text = strip_overlap(previous, text)
        previous = chunk.get("text", "")
        if text:
            parts.append(f"<p>{html.escape(text)}</p>")
    if current is not None:
        parts.append("</section>")
    return "".join(parts)


def _link_params(query) -> tuple[str, str, str] | Verdict:
    """``u``, ``exp`` and ``sig`` of a link; "forged" when one is missing, "malformed" when repeated."""
    values = []
    for name in ("u", "exp", "sig"):
        given = query.getall(name, [])
        if len(given) > 1:
            return "malformed"
        if not given:
            return "forged"
        values.append(given[0])
    return values[0], values[1], values[2]


REFUSALS: dict[str, tuple[str, str, int]] = {
    "forged": (
        "Link not valid",
        "<h1>This link is not valid</h1><p>Open the source again from the chat.</p>",
        403,
    ),
    "malformed": (
        "Link damaged",
        "<h1>This link is damaged</h1><p>Open the source again from the chat.</p>",
        400,
    ),
    "expired": (
        "Link expired",
        "<h1>This link has expired</h1><p>Ask the assistant again for a fresh link.</p>",
        410,
    ),
}


def docs_route(
    signer: LinkSigner,
    directory: Directory,
    documents: DocumentSource,
    signin: SignIn | None = None,
):
    """``GET /docs/{doc_id}``: verify the link, find the reader, re-check access now, render.

    The reader is the link's ``u`` without sign-in, and the signed-in person with it.
    """

    async def handler(request: web.Request) -> web.Response:
        doc_id = request.match_info["doc_id"]
        params = _link_params(request.query)
        verdict = params if isinstance(params, str) else signer.verify(doc_id, *params)
        if verdict != "ok":
            return html_page(*REFUSALS[verdict])
        assert not isinstance(params, str)
        try:
            if signin is None:
                person = await find_off_loop(directory, params[0])
            else:
                email = signin.reader(request)
                if email is None:
                    return await signin.challenge(request)
                person = await find_off_loop(directory, email)
                if person is not None and person.email.lower() != email.lower():
                    person = None  # found by another key (a user id that looks like the claim)
        except DirectoryUnavailable as exc:
            log.warning("/docs: the directory cannot be asked: %s", exc)
            return html_page(
                "Try again later",
                "<h1>The company directory cannot be reached</h1>"
                "<p>So nobody's access can be checked. Try again in a few minutes.</p>",
                503,
            )
        if person is None:
            return html_page("Not allowed", "<h1>You are not in the directory</h1>", 403)
        chunks = await asyncio.to_thread(documents.document, doc_id, list(person.principals))
        if not chunks:
            return html_page(
                "Not allowed",
                "<h1>You cannot read this document</h1>"
                "<p>It may have been removed, or your access may have changed.</p>",
                403,
            )
        return html_page(chunks[0].get("title") or doc_id, render_document(doc_id, chunks))

    return handler
