"""A loopback Microsoft Graph (v1.0) and Entra ID token endpoint, speaking their documented JSON.

What the SharePoint connector calls, and nothing else:

* ``POST /{tenant}/oauth2/v2.0/token``: the client-credentials grant (form-encoded
  ``client_id``, ``client_secret``, ``grant_type``, ``scope=…/.default``); a token lives
  ``token_ttl`` seconds, or until ``expire_tokens()``. Refusals use Entra ID's body
  (``error``, ``error_description`` with an ``AADSTS`` code).
* ``GET /v1.0/sites/{host}:/{path}``, ``/v1.0/sites/{id}/drives``, ``/v1.0/drives/{id}``;
* ``GET /v1.0/drives/{id}/root/delta``: a full enumeration (root and folders first, then
  files, ``page_size`` a page, ``@odata.nextLink`` with a ``$skiptoken``), ending with an
  ``@odata.deltaLink`` whose ``token`` later lists only what changed since: edits, moves,
  deletions (the ``deleted`` facet, no name, as OneDrive for Business sends them; no ``cTag``
  on changed items either). A change of sharing alone is listed only when the request says
  ``Prefer: deltashowsharingchanges`` (with ``deltashowremovedasdeleted`` and
  ``deltatraversepermissiongaps``, which Graph requires with it), annotated
  ``@microsoft.graph.sharedChanged``; it reaches every file that inherits from the item.
  ``forget_deltas()`` makes older tokens answer ``410 Gone`` (``resyncChangesApplyDifferences``)
  with a ``Location`` to enumerate again from;
* ``GET /v1.0/drives/{d}/items/{i}``, ``…/permissions`` (the item's own grants and, unless it
  has unique permissions, its ancestors', with ``inheritedFrom``), ``…/content`` (``302`` to a
  pre-authenticated ``/download/…?tempauth=…`` URL that takes no bearer token).

And what the bot's directory calls (``bot/identity/graph_directory.py``), from ``user`` and ``group``:

* ``GET /v1.0/users/{id | userPrincipalName}`` (``$select`` honoured), ``404
  Request_ResourceNotFound`` for someone Entra ID lacks;
* ``GET /v1.0/users?$filter=mail eq '…' or userPrincipalName eq '…'`` (OData strings, a quote
  doubled inside one); any other filter is ``400 Request_UnsupportedQuery``;
* ``GET /v1.0/users/{id}/transitiveMemberOf/microsoft.graph.group``: every group the user is in,
  directly or through nested groups, ``$top`` a page (``member_page_size`` at most) with an
  ``@odata.nextLink``. The OData cast needs ``ConsistencyLevel: eventual`` and ``$count=true``, as
  Graph demands, else ``400 Request_UnsupportedQuery``.

Graph errors are ``{"error": {"code", "message", "innerError"}}``. ``throttle(n, retry_after,
path=…, status=429)`` answers the next ``n`` requests whose path contains ``path`` with ``429``
(or ``503``) and ``Retry-After``. ``requests`` records (method, path, query, status);
``latency_s`` delays every GET, ``hold`` (an event) keeps every GET waiting until the test sets
it, ``meet = n`` keeps GETs of file content waiting until ``n`` GETs are in flight at once (then
lets all through), and ``peak`` is the most GETs that were in flight at once.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from testing.web import LoopbackServer

# --- identities and grants, in Graph's shapes ---------------------------------------------------


def person(email: str, name: str = "", show_email: bool = True) -> dict[str, Any]:
    """A person as a sharePointIdentitySet: the Entra ID user and their SharePoint login."""
    display = name or email.split("@")[0].title()
    user: dict[str, Any] = {"id": f"oid-{email.lower()}", "displayName": display}
    if show_email:
        user["email"] = email
    return {
        "user": user,
        "siteUser": {
            "id": str(zlib.crc32(email.encode()) % 1000),
            "displayName": display,
            "loginName": f"i:0#.f|membership|{email}" if show_email else display,
        },
    }


def entra_group(object_id: str, name: str = "") -> dict[str, Any]:
    return {"group": {"id": object_id, "displayName": name or object_id}}


def site_group(group_id: str, name: str) -> dict[str, Any]:
    return {"siteGroup": {"id": group_id, "displayName": name, "loginName": name}}


def granted(identity: dict[str, Any], role: str = "read") -> dict[str, Any]:
    """A permission granted directly (``grantedToV2``)."""
    return {"roles": [role], "grantedToV2": identity}


def link(scope: str, people: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A sharing link: ``organization``, ``anonymous``, ``users`` (with ``people``) or
    ``existingAccess``."""
    perm: dict[str, Any] = {
        "roles": ["read"],
        "link": {"scope": scope, "type": "view", "preventsDownload": False},
        "hasPassword": False,
    }
    if people:
        perm["grantedToIdentitiesV2"] = people
    return perm


