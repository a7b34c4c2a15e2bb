"""An intranet site as a source: its sitemap lists the pages, conditional GETs find what changed.

* Pages come from ``sitemap.xml`` (a sitemap index is followed, gzip or not), on the sitemap's
  own scheme, host and port only, and only where ``robots.txt`` lets Footnote's user agent go.
* Each page is fetched with ``If-None-Match`` / ``If-Modified-Since`` from the version last
  written: ``304`` is unchanged. A page without either header is compared by a hash of its body.
* A page gone from the sitemap, disallowed by robots.txt, or answering ``404`` / ``410`` is
  deleted — but a sitemap that lists no readable page at all, after pages were synced, stops the
  sync and deletes nothing (``SourceUnavailable``). ``429`` / ``503`` are retried after ``Retry-After`` (bounded), then the page is
  reported as failed and retried at the next sync; nothing is deleted for it.
* A site has no permissions to read: its pages are open to the principals given at
  ``footnote sources add web --acl``.
* Redirects are followed by hand, at most ``MAX_REDIRECTS``, and each hop is checked before it is
  requested, by the rules of the first URL (this site only; for a page, robots.txt): a redirect
  elsewhere — say to ``http://127.0.0.1:…`` — is never sent.
* Every response is streamed and stopped at its limit: bytes per page (``max_bytes``), what a
  sitemap expands to (``max_expanded_bytes``, gzip or not), and the whole fetch's time
  (``fetch_timeout_s``, however slowly a server drips its bytes). A page past one is reported
  as failed naming the setting; a sitemap past one stops the sync and deletes nothing.

The cursor is the last page written in sitemap order (pages are walked sorted by URL), so a sync
killed mid-way resumes after it; a whole pass ends with the deletions and an empty cursor.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import time
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from ingest.errors import ConfigError, past_limit
from ingest.parse import MEDIA_TYPES
from ingest.retry_after import retry_after
from ingest.sources.connector import (
    Batch,
    ConnectorEnv,
    SourceDocument,
    SourceUnavailable,
    principals,
)

USER_AGENT = "Footnote"
SITEMAP_DEPTH = 3  # a sitemap index of sitemap indexes, at most
MAX_REDIRECTS = 5  # hops followed per request, each checked before it is sent
REDIRECTS = (301, 302, 303, 307, 308)


@dataclass
class Fetched:
    """One response read whole within the limits, after the redirects it took."""

    url: str  # where the body came from
    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


@dataclass
class WebConnector:
    sitemap: str
    acl: tuple[str, ...]  # principals every page is open to
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30.0))
    batch_size: int = 20
    max_bytes: int = 50 * 2**20
    max_expanded_bytes: int = 100 * 2**20  # a sitemap, gzip or not, as it expands
    fetch_timeout_s: float = 30.0  # one request, body included, redirects included
    retries: int = 4  # tries after the first, per request, on 429 / 503 / a dropped connection
    max_wait_s: float = 60.0  # longest Retry-After honoured; longer ones wait this long
    sleep: Callable[[float], None] = time.sleep
    requests: int = 0  # HTTP requests made, for reports
    kind: str = "web"

    @classmethod
    def from_config(cls, config: Mapping[str, Any], env: ConnectorEnv) -> WebConnector:
        return cls(
            sitemap=str(config["sitemap"]),
            acl=principals(list(config.get("acl", []))),
            client=httpx.Client(timeout=min(30.0, env.fetch_timeout_s)),
            max_bytes=env.max_bytes,
            max_expanded_bytes=env.max_expanded_bytes,
            fetch_timeout_s=env.fetch_timeout_s,
        )

    @staticmethod
    def config(sitemap: str, acl: Sequence[str]) -> dict[str, Any]:
        """What ``footnote sources add web`` stores; checked here so a typo stops at once."""
        url = urlsplit(sitemap)
        if url.scheme not in ("http", "https") or not url.netloc:
            raise ConfigError(
                f"--sitemap must be an http(s) URL such as https://intranet.example/sitemap.xml, "
                f"got {sitemap!r}"
            )
        return {"sitemap": sitemap, "acl": list(principals(acl))}

    # --- the seam --------------------------------------------------------------------------

    def changes(self, cursor: str | None, known: Mapping[str, str]) -> Iterator[Batch]:
        after = str(json.loads(cursor).get("after") or "") if cursor else ""
        robots = self._robots()
        listed = sorted({u for u in self._sitemap_urls(self.sitemap, 0) if self._same_site(u)})
        pages = [u for u in listed if robots.can_fetch(USER_AGENT, u)]
        if not pages and known:
            # An empty sitemap (a login page served as 200, a half-deployed site) or a robots.txt
            # that shuts Footnote out would otherwise delete every page synced before.
            raise SourceUnavailable(
                f"{self.sitemap} lists no page Footnote may read, but {len(known)} were synced "
                "before: nothing is deleted. If the site is really gone, delete its documents "
                "by removing the source"
            )
        batch = Batch(cursor=json.dumps({"after": after}))
        for url in (u for u in pages if u > after):
            self._fetch(url, known.get(url), batch, robots)
            batch.cursor = json.dumps({"after": url})
            if len(batch.documents) + len(batch.unchanged) + len(batch.failed) >= self.batch_size:
                yield batch
                batch = Batch(cursor=batch.cursor)
        yield batch
        # the pass is whole: what the sitemap no longer lists (or robots.txt now forbids) is gone
        yield Batch(cursor="", deleted=sorted(set(known) - set(pages)))

    def close(self) -> None:
        self.client.close()

    # --- pages -----------------------------------------------------------------------------

    def _fetch(self, url: str, version: str | None, batch: Batch, robots: RobotFileParser) -> None:
        old = json.loads(version) if version else {}
        headers = {}
        if old.get("etag"):
            headers["If-None-Match"] = old["etag"]
        if old.get("modified"):
            headers["If-Modified-Since"] = old["modified"]

        def may_go(hop: str) -> str | None:
            if not self._same_site(hop):
                return "off the site"
            if not robots.can_fetch(USER_AGENT, hop):
                return "where robots.txt forbids"
            return None

        try:
            response = self._get(url, headers, self.max_bytes, "MAX_FILE_MB", may_go)
        except SourceUnavailable as exc:
            batch.failed.append((url, str(exc)))
            return
        if response.status_code == 304:
            batch.unchanged.append(url)
            return
        if response.status_code in (404, 410):
            if version is not None:
                batch.deleted.append(url)
            return
        if response.status_code != 200:
            batch.failed.append((url, f"HTTP {response.status_code}"))
            return
        media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type not in MEDIA_TYPES:
            batch.failed.append((url, f"unsupported media type {media_type or 'none'}"))
            return
        body = response.content
        new = {
            k: v
            for k, v in (
                ("etag", response.headers.get("etag")),
                ("modified", response.headers.get("last-modified")),
            )
            if v
        } or {"sha256": hashlib.sha256(body).hexdigest()}
        new_version = json.dumps(new, sort_keys=True)
        if new_version == version:  # no validators, same body
            batch.unchanged.append(url)
            return
        batch.documents.append(
            SourceDocument(
                key=url,
                url=url,
                content=body,
                media_type=media_type,
                version=new_version,
                principals=self.acl,
                updated=_iso_date(response.headers.get("last-modified")),
            )
        )

    # --- listing ---------------------------------------------------------------------------

    def _robots(self) -> RobotFileParser:
        robots = RobotFileParser()
        site = urlsplit(self.sitemap)
        response = self._get(
            f"{site.scheme}://{site.netloc}/robots.txt",
            {},
            self.max_bytes,
            "MAX_FILE_MB",
            self._off,
        )
        if response.status_code >= 500:
            raise SourceUnavailable(f"robots.txt answered HTTP {response.status_code}")
        # 4xx: no robots.txt, everything allowed (RFC 9309)
        robots.parse(response.text.splitlines() if response.status_code == 200 else [])
        return robots

    def _sitemap_urls(self, url: str, depth: int) -> list[str]:
        response = self._get(url, {}, self.max_expanded_bytes, "MAX_EXPANDED_MB", self._off)
        if response.status_code != 200:
            raise SourceUnavailable(f"the sitemap {url} answered HTTP {response.status_code}")
        body = response.content
        if body[:2] == b"\x1f\x8b":
            body = self._gunzip(url, body)
        try:
            root = ET.fromstring(body)
        except ET.ParseError as exc:
            raise SourceUnavailable(f"the sitemap {url} is not XML: {exc}") from exc
        locs = [
            urldefrag(urljoin(url, (loc.text or "").strip())).url
            for loc in root.findall(".//{*}loc")
        ]
        if root.tag.endswith("sitemapindex"):
            if depth >= SITEMAP_DEPTH:
                raise SourceUnavailable(
                    f"sitemap indexes nest deeper than {SITEMAP_DEPTH} at {url}"
                )
            return [
                page
                for child in locs
                if self._same_site(child)
                for page in self._sitemap_urls(child, depth + 1)
            ]
        return locs

    def _gunzip(self, url: str, body: bytes) -> bytes:
        """A gzip sitemap expanded no further than ``max_expanded_bytes`` (a few KB of gzip can
        hold gigabytes of XML)."""
        out = zlib.decompressobj(wbits=31)  # gzip framing
        try:
            data = out.decompress(body, self.max_expanded_bytes + 1)
        except zlib.error as exc:
            raise SourceUnavailable(f"the sitemap {url} is not valid gzip: {exc}") from exc
        if len(data) > self.max_expanded_bytes:
            raise SourceUnavailable(
                f"the sitemap {url}: {past_limit('expands too far', self.max_expanded_bytes, 'MAX_EXPANDED_MB')}"
            )
        return data

    def _same_site(self, url: str) -> bool:
        a, b = urlsplit(url), urlsplit(self.sitemap)
        return (a.scheme, a.netloc.lower()) == (b.scheme, b.netloc.lower())

    def _off(self, hop: str) -> str | None:
        """Why a redirect of the sitemap or robots.txt may not be followed, or None."""
        return None if self._same_site(hop) else "off the site"

    # --- HTTP ------------------------------------------------------------------------------

    def _get(
        self,
        url: str,
        headers: Mapping[str, str],
        max_bytes: int,
        setting: str,
        may_go: Callable[[str], str | None],
    ) -> Fetched:
        """One GET, its redirects followed by hand, each hop checked by ``may_go`` (why not, or
        None) BEFORE it is sent; ``SourceUnavailable`` says why one was not."""
        for _ in range(MAX_REDIRECTS + 1):
            response = self._get_one(url, headers, max_bytes, setting)
            if response.status_code not in REDIRECTS or "location" not in response.headers:
                return response
            hop = urldefrag(urljoin(url, response.headers["location"])).url
            why = may_go(hop)
            if why is not None:
                raise SourceUnavailable(f"redirects {why}, to {hop}: not followed")
            url = hop
        raise SourceUnavailable(f"more than {MAX_REDIRECTS} redirects from {url}: not followed")

    def _get_one(
        self, url: str, headers: Mapping[str, str], max_bytes: int, setting: str
    ) -> Fetched:
        """One request, no redirect followed, retried on 429 / 503 after their Retry-After and
        on a dropped connection; its body read within ``max_bytes`` and ``fetch_timeout_s``."""
        for attempt in range(self.retries + 1):
            self.requests += 1
            try:
                response = self._read(url, headers, max_bytes, setting)
            except httpx.TransportError as exc:
                if attempt == self.retries:
                    raise SourceUnavailable(f"cannot reach {url}: {exc}") from exc
                self.sleep(min(2.0**attempt, self.max_wait_s))
                continue
            if response.status_code not in (429, 503):
                return response
            if attempt == self.retries:
                break
            self.sleep(retry_after(response.headers.get("retry-after"), attempt, self.max_wait_s))
        raise SourceUnavailable(
            f"HTTP {response.status_code} from {url} after {self.retries + 1} tries"
        )

    def _read(self, url: str, headers: Mapping[str, str], max_bytes: int, setting: str) -> Fetched:
        """Stream the body and stop at the limits: a 300 MB page is never read whole, and a
        server dripping a byte a second holds the sync ``fetch_timeout_s``, not for ever."""
        deadline = time.monotonic() + self.fetch_timeout_s
        request = {"User-Agent": USER_AGENT, **headers}
        with self.client.stream("GET", url, headers=request, follow_redirects=False) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise SourceUnavailable(past_limit("too large", max_bytes, setting))
            body = bytearray()
            for part in response.iter_bytes():
                body += part
                if len(body) > max_bytes:
                    raise SourceUnavailable(past_limit("too large", max_bytes, setting))
                if time.monotonic() > deadline:
                    raise SourceUnavailable(
                        f"too slow: not read whole within {self.fetch_timeout_s:g} s, the limit "
                        "FOOTNOTE_INGEST__FETCH_TIMEOUT_S"
                    )
            return Fetched(url, response.status_code, response.headers, bytes(body))


def _iso_date(http_date: str | None) -> str:
    if not http_date:
        return ""
    try:
        return email.utils.parsedate_to_datetime(http_date).date().isoformat()
    except (TypeError, ValueError):
        return ""
