"""The shell of every HTML page the bot serves outside /admin (a document, a refusal, a sign-in
error): one style, never cached, never indexed. Its own module so that links and sign-in, which
both show pages, need not import each other."""

from __future__ import annotations

import html

from aiohttp import web


def html_page(title: str, body: str, status: int = 200) -> web.Response:
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