# --- the directory: users and groups ------------------------------------------------------------


@dataclass
class FakeUser:
    id: str  # the Entra ID object id
    display_name: str
    mail: str
    upn: str
    enabled: bool = True
    user_type: str = "Member"  # or "Guest"

    def resource(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "displayName": self.display_name,
            "mail": self.mail or None,
            "userPrincipalName": self.upn,
            "accountEnabled": self.enabled,
            "userType": self.user_type,
        }


@dataclass
class FakeGroup:
    id: str
    display_name: str
    members: list[str] = field(default_factory=list)  # user or group object ids


# --- the drive's contents ------------------------------------------------------------------------


@dataclass
class FakeItem:
    id: str
    name: str
    parent: str | None  # None: the drive's root
    folder: bool = False
    content: bytes = b""
    mime: str = "text/plain"
    grants: list[dict[str, Any]] = field(default_factory=list)  # its own permissions
    inherits: bool = True  # False: unique permissions, its ancestors' do not apply
    deleted: bool = False
    content_version: int = 1
    meta_version: int = 1
    seq: int = 0  # the change that last touched it, sharing aside
    shared_seq: int = 0  # the change that last touched who may read it


@dataclass
class FakeDrive:
    id: str
    name: str
    web_url: str
    root: str
    items: dict[str, FakeItem] = field(default_factory=dict)


@dataclass
class FakeSite:
    id: str
    host: str
    path: str
    drives: list[str] = field(default_factory=list)

    @property
    def web_url(self) -> str:
        return f"https://{self.host}{self.path}"


