"""Confluence Cloud as a source: the pages of some spaces, with who may read each one.

Every sync makes the same few kinds of request to the REST API (v1, ``/wiki/rest/api``):

* ``GET /space/{key}?expand=permissions`` per space: who may read the space (its ``read``
  permission's users and groups; anonymous access, or a group every licensed user is in, is ``*``);
* one CQL listing of every page, ``space in (…) and type=page``, without bodies but with each
  page's version, ancestors and read restrictions, followed page by page through
  ``_links.next``;
* bodies (``body.storage``) of the pages whose version or readers differ from what was last
  written, by CQL ``id in (…)``, one request per batch;
* attachments (``GET /content/{id}/child/attachment?expand=version``, paged) of each page that is
  new or whose version or readers changed, plus every page's in a full pass once a day (an
  attachment added or deleted moves no page version); each attachment the parsers read is
  downloaded through its ``_links.download`` path, which redirects to the file.

The listing is what makes a sync exact: a page missing from it was trashed, deleted or moved out
of the spaces (deleted from the index), and a restriction changed on Confluence moves no
``lastmodified`` date and no version number, so only a walk of every page's restrictions sees it.
The version recorded per page is its version number and its principals; a sync killed mid-way
resumes by fetching what is still stale, without a cursor of its own.

Permissions: a page with read restrictions (its own, or inherited from restricted ancestors) is
readable by exactly the users and groups those name, each level narrowing the one above; a page
without is readable by the space's readers. Users become ``user:<email>``; Confluence hides a
user's e-mail unless their profile shows it, and such a user is left out (the page stays with its
groups) with a warning. Groups become ``group:<name>``, through the optional mapping file when
Confluence's group names differ from the directory's. An attachment is read by exactly its page's
readers (Confluence has no permissions of its own for attachments): its recorded version is its
own version number, its page and the page's principals, so a page whose readers change relabels
its attachments too.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote, urlencode, urljoin, urlsplit

import httpx
import yaml
from pydantic import SecretStr

from ingest.errors import ConfigError
from ingest.parse import MEDIA_TYPES
from ingest.retry_after import retry_after
from ingest.sources.connector import (
    EVERYONE,
    USER,
    Batch,
    ConnectorEnv,
    SourceDocument,
    SourceUnavailable,
    principal,
)

log = logging.getLogger(__name__)

EMAIL_VAR = "FOOTNOTE_CONFLUENCE__EMAIL"
TOKEN_VAR = "FOOTNOTE_CONFLUENCE__API_TOKEN"
RESTRICTIONS = "restrictions.read.restrictions.user,restrictions.read.restrictions.group"
LISTING = f"version,ancestors,space,history,{RESTRICTIONS}"
BODIES = "body.storage,version,space,history"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
ATTACHMENT = "attachment:"  # an attachment's key: attachment:<its id>
NOTED = 20  # skipped attachments named one by one in a sync's notes; the rest counted
REDIRECTS = 3  # hops a download may take (Confluence redirects once, to its media service)
# a file's type by its name, when Confluence calls it application/octet-stream
SUFFIX_TYPES = {suffix: media for media, suffix in reversed(MEDIA_TYPES.items())}


class TooLarge(Exception):
    """A download passed the size limit: it was cut off, not kept."""


class ConfluenceAuthError(ConfigError):
    """Confluence refused the credentials (401): the fix is in the environment."""


@dataclass(frozen=True)
class Listed:
    """A page as the listing shows it: enough to decide whether to fetch it."""

    id: str
    space: str
    number: int
    ancestors: tuple[str, ...]
    restricted: frozenset[str] | None  # its own read restrictions as principals; None: none
    page: bool = True  # False: content above pages (a folder, say), never synced itself
    webui: str = ""  # where it opens, relative to the site's /wiki
    owner: str = ""  # who created it


@dataclass
class AttachmentCounts:
    """What a sync did about attachments, for ``footnote sync``'s report line."""

    pages_listed: int = 0  # pages whose attachments were listed
    downloaded: int = 0
    skipped: int = 0  # a kind the parsers do not read, or over the size limit
    full_pass: bool = False

    def line(self) -> str:
        full = ", full pass" if self.full_pass else ""
        return (
            f"attachments: {self.pages_listed} pages listed{full}, {self.downloaded} downloaded, "
            f"{self.skipped} skipped"
        )


