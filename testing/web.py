"""A loopback intranet site, speaking HTTP as a web server does, for the web connector.

Pages live in ``site.pages`` (path → ``Page``); ``/sitemap.xml`` lists them (through a sitemap
index when ``index=True``) and ``/robots.txt`` serves ``site.robots``. Each page answers
conditional GETs: ``If-None-Match`` against its ETag, ``If-Modified-Since`` against its
Last-Modified; a page without validators sends neither. ``throttle(path, n, retry_after)``
makes the next ``n`` requests for a path answer ``429`` with ``Retry-After``. Every request is
recorded in ``site.requests`` as (method, path, status).
"""

from __future__ import annotations

import email.utils
import hashlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self
from xml.sax.saxutils import escape


@dataclass
class Page:
    body: str
    content_type: str = "text/html; charset=utf-8"
    etag: bool = True  # send an ETag (derived from the body)
    modified: float | None = 1_700_000_000.0  # Last-Modified as a Unix time; None: no header
    status: int = 200  # 404 / 410: listed in the sitemap, gone from the server

    @property
    def tag(self) -> str:
        return '"' + hashlib.sha256(self.body.encode()).hexdigest()[:16] + '"'


class LoopbackServer:
    """A stdlib HTTP server on a free loopback port, on a thread; every GET goes to ``_get``, every
    POST to ``_post`` (405 unless a subclass takes it).
    Subclasses (dataclasses) declare ``_server: ThreadingHTTPServer | None = None``."""

    _server: ThreadingHTTPServer | None

    def start(self) -> Self:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                fake._get(self)

            def do_POST(self) -> None:
                fake._post(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def close(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server, "start() the server first"
        return f"http://127.0.0.1:{self._server.server_port}"

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError

    def _post(self, h: BaseHTTPRequestHandler) -> None:
        """Servers that take no POST answer 405, as a web server does."""
        h.send_response(405)
        h.send_header("Allow", "GET")
        h.send_header("Content-Length", "0")
        h.end_headers()


@dataclass
class LoopbackSite(LoopbackServer):
    pages: dict[str, Page] = field(default_factory=dict)
    robots: str = "User-agent: *\nAllow: /\n"
    index: bool = False  # serve /sitemap.xml as a sitemap index of two sitemaps
    unlisted: set[str] = field(default_factory=set)  # served but left out of the sitemap
    extra_locs: list[str] = field(default_factory=list)  # more <loc>s, e.g. on another host
    requests: list[tuple[str, str, int]] = field(default_factory=list)
    _throttled: dict[str, tuple[int, str]] = field(default_factory=dict)
    _server: ThreadingHTTPServer | None = None

    @property
    def sitemap(self) -> str:
        return f"{self.url}/sitemap.xml"

    def throttle(self, path: str, times: int, retry_after: str = "1") -> None:
        self._throttled[path] = (times, retry_after)

    def fetched(self, path: str) -> list[int]:
        """The statuses of the GETs of ``path`` so far."""
        return [status for _, p, status in self.requests if p == path]

    # --- the server ------------------------------------------------------------------------

    def _listed(self) -> list[str]:
        locs = [f"{self.url}{p}" for p in sorted(self.pages) if p not in self.unlisted]
        return locs + self.extra_locs

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?")[0]
        status, headers, body = self._answer(path, h.headers)
        self.requests.append(("GET", path, status))
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        data = body.encode()
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _answer(self, path: str, req: object) -> tuple[int, dict[str, str], str]:
        times, retry_after = self._throttled.get(path, (0, ""))
        if times:
            self._throttled[path] = (times - 1, retry_after)
            return 429, {"Retry-After": retry_after, "Content-Type": "text/plain"}, "slow down"
        xml = {"Content-Type": "application/xml"}
        if path == "/robots.txt":
            return 200, {"Content-Type": "text/plain"}, self.robots
        if path == "/sitemap.xml" and self.index:
            parts = "".join(
                f"<sitemap><loc>{self.url}/sitemap-{n}.xml</loc></sitemap>" for n in (1, 2)
            )
            return 200, xml, f'<?xml version="1.0"?>{_SITEMAP_INDEX.format(parts)}'
        if path in ("/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml"):
            locs = self._listed()
            if path != "/sitemap.xml":  # the index splits the pages in two
                half = (len(locs) + 1) // 2
                locs = locs[:half] if path.endswith("1.xml") else locs[half:]
            urls = "".join(f"<url><loc>{escape(u)}</loc></url>" for u in locs)
            return 200, xml, f'<?xml version="1.0"?>{_URLSET.format(urls)}'
        page = self.pages.get(path)
        if page is None or page.status != 200:
            return (page.status if page else 404), {"Content-Type": "text/plain"}, "not here"
        headers = {"Content-Type": page.content_type}
        if page.etag:
            headers["ETag"] = page.tag
        if page.modified is not None:
            headers["Last-Modified"] = email.utils.formatdate(page.modified, usegmt=True)
        get = getattr(req, "get", lambda k: None)
        match, since = get("If-None-Match"), get("If-Modified-Since")
        if page.etag and match:
            if match == page.tag:
                return 304, headers, ""
        elif page.modified is not None and since:
            then = email.utils.parsedate_to_datetime(since).timestamp()
            if page.modified <= then:
                return 304, headers, ""
        return 200, headers, page.body


_NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
_URLSET = f"<urlset {_NS}>{{}}</urlset>"
_SITEMAP_INDEX = f"<sitemapindex {_NS}>{{}}</sitemapindex>"
