"""Loopback servers for attacking the web connector: a site whose every path is a handler the
test writes (redirects, drips, floods), and a canary that records whether anything reached it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape

from testing.web import LoopbackServer

Handler = Callable[[BaseHTTPRequestHandler], None]


def answer(
    h: BaseHTTPRequestHandler,
    status: int,
    body: bytes | str = b"",
    content_type: str = "text/html; charset=utf-8",
    **headers: str,
) -> None:
    data = body.encode() if isinstance(body, str) else body
    h.send_response(status)
    h.send_header("Content-Type", content_type)
    h.send_header("Content-Length", str(len(data)))
    for k, v in headers.items():
        h.send_header(k.replace("_", "-"), v)
    h.end_headers()
    h.wfile.write(data)


def redirect(location: str, status: int = 302) -> Handler:
    return lambda h: answer(h, status, b"", Location=location)


def page(html: str) -> Handler:
    return lambda h: answer(h, 200, html)


def urlset(urls: list[str]) -> str:
    locs = "".join(f"<url><loc>{escape(u)}</loc></url>" for u in urls)
    return (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{locs}</urlset>"
    )


@dataclass
class HostileSite(LoopbackServer):
    """``routes`` maps a path to its handler; ``/robots.txt`` allows all unless routed; every
    GET is recorded in ``requests``."""

    routes: dict[str, Handler] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def sitemap(self) -> str:
        return f"{self.url}/sitemap.xml"

    def list_pages(self, *paths: str) -> None:
        """Serve /sitemap.xml listing these paths of this site."""
        xml = urlset([self.url + p for p in paths])
        self.routes["/sitemap.xml"] = lambda h: answer(h, 200, xml, "application/xml")

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?")[0]
        self.requests.append(path)
        handler = self.routes.get(path)
        if handler is not None:
            handler(h)
        elif path == "/robots.txt":
            answer(h, 200, "User-agent: *\nAllow: /\n", "text/plain")
        else:
            answer(h, 404, "not here", "text/plain")


@dataclass
class Canary(LoopbackServer):
    """What a blind SSRF would reach (an internal admin port): it records every hit."""

    hits: list[str] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        self.hits.append(h.path)
        answer(h, 200, "<p>internal admin console: deleted everything</p>")