@dataclass
class ConfluenceConnector:
    site: str  # https://acme.atlassian.net
    spaces: tuple[str, ...]
    email: str
    token: SecretStr
    group_map: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # name → principals
    everyone_groups: tuple[str, ...] = ("confluence-users",)  # groups meaning every member
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30.0))
    batch_size: int = 25  # pages fetched per request and written per batch
    page_size: int = 100  # listing results per request (Confluence may return fewer)
    max_bytes: int = 50 * 2**20
    retries: int = 4  # tries after the first, per request, on 429 / 503 / a dropped connection
    max_wait_s: float = 60.0
    attachments: bool = True  # sync the attachments the parsers read (False: drop those synced)
    full_pass_s: float = (
        86400.0  # how often every page's attachments are listed, not only changed pages'
    )
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    requests: int = 0
    warnings: list[str] = field(default_factory=list)
    counts: AttachmentCounts = field(default_factory=AttachmentCounts)
    _claimed: set[str] = field(default_factory=set, repr=False)
    kind: str = "confluence"

    @classmethod
    def from_config(cls, config: Mapping[str, Any], env: ConnectorEnv) -> ConfluenceConnector:
        creds = env.confluence
        token = creds.api_token if creds else None
        if not creds or not creds.email or not token or not token.get_secret_value():
            raise ConfigError(
                f"Confluence needs credentials: set {EMAIL_VAR} (the Atlassian account's e-mail) "
                f"and {TOKEN_VAR} (an API token from id.atlassian.com → Security → API tokens)"
            )
        mapping = config.get("group_map") or ""
        return cls(
            site=str(config["url"]),
            spaces=tuple(config["spaces"]),
            email=creds.email,
            token=token,
            group_map=load_group_map(Path(mapping)) if mapping else {},
            everyone_groups=tuple(config.get("everyone_groups", ("confluence-users",))),
            max_bytes=env.max_bytes,
        )

    @staticmethod
    def config(
        url: str,
        spaces: Sequence[str],
        group_map: str | None = None,
        everyone_groups: Sequence[str] = ("confluence-users",),
    ) -> dict[str, Any]:
        """What ``footnote sources add confluence`` stores: no credentials, ever."""
        parts = urlsplit(url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"--url must be your site, such as https://acme.atlassian.net, got {url!r}"
            )
        if parts.scheme != "https" and parts.hostname not in LOOPBACK:
            raise ConfigError(
                f"--url must use https (the API token travels with every request): {url!r}"
            )
        keys = [s.strip() for s in spaces if s.strip()]
        if not keys or any(not re.fullmatch(r"~?[A-Za-z0-9_-]+", k) for k in keys):
            raise ConfigError("give each space by its key: --space HR --space ENG")
        site = f"{parts.scheme}://{parts.netloc}{parts.path.removesuffix('/wiki')}"
        if group_map:
            load_group_map(Path(group_map))  # a typo stops here, not at the first sync
        return {
            "url": site,
            "spaces": sorted(set(keys)),
            "group_map": str(Path(group_map).resolve()) if group_map else "",
            "everyone_groups": list(everyone_groups),
        }

    # --- the seam --------------------------------------------------------------------------

    def changes(self, cursor: str | None, known: Mapping[str, str]) -> Iterator[Batch]:
        readers = {key: self._space_readers(key) for key in self.spaces}
        everything = self._list()
        listed = {pid: item for pid, item in everything.items() if item.page}
        versions = {
            pid: json.dumps(
                {"number": page.number, "principals": self._principals(page, everything, readers)},
                sort_keys=True,
            )
            for pid, page in listed.items()
        }
        pages = {k: v for k, v in known.items() if not k.startswith(ATTACHMENT)}
        attached: dict[str, dict[str, str]] = {}  # page id → its attachments' keys → versions
        for key, version in known.items():
            if key.startswith(ATTACHMENT):
                attached.setdefault(str(json.loads(version).get("page")), {})[key] = version
        order = sorted(listed, key=lambda p: (len(p), p))  # numeric ids in numeric order
        stale = [pid for pid in order if versions[pid] != pages.get(pid)]
        fresh = set(order) - set(stale)
        last_pass = float(_cursor(cursor).get("attachments_at") or 0)
        started = self.clock()
        full = self.attachments and started - last_pass >= self.full_pass_s
        self.counts.full_pass = full
        to_list = set(order if full else stale) if self.attachments else set()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

        def mark(at: float) -> str:
            return json.dumps({"listed": stamp, "attachments_at": at})

        gone = set(pages) - set(listed)
        # the listing is whole: what it lacks is gone (with its attachments); what it shows as
        # written is unchanged
        yield Batch(
            cursor=mark(last_pass),
            deleted=sorted(gone)
            + sorted(
                k
                for pid, keys in attached.items()
                if pid in gone or not self.attachments
                for k in keys
            ),
            unchanged=[pid for pid in order if pid in fresh]
            + sorted(
                k
                for pid in order
                if pid not in to_list and self.attachments
                for k in attached.get(pid, {})
            ),
        )
        self._claimed = set()  # attachments listed on some page in this sync
        work = [pid for pid in order if pid in to_list or pid not in fresh]
        unlisted = False  # a page whose attachments could not be listed: no full pass recorded
        for start in range(0, len(work), self.batch_size):
            ids = work[start : start + self.batch_size]
            batch = Batch(cursor=mark(last_pass))
            fetch = [pid for pid in ids if pid not in fresh]
            if fetch:
                self._fetch(fetch, versions, known, batch)
            # a page's attachments go first: the page is recorded after them, so a sync killed
            # in between lists them again next time
            retry: set[str] = set()  # pages with an attachment to fetch again next sync
            for pid in ids:
                if pid not in to_list:
                    continue
                try:
                    yield from self._attachments(
                        listed[pid], versions[pid], attached.get(pid, {}), mark(last_pass), retry
                    )
                except SourceUnavailable as exc:
                    # the page is not recorded, so its attachments are listed again next sync;
                    # meanwhile those that lost readers leave the index
                    unlisted = True
                    batch.failed.append((pid, f"its attachments could not be listed: {exc}"))
                    batch.deleted += [
                        key
                        for key, old in attached.get(pid, {}).items()
                        if _lost_readers(old, versions[pid])
                    ]
            if retry:
                unlisted = True
                batch.documents = [
                    replace(d, version=_retry(d.version)) if d.key in retry else d
                    for d in batch.documents
                ]
            if batch.documents or batch.deleted or batch.failed:
                yield batch
        if full and not unlisted:
            yield Batch(cursor=mark(started))

    def close(self) -> None:
        self.client.close()

    # --- permissions -----------------------------------------------------------------------

    def _space_readers(self, key: str) -> frozenset[str]:
        space = self._get(f"/space/{key}", {"expand": "permissions"}, what=f"space {key}")
        found: set[str] = set()
        for perm in space.get("permissions") or []:
            op = perm.get("operation") or {}
            if (op.get("operation"), op.get("targetType")) != ("read", "space"):
                continue
            if perm.get("anonymousAccess"):
                found.add(EVERYONE)  # every member of the directory, never the open internet
            subjects = perm.get("subjects") or {}
            found |= self._subjects(subjects, f"space {key}")
        if not found:  # fail closed, and say why
            self._warn(
                f"space {key} shows no one who may read it (reading space permissions needs "
                "the sync account to administer the space): its unrestricted pages are readable "
                "by admins only"
            )
        return frozenset(found)

    def _subjects(self, subjects: Mapping[str, Any], where: str) -> set[str]:
        out: set[str] = set()
        for user in (subjects.get("user") or {}).get("results") or []:
            email = (user.get("email") or "").strip()
            if email:
                out.add(USER + email.lower())
            else:
                who = user.get("displayName") or user.get("publicName") or user.get("accountId")
                self._warn(
                    f"{where} grants {who}, whose e-mail Confluence hides: left out (their "
                    "profile must show the e-mail, or grant them through a group)"
                )
        for group in (subjects.get("group") or {}).get("results") or []:
            name = str(group.get("name") or "")
            if name in self.everyone_groups:
                out.add(EVERYONE)
            elif name in self.group_map:
                out.update(self.group_map[name])
            elif name:
                out.add(principal("group:" + name))
        return out

    def _principals(
        self, page: Listed, listed: Mapping[str, Listed], readers: Mapping[str, frozenset[str]]
    ) -> list[str]:
        """Each restricted level narrows the one above (Confluence checks them all); without a
        restriction, the space's readers. Two levels naming different users or groups keep only
        what both name: Footnote cannot see group membership at sync time, so it errs shut."""
        chain = [listed[a].restricted for a in page.ancestors if a in listed]
        levels = [r for r in [*chain, page.restricted] if r is not None]
        if not levels:
            return sorted(readers.get(page.space, frozenset()))
        allowed: set[str] | None = None
        for level in levels:
            if EVERYONE in level:
                continue
            allowed = set(level) if allowed is None else allowed & level
        return sorted(allowed) if allowed is not None else [EVERYONE]

    # --- pages -----------------------------------------------------------------------------

    def _list(self) -> dict[str, Listed]:
        """Every page of the spaces, and every other ancestor above them (a folder, say), whose
        restrictions count for the pages below it as a parent page's do."""
        spaces = ",".join(f'"{k}"' for k in self.spaces)
        cql = f"space in ({spaces}) and type=page"
        listed = {p.id: p for p in map(self._listed, self._search(cql, LISTING, self.page_size))}
        others = sorted({a for p in listed.values() for a in p.ancestors} - set(listed))
        above: dict[str, Listed] = {}
        for start in range(0, len(others), self.page_size):
            ids = others[start : start + self.page_size]
            cql = f"id in ({','.join(ids)})"
            for found in self._search(cql, LISTING, len(ids)):
                item = replace(self._listed(found), page=False)  # restricts; never synced here
                above[item.id] = item
        for pid in others:
            if pid not in above:  # cannot see what it restricts: whatever sits below stays shut
                self._warn(f"content {pid} above some pages cannot be read: they are admins only")
                above[pid] = Listed(pid, "", 0, (), frozenset(), page=False)
        return {**above, **listed}

    def _listed(self, page: Mapping[str, Any]) -> Listed:
        pid = str(page["id"])
        if not pid.isdigit():  # ids go back into CQL: only Confluence's numeric ones
            raise SourceUnavailable(f"Confluence listed content with an unexpected id {pid[:40]!r}")
        read = ((page.get("restrictions") or {}).get("read") or {}).get("restrictions") or {}
        has = any((read.get(k) or {}).get("results") for k in ("user", "group"))
        return Listed(
            id=pid,
            space=str((page.get("space") or {}).get("key") or ""),
            number=int((page.get("version") or {}).get("number") or 0),
            ancestors=tuple(str(a["id"]) for a in page.get("ancestors") or []),
            restricted=frozenset(self._subjects(read, f"page {pid}")) if has else None,
            webui=str((page.get("_links") or {}).get("webui") or ""),
            owner=str(
                ((page.get("history") or {}).get("createdBy") or {}).get("displayName") or ""
            ),
        )

    def _fetch(
        self,
        ids: Sequence[str],
        versions: Mapping[str, str],
        known: Mapping[str, str],
        batch: Batch,
    ) -> None:
        cql = f"id in ({','.join(ids)})"
        try:
            pages = {str(p["id"]): p for p in self._search(cql, BODIES, len(ids))}
        except SourceUnavailable as exc:
            # Tried again at the next sync. A page that lost readers leaves the index meanwhile
            # (it comes back when fetched): its old copy must not answer those readers.
            for pid in ids:
                if _lost_readers(known.get(pid), versions[pid]):
                    batch.deleted.append(pid)
                else:
                    batch.failed.append((pid, str(exc)))
            return
        for pid in ids:
            page = pages.get(pid)
            if page is None:  # gone between the listing and now: the next listing says so
                continue
            body = ((page.get("body") or {}).get("storage") or {}).get("value") or ""
            if len(body.encode()) > self.max_bytes:
                batch.failed.append((pid, f"too large: {len(body.encode())} bytes"))
                continue
            links = page.get("_links") or {}
            title = str(page.get("title") or "")
            version = page.get("version") or {}
            batch.documents.append(
                SourceDocument(
                    key=pid,
                    url=self._base
                    + str(links.get("webui") or f"/pages/viewpage.action?pageId={pid}"),
                    content=storage_html(title, body),
                    media_type="text/html",
                    version=versions[pid],
                    principals=tuple(json.loads(versions[pid])["principals"]),
                    title=title,
                    updated=str(version.get("when") or "")[:10],
                    owner=str(
                        ((page.get("history") or {}).get("createdBy") or {}).get("displayName")
                        or ""
                    ),
                )
            )

    # --- attachments -----------------------------------------------------------------------

    def _attachments(
        self,
        page: Listed,
        page_version: str,
        known: Mapping[str, str],
        cursor: str,
        retry: set[str],
    ) -> Iterator[Batch]:
        """A page's attachments that the parsers read, each its own document with the page's
        readers: those new or changed (in version or readers) downloaded, those gone deleted.
        A page with a download that failed is added to ``retry``."""
        pid = page.id
        principals = json.loads(page_version)["principals"]
        self.counts.pages_listed += 1
        seen: set[str] = set()
        todo: list[tuple[str, dict[str, Any], str, str]] = []
        first = Batch(cursor=cursor)
        for att in self._children(pid):
            if not str(att.get("id") or ""):
                continue  # nothing to know it by again
            key = ATTACHMENT + str(att["id"])
            seen.add(key)
            self._claimed.add(key)
            title = str(att.get("title") or "")
            media = _media_type(att)
            size = int((att.get("extensions") or {}).get("fileSize") or 0)
            if media not in MEDIA_TYPES:
                self._skip(key, known, first, title, pid, f"{media} is not a kind Footnote reads")
                continue
            if size > self.max_bytes:
                self._skip(key, known, first, title, pid, _too_large(size, self))
                continue
            number = int((att.get("version") or {}).get("number") or 0)
            version = json.dumps(
                {"number": number, "page": pid, "principals": principals}, sort_keys=True
            )
            if known.get(key) == version:
                first.unchanged.append(key)
            else:
                todo.append((key, att, media, version))
        # deleted from the page, or moved to another page (then kept if already listed there)
        first.deleted += sorted(set(known) - seen - self._claimed)
        if first.deleted or first.unchanged:
            yield first
        for start in range(0, len(todo), self.batch_size):
            batch = Batch(cursor=cursor)
            for key, att, media, version in todo[start : start + self.batch_size]:
                if not self._attachment(page, key, att, media, version, known.get(key), batch):
                    retry.add(page.id)
            yield batch

    def _attachment(
        self,
        page: Listed,
        key: str,
        att: Mapping[str, Any],
        media: str,
        version: str,
        old: str | None,
        batch: Batch,
    ) -> bool:
        """Download one attachment into ``batch``; False when it must be tried again."""
        title = str(att.get("title") or "")
        link = str((att.get("_links") or {}).get("download") or "")
        if not link.startswith("/") or link.startswith("//"):  # relative to /wiki, or not ours
            why = f"no download link on the site: {link[:80]!r}"
            self._skip(key, {key: old} if old else {}, batch, title, page.id, why)
            return True
        try:
            data = self._download(self._base + link, f"the attachment {title!r}")
        except TooLarge as exc:
            self._skip(key, {key: old} if old else {}, batch, title, page.id, str(exc))
            return True
        except SourceUnavailable as exc:
            if _lost_readers(old, version):
                batch.deleted.append(key)  # no stale copy answers someone who lost access
            else:
                batch.failed.append((key, str(exc)))
            return False
        self.counts.downloaded += 1
        number = key.removeprefix(ATTACHMENT).removeprefix("att")
        page_url = self._base + (page.webui or f"/pages/viewpage.action?pageId={page.id}")
        preview = quote(f"/{page.id}/{number}/{title}", safe="")
        batch.documents.append(
            SourceDocument(
                key=key,
                url=f"{page_url}{'&' if '?' in page_url else '?'}preview={preview}",
                content=data,
                media_type=media,
                version=version,
                principals=tuple(json.loads(version)["principals"]),
                title=title,
                updated=str((att.get("version") or {}).get("when") or "")[:10],
                owner=page.owner,
            )
        )
        return True

    def _skip(
        self, key: str, known: Mapping[str, str], batch: Batch, title: str, pid: str, why: str
    ) -> None:
        """An attachment Footnote does not read: said, and out of the index if it was in."""
        self.counts.skipped += 1
        if self.counts.skipped <= NOTED:
            self._warn(f"attachment {title!r} on page {pid} skipped: {why}")
        elif self.counts.skipped == NOTED + 1:
            self._warn("more attachments skipped: the count is in the attachments line")
        if key in known:
            batch.deleted.append(key)

    def _children(self, pid: str) -> Iterator[dict[str, Any]]:
        """Every attachment of a page, following ``_links.next``."""
        path: str | None = f"/rest/api/content/{pid}/child/attachment?" + urlencode(
            {"expand": "version", "limit": self.page_size}
        )
        while path:
            reply = self._request(self._base + path, f"the attachments of page {pid}")
            yield from reply.get("results") or []
            links = reply.get("_links") or {}
            path = links.get("next")
            if path and str(links.get("base") or self._base).rstrip("/") != self._base:
                raise SourceUnavailable(f"Confluence's next page points off the site: {links}")

    def summary(self) -> str:
        """One line for ``footnote sync``'s report."""
        return self.counts.line() if self.attachments else ""

    # --- HTTP ------------------------------------------------------------------------------

    @property
    def _base(self) -> str:
        return f"{self.site.rstrip('/')}/wiki"

    def _search(self, cql: str, expand: str, limit: int) -> Iterator[dict[str, Any]]:
        """Every result of a CQL content search, following ``_links.next`` to the end."""
        path: str | None = "/rest/api/content/search?" + urlencode(
            {"cql": cql, "expand": expand, "limit": limit}
        )
        while path:
            reply = self._request(self._base + path, f"the search {cql!r}")
            yield from reply.get("results") or []
            links = reply.get("_links") or {}
            path = links.get("next")
            if path and str(links.get("base") or self._base).rstrip("/") != self._base:
                raise SourceUnavailable(f"Confluence's next page points off the site: {links}")

    def _get(self, path: str, params: Mapping[str, str], what: str) -> dict[str, Any]:
        return self._request(f"{self._base}/rest/api{path}?{urlencode(params)}", what)

    def _request(self, url: str, what: str) -> dict[str, Any]:
        """One GET of JSON; see ``_send``."""
        response = self._send(url, what)
        if response.status_code == 200:
            try:
                data = response.json()
            except ValueError as exc:
                raise SourceUnavailable(f"Confluence answered {what} with no JSON") from exc
            if isinstance(data, dict):
                return data
        self._refused(response, what)

    def _download(self, url: str, what: str) -> bytes:
        """A file's bytes, at most ``max_bytes`` of them (``TooLarge`` past that)."""
        response = self._send(url, what, limit=self.max_bytes)
        if response.status_code != 200:
            self._refused(response, what)
        return response.content

    def _send(self, url: str, what: str, limit: int | None = None) -> httpx.Response:
        """One GET with the account's API token, retried on 429 / 503 after their Retry-After
        (bounded) and on a dropped connection. 401 names the variables to fix."""
        response: httpx.Response | None = None
        for attempt in range(self.retries + 1):
            try:
                response = self._hops(url, limit)
            except httpx.TransportError as exc:
                if attempt == self.retries:
                    raise SourceUnavailable(f"cannot reach Confluence for {what}: {exc}") from exc
                self.sleep(min(2.0**attempt, self.max_wait_s))
                continue
            if response.status_code not in (429, 503) or attempt == self.retries:
                break
            self.sleep(retry_after(response.headers.get("retry-after"), attempt, self.max_wait_s))
        assert response is not None
        if response.status_code == 401:
            raise ConfluenceAuthError(
                f"Confluence refused the credentials ({_message(response)}): the API token in "
                f"{TOKEN_VAR} is expired or revoked, or it does not belong to {EMAIL_VAR}"
            )
        return response

    def _hops(self, url: str, limit: int | None) -> httpx.Response:
        """A GET that follows redirects itself: the API token goes to the site alone, never to
        the host a download redirects to (Confluence's media service, with a signed URL). The
        body is read up to ``limit`` bytes."""
        auth = base64.b64encode(f"{self.email}:{self.token.get_secret_value()}".encode()).decode()
        site = _origin(self._base)
        for _ in range(REDIRECTS + 1):
            headers = {"Accept": "application/json"}
            if _origin(url) == site:
                headers["Authorization"] = f"Basic {auth}"
            self.requests += 1
            with self.client.stream("GET", url, headers=headers) as r:
                if r.is_redirect and "location" in r.headers:
                    url = urljoin(url, r.headers["location"])
                    if urlsplit(url).scheme not in ("http", "https"):
                        raise SourceUnavailable(f"Confluence redirected to {url[:80]!r}")
                    continue
                data = bytearray()
                for chunk in r.iter_bytes():
                    data += chunk
                    if limit is not None and len(data) > limit:
                        raise TooLarge(_too_large(len(data), self, "at least "))
                return httpx.Response(
                    r.status_code, headers=r.headers, content=bytes(data), request=r.request
                )
        raise SourceUnavailable(f"Confluence redirected more than {REDIRECTS} times: {url[:80]!r}")

    def _refused(self, response: httpx.Response, what: str) -> NoReturn:
        tries = f" after {self.retries + 1} tries" if response.status_code in (429, 503) else ""
        raise SourceUnavailable(
            f"Confluence answered {what} with HTTP {response.status_code}{tries}: "
            f"{_message(response)}"
        )

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            log.warning("%s", message)


