"""Citation links a reader can click: the source's own URL, or a short-lived signed ``/docs`` link.

A local file has no URL of its own, so the bot serves it: ``{public_url}/docs/{doc_id}?u=…&exp=…&sig=…#anchor``.
The signature (HMAC-SHA256 with ``server.link_secret``) binds the document, the reader and the
expiry; the page itself re-checks access when it is opened, so a link handed to someone else, or
opened after the reader lost access, shows nothing.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import html
import time
from collections.abc import Callable, Sequence
from typing import Literal, Protocol
from urllib.parse import quote, urlencode

from aiohttp import web

from agent.turns import Citation
from bot.directory import Directory

Verdict = Literal["ok", "expired", "forged"]


class DocumentSource(Protocol):
    def document(self, doc_id: str, groups: Sequence[str]) -> list[dict]: ...


class LinkSigner:
    def __init__(
        self, public_url: str, secret: str, ttl_s: int, clock: Callable[[], float] = time.time
    ):
        if not secret:
            raise ValueError("server.link_secret is empty; set FOOTNOTE_SERVER__LINK_SECRET")
        self.public_url = public_url.rstrip("/")
        self._key = secret.encode()
        self.ttl_s = ttl_s
        self.clock = clock

    @classmethod
    def from_settings(cls, server) -> LinkSigner:
        return cls(server.public_url, server.link_secret.get_secret_value(), server.link_ttl_s)

    def _sig(self, doc_id: str, user_id: str, exp: int) -> str:
        mac = hmac.new(self._key, f"{doc_id}\n{user_id}\n{exp}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac[:18]).decode().rstrip("=")

    def sign(self, doc_id: str, user_id: str, anchor: str = "") -> str:
        exp = int(self.clock()) + self.ttl_s
        query = urlencode({"u": user_id, "exp": exp, "sig": self._sig(doc_id, user_id, exp)})
        url = f"{self.public_url}/docs/{quote(doc_id, safe='/')}?{query}"
        return f"{url}#{quote(anchor, safe='=-_.')}" if anchor else url

    def verify(self, doc_id: str, user_id: str, exp: str, sig: str) -> Verdict:
        try:
            exp_i = int(exp)
        except (TypeError, ValueError):
            return "forged"
        if not hmac.compare_digest(self._sig(doc_id, user_id, exp_i), sig or ""):
            return "forged"
        return "expired" if exp_i < self.clock() else "ok"

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


def _page(title: str, body: str, status: int = 200) -> web.Response:
    doc = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}"
        "section{margin:1.5rem 0}section:target{background:#fff8c5}.crumbs{color:#666;font-size:.9rem}"
        "p{white-space:pre-wrap}</style></head><body>"
        f"{body}</body></html>"
    )
    return web.Response(
        text=doc,
        status=status,
        content_type="text/html",
        headers={"Cache-Control": "no-store", "X-Robots-Tag": "noindex"},
    )


def _strip_overlap(previous: str, text: str, max_words: int = 80) -> str:
    """Drop the words a chunk repeats from the end of the one before (chunks overlap)."""
    prev_words, words = previous.split(), text.split()
    for k in range(min(max_words, len(prev_words), len(words)), 4, -1):
        if prev_words[-k:] == words[:k]:
            return " ".join(words[k:])
    return text


def render_document(doc_id: str, chunks: Sequence[dict]) -> str:
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
            text = _strip_overlap(previous, text)
        previous = chunk.get("text", "")
        if text:
            parts.append(f"<p>{html.escape(text)}</p>")
    if current is not None:
        parts.append("</section>")
    return "".join(parts)


def docs_route(signer: LinkSigner, directory: Directory, documents: DocumentSource):
    """``GET /docs/{doc_id}``: verify the link, find the reader, re-check access now, render."""

    async def handler(request: web.Request) -> web.Response:
        doc_id = request.match_info["doc_id"]
        user_id = request.query.get("u", "")
        verdict = signer.verify(
            doc_id, user_id, request.query.get("exp", ""), request.query.get("sig", "")
        )
        if verdict == "forged":
            return _page(
                "Link not valid",
                "<h1>This link is not valid</h1><p>Open the source again from the chat.</p>",
                403,
            )
        if verdict == "expired":
            return _page(
                "Link expired",
                "<h1>This link has expired</h1><p>Ask the assistant again for a fresh link.</p>",
                410,
            )
        person = directory.find(user_id)
        if person is None:
            return _page("Not allowed", "<h1>You are not in the directory</h1>", 403)
        chunks = await asyncio.to_thread(documents.document, doc_id, list(person.groups))
        if not chunks:
            return _page(
                "Not allowed",
                "<h1>You cannot read this document</h1>"
                "<p>It may have been removed, or your access may have changed.</p>",
                403,
            )
        return _page(chunks[0].get("title") or doc_id, render_document(doc_id, chunks))

    return handler