@dataclass
class LoopbackGraph(LoopbackServer):
    tenant: str = "tenant-1"
    client_id: str = "client-1"
    client_secret: str = "secret-1"
    token_ttl: int = 3599
    page_size: int = 200
    sites: dict[str, FakeSite] = field(default_factory=dict)
    drives: dict[str, FakeDrive] = field(default_factory=dict)
    users: dict[str, FakeUser] = field(default_factory=dict)
    groups: dict[str, FakeGroup] = field(default_factory=dict)
    member_page_size: int = 100  # Graph's default page of transitiveMemberOf
    requests: list[tuple[str, str, dict[str, str], int]] = field(default_factory=list)
    seq: int = 0
    oldest_token: int = 0  # delta tokens below this answer 410
    latency_s: float = 0.0  # added to every GET, as a real tenant's round trip would
    hold: threading.Event | None = None  # when set here, GETs wait until the test sets it
    meet: int = 0  # content GETs wait until this many GETs are in flight at once
    peak: int = 0  # the most GETs in flight at once
    _in_flight: int = 0
    _meeting: threading.Condition = field(default_factory=threading.Condition)
    _tokens: dict[str, float] = field(default_factory=dict)  # access token → expiry (time.time)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _throttles: list[list[Any]] = field(default_factory=list)  # [times, retry_after, path, status]
    _server: ThreadingHTTPServer | None = None
    _lock: threading.RLock = field(default_factory=threading.RLock)

    # --- content ---------------------------------------------------------------------------

    def site(self, host: str, path: str, library: str = "Documents") -> FakeSite:
        n = next(self._ids)
        site = FakeSite(f"{host},{n:08d}-0000-4000-8000-000000000000,{n:08d}-1111", host, path)
        self.sites[site.id] = site
        self.library(site, library)
        return site

    def library(self, site: FakeSite, name: str) -> FakeDrive:
        n = next(self._ids)
        web = site.web_url + ("/Shared%20Documents" if name == "Documents" else f"/{quote(name)}")
        drive = FakeDrive(f"b!drive{n:04d}", name, web, root=f"01ROOT{n:06d}")
        drive.items[drive.root] = FakeItem(drive.root, "root", None, folder=True)
        self.drives[drive.id] = drive
        site.drives.append(drive.id)
        return drive

    def onedrive(self, owner: str) -> FakeDrive:
        n = next(self._ids)
        folder = owner.replace("@", "_").replace(".", "_")
        web = f"https://acme-my.sharepoint.com/personal/{folder}/Documents"
        drive = FakeDrive(f"b!onedrive{n:04d}", "OneDrive", web, root=f"01ROOT{n:06d}")
        drive.items[drive.root] = FakeItem(drive.root, "root", None, folder=True)
        self.drives[drive.id] = drive
        return drive

    def folder(
        self,
        drive: FakeDrive,
        name: str,
        parent: str | None = None,
        grants: list[dict[str, Any]] | None = None,
        inherits: bool = True,
    ) -> str:
        return self._add(
            drive,
            FakeItem("", name, parent or drive.root, True, b"", "", list(grants or []), inherits),
        )

    def put(
        self,
        drive: FakeDrive,
        name: str,
        content: str | bytes,
        parent: str | None = None,
        mime: str = "text/html",
        grants: list[dict[str, Any]] | None = None,
        inherits: bool = True,
    ) -> str:
        data = content.encode() if isinstance(content, str) else content
        item = FakeItem(
            "", name, parent or drive.root, False, data, mime, list(grants or []), inherits
        )
        return self._add(drive, item)

    def edit(self, drive: FakeDrive, item_id: str, content: str | bytes) -> None:
        with self._lock:
            item = drive.items[item_id]
            item.content = content.encode() if isinstance(content, str) else content
            item.content_version += 1
            item.seq = self._next()

    def move(self, drive: FakeDrive, item_id: str, parent: str) -> None:
        """Move an item to another folder: its own change, and a sharing change for whatever
        inherits a different set of permissions there."""
        with self._lock:
            item = drive.items[item_id]
            item.parent, item.meta_version, item.seq = parent, item.meta_version + 1, self._next()
            self._shared(drive, item_id)

    def share(
        self,
        drive: FakeDrive,
        item_id: str,
        grants: list[dict[str, Any]],
        inherits: bool | None = None,
    ) -> None:
        """Set an item's own permissions (and whether its ancestors' apply). No version moves:
        only a delta that asks for sharing changes lists it, and what inherits from it."""
        with self._lock:
            item = drive.items[item_id]
            item.grants = list(grants)
            if inherits is not None:
                item.inherits = inherits
            self._shared(drive, item_id)

    def delete(self, drive: FakeDrive, item_id: str) -> None:
        with self._lock:
            seq = self._next()
            for iid in [item_id, *self._descendants(drive, item_id)]:
                drive.items[iid].deleted, drive.items[iid].seq = True, seq

    def user(
        self,
        email: str,
        name: str = "",
        *,
        enabled: bool = True,
        guest: bool = False,
        mail: bool = True,
    ) -> FakeUser:
        """A user whose UPN is ``email`` (``mail`` False: a mailbox-less account, ``mail`` null)."""
        n = next(self._ids)
        upn = email if not guest else email.replace("@", "_") + "#EXT#@acme.onmicrosoft.com"
        found = FakeUser(
            f"{n:08d}-aaaa-4000-8000-{zlib.crc32(email.encode()):012d}",
            name or email.split("@")[0].title(),
            email if mail else "",
            upn,
            enabled,
            "Guest" if guest else "Member",
        )
        with self._lock:
            self.users[found.id] = found
        return found

    def group(self, name: str, members: Sequence[FakeUser | FakeGroup] = ()) -> FakeGroup:
        """A security group; its members are users or other groups (nesting)."""
        n = next(self._ids)
        found = FakeGroup(f"{n:08d}-9999-4000-8000-000000000000", name, [m.id for m in members])
        with self._lock:
            self.groups[found.id] = found
        return found

    def add_member(self, group: FakeGroup, member: FakeUser | FakeGroup) -> None:
        with self._lock:
            group.members.append(member.id)

    def remove_member(self, group: FakeGroup, member: FakeUser | FakeGroup) -> None:
        with self._lock:
            group.members.remove(member.id)

    def throttle(
        self, times: int, retry_after: str = "1", path: str | None = None, status: int = 429
    ) -> None:
        """Answer the next ``times`` requests whose path contains ``path`` with ``status``."""
        self._throttles.append([times, retry_after, path, status])

    def expire_tokens(self) -> None:
        """Every access token issued so far is past its lifetime."""
        with self._lock:
            self._tokens = dict.fromkeys(self._tokens, 0.0)

    def forget_deltas(self) -> None:
        """Graph no longer honours any delta token issued so far: they answer 410 Gone."""
        with self._lock:
            self.oldest_token = self._next()

    def fetched(self, item_id: str) -> int:
        """Requests for an item's content, answered or not."""
        return sum(1 for m, p, _, _ in self.requests if p.endswith(f"/items/{item_id}/content"))

    def count(self, kind: str) -> int:
        """Requests of one kind: token, site, drives, delta, item, permissions, content,
        download; for the directory, user (by id), users (by filter) or memberOf."""
        return sum(1 for m, p, _, _ in self.requests if _kind(m, p) == kind)

    # --- internals -------------------------------------------------------------------------

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def _add(self, drive: FakeDrive, item: FakeItem) -> str:
        with self._lock:
            item.id = f"01ITEM{next(self._ids):08d}"
            item.seq = item.shared_seq = self._next()
            drive.items[item.id] = item
            return item.id

    def _descendants(self, drive: FakeDrive, item_id: str) -> list[str]:
        out, frontier = [], [item_id]
        while frontier:
            kids = [i.id for i in drive.items.values() if i.parent in frontier and not i.deleted]
            out += kids
            frontier = kids
        return out

    def _shared(self, drive: FakeDrive, item_id: str) -> None:
        seq = self._next()
        drive.items[item_id].shared_seq = seq
        for iid in self._descendants(drive, item_id):
            if self._inherits_from(drive, iid, item_id):
                drive.items[iid].shared_seq = seq

    def _inherits_from(self, drive: FakeDrive, iid: str, ancestor: str) -> bool:
        item = drive.items[iid]
        while item.id != ancestor:
            if not item.inherits or item.parent is None:
                return False
            item = drive.items[item.parent]
        return True

    def _path(self, drive: FakeDrive, item: FakeItem) -> str:
        parts = []
        while item.parent is not None:
            parts.append(item.name)
            item = drive.items[item.parent]
        return "/".join(reversed(parts))

    def _permissions(self, drive: FakeDrive, item: FakeItem) -> list[dict[str, Any]]:
        out = [{"id": f"{item.id}-{n}", **g} for n, g in enumerate(item.grants)]
        holder = item
        while holder.inherits and holder.parent is not None:
            holder = drive.items[holder.parent]
            ref = {"driveId": drive.id, "id": holder.id, "path": f"/drives/{drive.id}/root:"}
            out += [
                {"id": f"{holder.id}-{n}", **g, "inheritedFrom": ref}
                for n, g in enumerate(holder.grants)
            ]
        return out

    def _item(self, drive: FakeDrive, item: FakeItem, in_delta: bool = False) -> dict[str, Any]:
        if item.deleted:
            return {
                "id": item.id,
                "deleted": {"state": "deleted"},
                "parentReference": {"driveId": drive.id, "driveType": "documentLibrary"},
                **({"folder": {"childCount": 0}} if item.folder else {"file": {}}),
            }
        path = self._path(drive, item)
        out: dict[str, Any] = {
            "id": item.id,
            "name": item.name,
            "eTag": f'"{{{item.id}}},{item.meta_version + item.content_version}"',
            "cTag": f'"c:{{{item.id}}},{item.content_version}"',
            "webUrl": drive.web_url + ("/" + quote(path) if path else ""),
            "size": len(item.content),
            "createdDateTime": "2026-11-02T08:00:00Z",
            "lastModifiedDateTime": f"2026-11-{min(28, 1 + item.content_version):02d}T09:00:00Z",
            "createdBy": {"user": {"displayName": "File Owner", "email": "owner@acme.example"}},
            "parentReference": {
                "driveId": drive.id,
                "driveType": "documentLibrary",
                **({"id": item.parent} if item.parent else {}),
            },
        }
        if in_delta:
            del out["cTag"]  # OneDrive for Business leaves it out of delta's created/modified items
        if item.parent is None:
            out["root"] = {}
            out["folder"] = {"childCount": len(self._descendants(drive, item.id))}
        elif item.folder:
            out["folder"] = {"childCount": len(self._descendants(drive, item.id))}
        else:
            out["file"] = {"mimeType": item.mime, "hashes": {"quickXorHash": "AAAA"}}
        return out

    # --- serving ---------------------------------------------------------------------------

    def _post(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(h.rfile.read(length).decode()).items()}
        with self._lock:
            status, headers, body = self._token(parts.path, form)
            self.requests.append(("POST", parts.path, {}, status))
        self._send(h, status, headers, json.dumps(body).encode())

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        h.__dict__["_in_flight"] = True
        with self._lock:
            self._in_flight += 1
            self.peak = max(self.peak, self._in_flight)
        with self._meeting:
            self._meeting.notify_all()
            if self.meet and h.path.split("?")[0].endswith("/content"):
                # bounded: a client that never has that many in flight fails, not hangs
                self._meeting.wait_for(lambda: self.peak >= self.meet, 30)
        try:
            if self.latency_s:  # a round trip to a real tenant, outside the lock
                time.sleep(self.latency_s)
            if self.hold is not None:
                self.hold.wait(30)  # bounded: a test that never sets it fails, not hangs
            self._serve_get(h)
        finally:
            self._landed(h)

    def _landed(self, h: BaseHTTPRequestHandler) -> None:
        """A GET is no longer in flight once its answer is about to go out: the client may send
        its next request the moment the answer arrives, before this thread runs on."""
        if h.__dict__.pop("_in_flight", False):
            with self._lock:
                self._in_flight -= 1

    def _serve_get(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        with self._lock:
            status, headers, body = self._answer(unquote(parts.path), query, h.headers)
            self.requests.append(("GET", unquote(parts.path), query, status))
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self._send(h, status, headers, data)

    def _send(
        self, h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], data: bytes
    ) -> None:
        self._landed(h)
        h.send_response(status)
        for k, v in {"Content-Type": "application/json", **headers}.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _throttled(self, path: str) -> tuple[int, dict[str, str], Any] | None:
        for t in self._throttles:
            if t[0] > 0 and (t[2] is None or t[2] in path):
                t[0] -= 1
                code = "TooManyRequests" if t[3] == 429 else "serviceNotAvailable"
                return t[3], {"Retry-After": t[1]}, _error(code, "Please retry again later.")
        return None

    def _token(self, path: str, form: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        if throttled := self._throttled(path):
            return throttled
        if path != f"/{self.tenant}/oauth2/v2.0/token":
            tenant = path.strip("/").split("/")[0]
            return 400, {}, _aad("invalid_request", 90002, f"Tenant '{tenant}' not found.")
        if form.get("grant_type") != "client_credentials" or not form.get("scope", "").endswith(
            "/.default"
        ):
            return (
                400,
                {},
                _aad("invalid_scope", 1002012, "The provided value for scope is not valid."),
            )
        if form.get("client_id") != self.client_id:
            return (
                400,
                {},
                _aad(
                    "unauthorized_client",
                    700016,
                    f"Application with identifier '{form.get('client_id')}' was not found in the "
                    f"directory '{self.tenant}'.",
                ),
            )
        if form.get("client_secret") != self.client_secret:
            return 401, {}, _aad("invalid_client", 7000215, "Invalid client secret provided.")
        token = f"eyJ0eXAi.{next(self._ids)}.sig"
        self._tokens[token] = time.time() + self.token_ttl
        return (
            200,
            {},
            {
                "token_type": "Bearer",
                "expires_in": self.token_ttl,
                "ext_expires_in": self.token_ttl,
                "access_token": token,
            },
        )

    def _answer(
        self, path: str, query: dict[str, str], headers: Any
    ) -> tuple[int, dict[str, str], Any]:
        if path.startswith("/download/"):  # pre-authenticated: the tempauth is the key
            _, _, drive_id, item_id = path.split("/", 3)
            drive = self.drives.get(drive_id)
            item = drive.items.get(item_id) if drive else None
            if throttled := self._throttled(path):
                return throttled
            if not item or item.deleted or query.get("tempauth") != _tempauth(item):
                return 401, {"Content-Type": "text/plain"}, b"Unauthorized"
            return 200, {"Content-Type": "application/octet-stream"}, item.content
        bearer = str(headers.get("Authorization") or "").removeprefix("Bearer ")
        if not bearer:
            return 401, {}, _error("InvalidAuthenticationToken", "Access token is empty.")
        if self._tokens.get(bearer, 0.0) <= time.time():
            return (
                401,
                {},
                _error(
                    "InvalidAuthenticationToken",
                    "Lifetime validation failed, the token is expired.",
                ),
            )
        if throttled := self._throttled(path):
            return throttled
        if not path.startswith("/v1.0/"):
            return 400, {}, _error("BadRequest", "Invalid version.")
        route = path.removeprefix("/v1.0")
        if route == "/users" or route.startswith("/users/"):
            return self._users(route.removeprefix("/users").strip("/"), query, headers)
        if route.startswith("/sites/"):
            return self._sites(route.removeprefix("/sites/"))
        parts = route.strip("/").split("/")
        if parts[0] != "drives" or len(parts) < 2 or parts[1] not in self.drives:
            return 404, {}, _error("itemNotFound", "The resource could not be found.")
        drive = self.drives[parts[1]]
        rest = parts[2:]
        if not rest:
            return 200, {}, _drive(drive)
        if rest == ["root", "delta"]:
            return self._delta(drive, query, str(headers.get("Prefer") or ""))
        if len(rest) >= 2 and rest[0] == "items":
            item = drive.items.get(rest[1])
            if item is None or item.deleted:
                return 404, {}, _error("itemNotFound", "The resource could not be found.")
            if len(rest) == 2:
                return 200, {}, self._item(drive, item)
            if rest[2:] == ["permissions"]:
                return (
                    200,
                    {},
                    {
                        "@odata.context": f"{self.url}/v1.0/$metadata#drives('{drive.id}')"
                        f"/items('{item.id}')/permissions",
                        "value": self._permissions(drive, item),
                    },
                )
            if rest[2:] == ["content"] and not item.folder:
                target = f"{self.url}/download/{drive.id}/{item.id}?tempauth={_tempauth(item)}"
                return 302, {"Location": target}, b""
        return 400, {}, _error("invalidRequest", "Invalid request.")

    def _users(
        self, rest: str, query: dict[str, str], headers: Any
    ) -> tuple[int, dict[str, str], Any]:
        context = f"{self.url}/v1.0/$metadata#users"
        if not rest:
            emails = _filter_emails(query.get("$filter", ""))
            if emails is None:
                return 400, {}, _error("Request_UnsupportedQuery", "Unsupported Query.")
            found = [
                u.resource()
                for u in self.users.values()
                if any(e.lower() in (u.mail.lower(), u.upn.lower()) for e in emails)
            ]
            return 200, {}, {"@odata.context": context, "value": _select(found, query)}
        key, _, relation = rest.partition("/")
        user = self.users.get(key) or next(
            (u for u in self.users.values() if u.upn.lower() == key.lower()), None
        )
        if user is None:
            return (
                404,
                {},
                _error(
                    "Request_ResourceNotFound",
                    f"Resource '{key}' does not exist or one of its queried reference-property "
                    "objects are not present.",
                ),
            )
        if not relation:
            return (
                200,
                {},
                {"@odata.context": context + "/$entity", **_select([user.resource()], query)[0]},
            )
        if relation != "transitiveMemberOf/microsoft.graph.group":
            return (
                400,
                {},
                _error("BadRequest", f"Resource not found for the segment '{relation}'."),
            )
        if (
            str(headers.get("ConsistencyLevel") or "").lower() != "eventual"
            or query.get("$count") != "true"
        ):
            return 400, {}, _error("Request_UnsupportedQuery", "Unsupported Query.")
        groups = sorted(self._member_of(user.id), key=lambda g: g.id)
        top = min(int(query.get("$top") or 100), self.member_page_size)
        start = int(query.get("$skiptoken") or 0)
        page = groups[start : start + top]
        body: dict[str, Any] = {
            "@odata.context": f"{self.url}/v1.0/$metadata#groups",
            "@odata.count": len(groups),
            "value": _select(
                [
                    {
                        "@odata.type": "#microsoft.graph.group",
                        "id": g.id,
                        "displayName": g.display_name,
                    }
                    for g in page
                ],
                query,
                keep=("@odata.type",),
            ),
        }
        if start + top < len(groups):
            more = {k: v for k, v in query.items() if k != "$skiptoken"}
            more["$skiptoken"] = str(start + top)
            body["@odata.nextLink"] = (
                f"{self.url}/v1.0/users/{user.id}/transitiveMemberOf/microsoft.graph.group?"
                + urlencode(more)
            )
        return 200, {}, body

    def _member_of(self, member: str) -> list[FakeGroup]:
        """Every group ``member`` is in, directly or through nested groups."""
        found: dict[str, FakeGroup] = {}
        todo = [member]
        while todo:
            oid = todo.pop()
            for g in self.groups.values():
                if oid in g.members and g.id not in found:
                    found[g.id] = g
                    todo.append(g.id)
        return list(found.values())

    def _sites(self, rest: str) -> tuple[int, dict[str, str], Any]:
        if rest.endswith("/drives"):
            site = self.sites.get(rest.removesuffix("/drives"))
            if site is None:
                return 404, {}, _error("itemNotFound", "Requested site could not be found")
            return 200, {}, {"value": [_drive(self.drives[d]) for d in site.drives]}
        host, _, spath = rest.partition(":")
        spath = spath.rstrip(":")
        for site in self.sites.values():
            if site.host == host and site.path.lower() == spath.lower():
                return (
                    200,
                    {},
                    {
                        "id": site.id,
                        "name": site.path.rsplit("/", 1)[-1],
                        "displayName": site.path.rsplit("/", 1)[-1],
                        "webUrl": site.web_url,
                    },
                )
        return 404, {}, _error("itemNotFound", "Requested site could not be found")

    def _delta(
        self, drive: FakeDrive, query: dict[str, str], prefer: str
    ) -> tuple[int, dict[str, str], Any]:
        wants = {p.strip().lower() for p in prefer.split(",") if p.strip()}
        sharing = "deltashowsharingchanges" in wants
        if sharing and not {"deltashowremovedasdeleted", "deltatraversepermissiongaps"} <= wants:
            return (
                400,
                {},
                _error(
                    "invalidRequest",
                    "deltashowsharingchanges requires deltashowremovedasdeleted and "
                    "deltatraversepermissiongaps.",
                ),
            )
        base = f"{self.url}/v1.0/drives/{drive.id}/root/delta"
        if "$skiptoken" in query:
            state = _decode(query["$skiptoken"])
            since, offset, upto = state["s"], state["o"], state["n"]
        elif "token" in query:
            since, offset, upto = _decode(query["token"])["s"], 0, self.seq
        else:
            since, offset, upto = None, 0, self.seq
        if since is not None and since < self.oldest_token:
            return (
                410,
                {"Location": base},
                _error(
                    "resyncChangesApplyDifferences",
                    "Resync required. Replace any local items with the server's version "
                    "(including deletes) if you're sure that the service was up to date with your "
                    "local changes when you last sync'd. Upload any local changes that the server "
                    "doesn't know about.",
                ),
            )
        top = min(int(query.get("$top") or self.page_size), self.page_size)
        if since is None:  # everything there is, folders before what they hold
            items = sorted(
                (i for i in drive.items.values() if not i.deleted),
                key=lambda i: (len(self._path(drive, i).split("/")) if i.parent else 0, i.id),
            )
            changed = {i.id: False for i in items}
        else:
            changed = {}
            for i in drive.items.values():
                if i.seq > since:
                    changed[i.id] = False
                elif sharing and i.shared_seq > since and not i.deleted:
                    changed[i.id] = True
            items = sorted((drive.items[i] for i in changed), key=lambda i: (i.seq, i.id))
        page = items[offset : offset + top]
        value = []
        for item in page:
            out = self._item(drive, item, in_delta=True)
            if changed.get(item.id):
                out["@microsoft.graph.sharedChanged"] = "True"
            value.append(out)
        body: dict[str, Any] = {
            "@odata.context": f"{self.url}/v1.0/$metadata#Collection(driveItem)",
            "value": value,
        }
        if offset + top < len(items):
            token = _encode({"s": since, "o": offset + top, "n": upto})
            body["@odata.nextLink"] = f"{base}?{urlencode({'$skiptoken': token})}"
        else:
            body["@odata.deltaLink"] = f"{base}?{urlencode({'token': _encode({'s': upto})})}"
        return 200, {}, body


def _drive(drive: FakeDrive) -> dict[str, Any]:
    return {
        "id": drive.id,
        "name": drive.name,
        "driveType": "documentLibrary",
        "webUrl": drive.web_url,
    }


def _tempauth(item: FakeItem) -> str:
    return f"v1.{item.id}.{item.content_version}"


def _encode(state: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")


def _decode(token: str) -> dict[str, Any]:
    return dict(json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))))