def _cursor(cursor: str | None) -> dict[str, Any]:
    try:
        data = json.loads(cursor) if cursor else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _retry(version: str) -> str:
    """A page's version marked so that the next sync fetches it again (and lists its
    attachments): one of them could not be downloaded this time."""
    return json.dumps({**json.loads(version), "retry": True}, sort_keys=True)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.lower()


def _media_type(att: Mapping[str, Any]) -> str:
    """What the attachment is: Confluence's media type, or its file name's where Confluence
    only says ``application/octet-stream``."""
    media = (
        str(
            (att.get("metadata") or {}).get("mediaType")
            or (att.get("extensions") or {}).get("mediaType")
            or ""
        )
        .split(";")[0]
        .strip()
        .lower()
    )
    if media in MEDIA_TYPES:
        return media
    suffix = Path(str(att.get("title") or "")).suffix.lower()
    if media in ("", "application/octet-stream", "binary/octet-stream") and suffix in SUFFIX_TYPES:
        return SUFFIX_TYPES[suffix]
    return media or "an unknown type"


def _too_large(size: int, conn: ConfluenceConnector, at: str = "") -> str:
    return (
        f"too large: {at}{size} bytes, over the {conn.max_bytes}-byte limit "
        "(FOOTNOTE_INGEST__MAX_FILE_MB)"
    )


