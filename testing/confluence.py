"""A loopback Confluence Cloud site speaking the REST API's documented JSON (v1, ``/wiki/rest/api``).

What the connector calls, and nothing else:

* ``GET /wiki/rest/api/space/{key}?expand=permissions``: the space with its ``permissions``
  (``operation`` / ``subjects.user|group.results`` / ``anonymousAccess``);
* ``GET /wiki/rest/api/content/search?cql=…&expand=…&limit=…``: content by CQL (``space in (…)``,
  ``space = …``, ``type=page``, ``id in (…)``), ``limit`` capped at ``max_limit``, the next page
  in ``_links.next`` (an opaque ``cursor``, relative to ``_links.base``), with the expansions
  asked for: ``version``, ``space``, ``ancestors``, ``history``, ``body.storage``,
  ``restrictions.read.restrictions.user|group``;
* ``GET /wiki/rest/api/content/{pageId}/child/attachment?expand=version&limit=…``: a page's
  attachments (``id`` ``att<n>``, ``title``, ``metadata.mediaType``, ``extensions.mediaType`` /
  ``fileSize``, ``version``, ``_links.webui`` / ``download``), ``start``/``limit`` paging with the
  next page in ``_links.next``;
* ``GET /wiki/download/attachments/{pageId}/{file name}?version=…&api=v2``: ``302`` to the
  file on the media service, as Confluence Cloud answers. The media service is this same server
  under another host name (``localhost``), so a client that sends its API token there is seen
  (``media_auth``); it needs the signed ``token`` of the redirect, not Basic auth.

Every request needs HTTP Basic auth with ``email``/``token``; otherwise ``401`` with Confluence's
error body. ``throttle(n, retry_after, page=…, status=429)`` answers the next ``n`` matching requests
``429`` (or ``503``) with ``Retry-After``; ``page`` may name an attachment (``att…``): its
download is throttled.
``requests`` records (path, query, status); ``fetches(page_id)`` counts the body requests that
named a page, answered or not; ``downloads(attachment_id)`` an attachment's download requests;
``listings()`` names the page of each attachment listing.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from testing.web import LoopbackServer


@dataclass
class User:
    account_id: str
    name: str
    email: str = ""  # "" : the profile hides it, as Confluence does by default

    def json(self) -> dict[str, Any]:
        return {
            "type": "known",
            "accountId": self.account_id,
            "accountType": "atlassian",
            "email": self.email,
            "publicName": self.name,
            "displayName": self.name,
        }


@dataclass
class FakePage:
    id: str
    space: str
    title: str
    body: str  # storage format
    number: int = 1
    when: str = "2026-11-30T09:00:00.000Z"
    parent: str | None = None
    read_users: list[User] = field(default_factory=list)
    read_groups: list[str] = field(default_factory=list)
    status: str = "current"  # "trashed": gone from CQL, as Confluence's trash is
    type: str = "page"  # "folder": content that holds pages and may restrict them
    hidden: bool = False  # the sync account may not see it (it never appears in a search)


@dataclass
class FakeAttachment:
    id: str  # att<n>, as Confluence names them
    page: str
    title: str  # the file name
    data: bytes
    media_type: str
    number: int = 1
    when: str = "2026-11-30T09:00:00.000Z"
    listed_size: int | None = None  # a fileSize the listing says that the file is not

    def json(self, base: str) -> dict[str, Any]:
        name = quote(self.title)
        number = self.id.removeprefix("att")
        preview = quote(f"/{self.page}/{number}/{self.title}", safe="")
        return {
            "id": self.id,
            "type": "attachment",
            "status": "current",
            "title": self.title,
            "metadata": {"mediaType": self.media_type, "comment": "", "labels": {"results": []}},
            "extensions": {
                "mediaType": self.media_type,
                "fileSize": len(self.data) if self.listed_size is None else self.listed_size,
                "comment": "",
                "fileId": f"file-{self.id}",
                "collectionName": f"contentId-{self.page}",
            },
            "version": {"number": self.number, "when": self.when, "minorEdit": False},
            "_links": {
                "webui": f"/pages/viewpageattachments.action?pageId={self.page}&preview={preview}",
                "download": f"/download/attachments/{self.page}/{name}"
                f"?version={self.number}&modificationDate=1764493200000&api=v2",
                "self": f"{base}/wiki/rest/api/content/{self.id}",
            },
            "_expandable": {"container": f"/rest/api/content/{self.page}"},
        }


@dataclass
class FakeSpace:
    key: str
    read_groups: list[str] = field(default_factory=list)
    read_users: list[User] = field(default_factory=list)
    anonymous: bool = False


@dataclass
class LoopbackConfluence(LoopbackServer):
    email: str = "sync@acme.example"
    token: str = "token-1"
    spaces: dict[str, FakeSpace] = field(default_factory=dict)
    pages: dict[str, FakePage] = field(default_factory=dict)
    attachments: dict[str, FakeAttachment] = field(default_factory=dict)
    max_limit: int = 50
    media_auth: int = 0  # media-service requests that carried an Authorization header
    requests: list[tuple[str, dict[str, str], int]] = field(default_factory=list)
    _ids: Any = field(default_factory=lambda: itertools.count(1001))
    _throttles: list[list[Any]] = field(default_factory=list)  # [times, retry_after, page, status]
    _cursors: dict[str, tuple[str, int]] = field(default_factory=dict)  # cursor → (query, start)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # --- content ---------------------------------------------------------------------------

    def space(self, key: str, groups: list[str] | None = None, **kw: Any) -> FakeSpace:
        self.spaces[key] = FakeSpace(key, list(groups or []), **kw)
        return self.spaces[key]

    def put(
        self, space: str, title: str, body: str, parent: str | None = None, type: str = "page"
    ) -> str:
        pid = str(next(self._ids))
        self.pages[pid] = FakePage(pid, space, title, body, parent=parent, type=type)
        return pid

    def edit(self, pid: str, body: str) -> None:
        page = self.pages[pid]
        page.body, page.number = body, page.number + 1
        page.when = f"2026-12-01T{page.number % 24:02d}:00:00.000Z"

    def attach(self, pid: str, title: str, data: bytes, media_type: str = "application/pdf") -> str:
        """A file on a page; its id, ``att<n>``."""
        aid = f"att{next(self._ids)}"
        self.attachments[aid] = FakeAttachment(aid, pid, title, data, media_type)
        return aid

    def replace_file(self, aid: str, data: bytes) -> None:
        """A new version of the attachment; the page's version does not move."""
        att = self.attachments[aid]
        att.data, att.number = data, att.number + 1

    def downloads(self, aid: str) -> int:
        """Download requests for the attachment (the redirecting ones), answered or not."""
        att = self.attachments[aid]
        path = f"/wiki/download/attachments/{att.page}/{quote(att.title)}"
        return sum(1 for p, _, _ in self.requests if p == path)

    def listings(self) -> list[str]:
        """The pages whose attachments were listed, one entry per request."""
        return [p.split("/")[-3] for p, _, _ in self.requests if p.endswith("/child/attachment")]

    def restrict(
        self, pid: str, users: list[User] | None = None, groups: list[str] | None = None
    ) -> None:
        """Set the page's read restrictions; none: unrestricted. The version does not move."""
        self.pages[pid].read_users = list(users or [])
        self.pages[pid].read_groups = list(groups or [])

    def throttle(
        self, times: int, retry_after: str = "1", page: str | None = None, status: int = 429
    ) -> None:
        """Answer the next ``times`` requests (naming ``page``, if given) with ``status``."""
        self._throttles.append([times, retry_after, page, status])

    def fetches(self, pid: str) -> int:
        return sum(1 for _, q, _ in self.requests if pid in _ids_in(q.get("cql", "")))

    def searches(self) -> list[dict[str, str]]:
        return [q for p, q, _ in self.requests if p.endswith("/content/search")]

    # --- serving ---------------------------------------------------------------------------

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        with self._lock:
            if parts.path.startswith("/media/"):
                status, headers, body = self._media(parts.path, query, h.headers)
            else:
                auth = h.headers.get("Authorization")
                status, headers, body = self._answer(parts.path, query, auth)
            self.requests.append((parts.path, query, status))
        kind = "application/json"
        if isinstance(body, bytes):
            data, kind = body, headers.pop("Content-Type", "application/octet-stream")
        else:
            data = json.dumps(body).encode()
        h.send_response(status)
        for k, v in {"Content-Type": kind, **headers}.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _answer(
        self, path: str, query: dict[str, str], auth: str | None
    ) -> tuple[int, dict[str, str], Any]:
        expected = base64.b64encode(f"{self.email}:{self.token}".encode()).decode()
        if auth != f"Basic {expected}":
            return 401, {}, _error(401, "Current user not permitted to use Confluence")
        named = _ids_in(query.get("cql", ""))
        download = re.fullmatch(r"/wiki/download/attachments/(\d+)/([^/]+)", path)
        if download:
            named |= {
                a.id
                for a in self.attachments.values()
                if a.page == download.group(1) and quote(a.title) == download.group(2)
            }
        for t in self._throttles:
            if t[0] > 0 and (t[2] is None or t[2] in named):
                t[0] -= 1
                message = "Rate limit exceeded" if t[3] == 429 else "Service Unavailable"
                return t[3], {"Retry-After": t[1]}, _error(t[3], message)
        if m := re.fullmatch(r"/wiki/rest/api/space/([^/]+)", path):
            space = self.spaces.get(m.group(1))
            if space is None:
                return 404, {}, _error(404, f"No space with key : {m.group(1)}")
            return 200, {}, self._space(space, query)
        if path == "/wiki/rest/api/content/search":
            return self._search(query)
        if m := re.fullmatch(r"/wiki/rest/api/content/(\d+)/child/attachment", path):
            return self._children(m.group(1), query)
        if download:
            return self._download(download.group(1), download.group(2), query)
        return 404, {}, _error(404, "null for uri")

    def _visible(self, pid: str) -> bool:
        page = self.pages.get(pid)
        return page is not None and page.status == "current" and not page.hidden

    def _children(self, pid: str, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        if not self._visible(pid):
            return 404, {}, _error(404, f"No content found with id: ContentId{{id={pid}}}")
        found = sorted((a for a in self.attachments.values() if a.page == pid), key=lambda a: a.id)
        start = int(query.get("start", 0))
        limit = min(int(query.get("limit", 25)), self.max_limit)
        chunk = found[start : start + limit]
        results = [a.json(self.url) for a in chunk]
        if "version" not in query.get("expand", ""):
            for r in results:
                del r["version"]
        out: dict[str, Any] = {
            "results": results,
            "start": start,
            "limit": limit,
            "size": len(chunk),
            "_links": {"base": f"{self.url}/wiki", "context": "/wiki"},
        }
        if start + limit < len(found):
            params = {**query, "start": start + limit, "limit": limit}
            out["_links"]["next"] = f"/rest/api/content/{pid}/child/attachment?{urlencode(params)}"
        return 200, {}, out

    def _download(
        self, pid: str, name: str, query: dict[str, str]
    ) -> tuple[int, dict[str, str], Any]:
        att = next(
            (a for a in self.attachments.values() if a.page == pid and quote(a.title) == name),
            None,
        )
        if att is None or not self._visible(pid):
            return 404, {}, _error(404, "Attachment not found")
        port = urlsplit(self.url).port
        token = f"signed-{att.id}-{att.number}"
        location = f"http://localhost:{port}/media/file/file-{att.id}/binary?token={token}"
        return 302, {"Location": location}, b""

    def _media(
        self, path: str, query: dict[str, str], headers: Any
    ) -> tuple[int, dict[str, str], Any]:
        """Confluence's media service: the signed token is the credential."""
        if headers.get("Authorization"):
            self.media_auth += 1
        m = re.fullmatch(r"/media/file/file-(att\d+)/binary", path)
        att = self.attachments.get(m.group(1)) if m else None
        if att is None or query.get("token") != f"signed-{att.id}-{att.number}":
            return 401, {}, {"error": "invalid token"}
        return 200, {"Content-Type": att.media_type}, att.data

    def _space(self, space: FakeSpace, query: dict[str, str]) -> dict[str, Any]:
        out: dict[str, Any] = {"id": 1, "key": space.key, "name": space.key, "type": "global"}
        if "permissions" in query.get("expand", ""):
            out["permissions"] = [
                {
                    "id": 10,
                    "subjects": _subjects(space.read_users, space.read_groups),
                    "operation": {"operation": "read", "targetType": "space"},
                    "anonymousAccess": False,
                    "unlicensedAccess": False,
                },
                {
                    "id": 11,
                    "subjects": _subjects([], ["confluence-administrators"]),
                    "operation": {"operation": "administer", "targetType": "space"},
                    "anonymousAccess": False,
                    "unlicensedAccess": False,
                },
            ]
            if space.anonymous:
                out["permissions"].append(
                    {
                        "id": 12,
                        "operation": {"operation": "read", "targetType": "space"},
                        "anonymousAccess": True,
                        "unlicensedAccess": False,
                    }
                )
        return out

    def _search(self, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        if "cursor" in query:  # a next link: the query it continues, from where it stopped
            if query["cursor"] not in self._cursors:
                return 400, {}, _error(400, "Invalid cursor")
            cql_query, start = self._cursors[query["cursor"]]
            query = {**json.loads(cql_query), "cursor": query["cursor"]}
        else:
            start = 0
        try:
            hits = self._cql(query.get("cql", ""))
        except ValueError as exc:
            return 400, {}, _error(400, f"Could not parse cql : {exc}")
        limit = min(int(query.get("limit", 25)), self.max_limit)
        expand = set(query.get("expand", "").split(","))
        chunk = hits[start : start + limit]
        out: dict[str, Any] = {
            "results": [self._content(p, expand) for p in chunk],
            "start": start,
            "limit": limit,
            "size": len(chunk),
            "_links": {"base": f"{self.url}/wiki", "context": "/wiki"},
        }
        if start + limit < len(hits):
            base = {k: v for k, v in query.items() if k != "cursor"}
            token = f"c{len(self._cursors) + 1}"
            self._cursors[token] = (json.dumps(base), start + limit)
            params = urlencode({"next": "true", "cursor": token, "limit": limit})
            out["_links"]["next"] = f"/rest/api/content/search?{params}"
        return 200, {}, out

    def _cql(self, cql: str) -> list[FakePage]:
        pages = [p for p in self.pages.values() if p.status == "current" and not p.hidden]
        for clause in re.split(r"\s+and\s+", cql.strip(), flags=re.I):
            if m := re.fullmatch(r"type\s*=\s*\"?(\w+)\"?", clause):
                pages = [p for p in pages if p.type == m.group(1)]
            elif m := re.fullmatch(r"space\s+in\s*\(([^)]*)\)|space\s*=\s*(\S+)", clause):
                keys = {k.strip().strip('"') for k in (m.group(1) or m.group(2)).split(",")}
                pages = [p for p in pages if p.space in keys]
            elif m := re.fullmatch(r"id\s+in\s*\(([^)]*)\)", clause):
                wanted = {k.strip().strip('"') for k in m.group(1).split(",")}
                pages = [p for p in pages if p.id in wanted]
            else:
                raise ValueError(clause)
        return sorted(pages, key=lambda p: int(p.id))

    def _content(self, page: FakePage, expand: set[str]) -> dict[str, Any]:
        webui = (
            f"/spaces/{page.space}/pages/{page.id}/{quote(page.title.replace(' ', '+'), safe='+')}"
        )
        out: dict[str, Any] = {
            "id": page.id,
            "type": page.type,
            "status": page.status,
            "title": page.title,
            "_links": {"webui": webui, "self": f"{self.url}/wiki/rest/api/content/{page.id}"},
            "_expandable": {},
        }
        if "version" in expand:
            out["version"] = {"number": page.number, "when": page.when, "minorEdit": False}
        if "space" in expand:
            out["space"] = {"key": page.space, "name": page.space, "type": "global"}
        if "ancestors" in expand:
            out["ancestors"] = [
                {"id": a, "type": self.pages[a].type} for a in self._ancestors(page)
            ]
        if "history" in expand:
            out["history"] = {"latest": True, "createdBy": {"displayName": "Page Owner"}}
        if "body.storage" in expand:
            out["body"] = {"storage": {"value": page.body, "representation": "storage"}}
        if any(e.startswith("restrictions.read") for e in expand):
            out["restrictions"] = {
                "read": {
                    "operation": "read",
                    "restrictions": _subjects(page.read_users, page.read_groups),
                }
            }
        return out

    def _ancestors(self, page: FakePage) -> list[str]:
        chain, parent = [], page.parent
        while parent and parent in self.pages:
            chain.append(parent)
            parent = self.pages[parent].parent
        return chain[::-1]  # root first, as Confluence lists them


def _subjects(users: list[User], groups: list[str]) -> dict[str, Any]:
    return {
        "user": {
            "results": [u.json() for u in users],
            "start": 0,
            "limit": 200,
            "size": len(users),
        },
        "group": {
            "results": [{"type": "group", "name": g, "id": f"id-{g}"} for g in groups],
            "start": 0,
            "limit": 200,
            "size": len(groups),
        },
    }


def _error(status: int, message: str) -> dict[str, Any]:
    return {
        "statusCode": status,
        "data": {"authorized": status != 401, "valid": True, "errors": [], "successful": False},
        "message": message,
    }


def _ids_in(cql: str) -> set[str]:
    m = re.search(r"id\s+in\s*\(([^)]*)\)", cql)
    return {k.strip().strip('"') for k in m.group(1).split(",")} if m else set()