_FILTER_TERM = re.compile(r"\s*(?:mail|userPrincipalName) eq '((?:[^']|'')*)'\s*(or\b|$)", re.I)


def _filter_emails(expression: str) -> list[str] | None:
    """The addresses in ``mail eq '…' or userPrincipalName eq '…'`` (a quote inside a string is
    doubled, as OData writes it); None for any other filter."""
    found, at = [], 0
    while at < len(expression):
        match = _FILTER_TERM.match(expression, at)
        if match is None:
            return None
        found.append(match.group(1).replace("''", "'"))
        at = match.end()
        if match.group(2) == "" and at < len(expression):
            return None
    return found or None


def _select(
    resources: list[dict[str, Any]], query: dict[str, str], keep: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """Only the ``$select``ed properties, as Graph returns them."""
    wanted = [p.strip() for p in query.get("$select", "").split(",") if p.strip()]
    if not wanted:
        return resources
    return [{k: v for k, v in r.items() if k in wanted or k in keep} for r in resources]


def _kind(method: str, path: str) -> str:
    if method == "POST":
        return "token"
    if path.startswith("/v1.0/users"):
        if path.endswith("/microsoft.graph.group"):
            return "memberOf"
        return "user" if path.count("/") > 2 else "users"
    if path.startswith("/download/"):
        return "download"
    if path.startswith("/v1.0/sites/"):
        return "drives" if path.endswith("/drives") else "site"
    for suffix in ("delta", "permissions", "content"):
        if path.endswith("/" + suffix):
            return suffix
    return "item" if "/items/" in path else "drives"


def _error(code: str, message: str) -> dict[str, Any]:
    return {
        "error": {
            "code": code,
            "message": message,
            "innerError": {
                "date": "2026-12-01T10:00:00",
                "request-id": "00000000-0000-0000-0000-000000000001",
                "client-request-id": "00000000-0000-0000-0000-000000000001",
            },
        }
    }


def _aad(error: str, code: int, text: str) -> dict[str, Any]:
    return {
        "error": error,
        "error_description": f"AADSTS{code}: {text}\r\nTrace ID: 0000\r\nCorrelation ID: 0000\r\n"
        "Timestamp: 2026-12-01 10:00:00Z",
        "error_codes": [code],
        "timestamp": "2026-12-01 10:00:00Z",
        "trace_id": "0000",
        "correlation_id": "0000",
    }