def _lost_readers(old: str | None, new: str) -> bool:
    """Whether a page's recorded principals include someone its current ones leave out."""
    if old is None:
        return False
    before = set(json.loads(old).get("principals") or [])
    after = set(json.loads(new).get("principals") or [])
    return EVERYONE not in after and bool(before - after)


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.reason_phrase
    message = body.get("message") if isinstance(body, dict) else None
    return str(message)[:200] if message else response.reason_phrase


def load_group_map(path: Path, platform: str = "Confluence") -> dict[str, tuple[str, ...]]:
    """A platform's group name → the directory's principals, for groups not synced from the IdP
    (Confluence groups, SharePoint site groups): ``hr-team: hr``, ``leads: [managers,
    group:leads]``, ``everyone-here: "*"``."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read the {platform} group mapping {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"the {platform} group mapping {path} must map group names to groups")
    out: dict[str, tuple[str, ...]] = {}
    for name, value in data.items():
        values = value if isinstance(value, list) else [value]
        out[str(name)] = tuple(sorted({principal(str(v)) for v in values}))
    return out


_HEADING = re.compile(r"h[1-6]")


def storage_html(title: str, storage: str) -> str:
    """A page's storage format (XHTML with ``ac:`` / ``ri:`` macros) as HTML our parser reads:
    macro parameters dropped (they are settings, not text), headings given the anchors Confluence
    links them by, the title first. The page's text stays text: it is escaped where it is put."""
    from html import escape

    from bs4 import BeautifulSoup

    soup = BeautifulSoup(storage, "html.parser")
    for tag in soup.find_all(["ac:parameter", "ac:placeholder", "script", "style"]):
        tag.decompose()
    for heading in soup.find_all(_HEADING):
        words = heading.get_text(" ").split()
        if words and not heading.get("id"):
            heading["id"] = "-".join(words)
    head = f"<title>{escape(title)}</title>" if title else ""
    return f"<html><head>{head}</head><body>{soup}</body></html>"
