"""A loopback Google Drive (API v3) and Google's OAuth 2.0 token endpoint, in their JSON shapes.

What the connector calls, and nothing else:

* ``POST /token``: the JWT bearer grant. The assertion's RS256 signature is checked with the
  service account's public key, and its ``iss``, ``aud``, ``scope``, ``exp`` (and ``sub``, when
  ``subjects`` limits delegation); the answer is ``{"access_token", "expires_in",
  "token_type"}`` or Google's ``{"error", "error_description"}``.
* ``GET /drive/v3/drives?q=name = '…'``, ``/drives/{id}``;
* ``GET /drive/v3/files`` (``corpora=drive&driveId=…``, ``q`` of ``trashed = false`` and
  ``'<id>' in parents``, ``pageSize`` capped at ``max_page``, ``pageToken``/``nextPageToken``);
* ``GET /drive/v3/files/{id}`` (metadata; ``alt=media`` the bytes), ``/files/{id}/export``;
* ``GET /drive/v3/files/{id}/permissions``: direct grants, what folders above pass down and the
  shared drive's members, each with ``permissionDetails`` saying which is inherited from where;
* ``GET /drive/v3/changes/startPageToken`` and ``/changes`` (``drive#change`` entries, one per
  change, ``removed`` for a file deleted or moved off the drive, ``changeType: drive`` when a
  shared drive's members change; ``nextPageToken`` or, at the end, ``newStartPageToken``).

As on Drive, sharing a folder or changing a shared drive's members bumps no file's ``version``
and reports no change of the files under it; a file's own sharing or content does both.

Every API call needs ``Authorization: Bearer`` with a token this server issued and has not
expired (``expire_tokens()``); otherwise ``401`` in Google's error shape. ``throttle(n, …)``
answers the next ``n`` matching calls ``429`` (or ``403`` ``userRateLimitExceeded``, or ``503``).
``requests`` records (path, query, status); ``fetches(id)`` counts content downloads of a file.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from testing.idp import rsa_key
from testing.web import LoopbackServer

DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
SLIDES = "application/vnd.google-apps.presentation"
FOLDER = "application/vnd.google-apps.folder"
EXPORTABLE = {DOC: {"text/html", "text/plain"}, SHEET: {"text/csv"}, SLIDES: {"text/plain"}}
SCOPE = "https://www.googleapis.com/auth/drive.readonly"
_LINKS = {
    DOC: "https://docs.google.com/document/d/{}/edit?usp=drivesdk",
    SHEET: "https://docs.google.com/spreadsheets/d/{}/edit?usp=drivesdk",
    SLIDES: "https://docs.google.com/presentation/d/{}/edit?usp=drivesdk",
}


@dataclass(frozen=True)
class Grant:
    """A permission as its owner sets it: ``user`` / ``group`` (an e-mail), ``domain``, ``anyone``."""

    type: str
    email: str = ""
    domain: str = ""
    role: str = "reader"
    discoverable: bool = False  # allowFileDiscovery, for domain / anyone
    deleted: bool = False  # the account was deleted

    @property
    def id(self) -> str:
        """Stable per grantee, as Drive's permission ids are."""
        if self.type == "anyone":
            return "anyoneWithLink" if not self.discoverable else "anyone"
        who = self.email.lower() or self.domain.lower()
        digits = int(hashlib.sha256(f"{self.type}:{who}".encode()).hexdigest()[:15], 16)
        return f"{digits:020d}" + ("k" if self.type == "domain" else "")


def user(email: str, role: str = "reader") -> Grant:
    return Grant("user", email=email, role=role)


def group(email: str, role: str = "reader") -> Grant:
    return Grant("group", email=email, role=role)


def domain(name: str) -> Grant:
    return Grant("domain", domain=name, discoverable=True)


ANYONE = Grant("anyone")


@dataclass
class FakeFile:
    id: str
    name: str
    mime: str
    content: bytes
    parent: str  # a folder id, or a drive id at the drive's root
    drive: str  # "" : My Drive
    grants: list[Grant] = field(default_factory=list)  # its own, not inherited
    version: int = 1
    modified: str = "2026-11-30T09:00:00.000Z"
    trashed: bool = False


@dataclass
class FakeDrive:
    id: str
    name: str
    members: list[Grant] = field(default_factory=list)


@dataclass
class LoopbackDrive(LoopbackServer):
    client_email: str = "footnote-sync@acme-project.iam.gserviceaccount.com"
    key: rsa.RSAPrivateKey = field(default_factory=lambda: rsa_key("gdrive-service-account"))
    subjects: set[str] | None = None  # users the account may act as (delegation); None: any
    token_ttl: int = 3599
    max_page: int = 100
    inherited_ids: bool = True  # False: permissionIds lists a file's own grants alone
    drives: dict[str, FakeDrive] = field(default_factory=dict)
    files: dict[str, FakeFile] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str], int]] = field(default_factory=list)
    token_requests: list[dict[str, Any]] = field(default_factory=list)  # verified claims
    _changes: list[dict[str, Any]] = field(default_factory=list)  # the feed, oldest first
    _tokens: dict[str, float] = field(default_factory=dict)  # access token → expiry
    _token_outage: int = 0  # the next token requests that answer 503
    _throttles: list[list[Any]] = field(default_factory=list)  # [times, after, about, status, why]
    _pages: dict[str, tuple[str, int]] = field(default_factory=dict)  # page token → (query, start)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # --- the service account --------------------------------------------------------------

    def key_file(self, folder: Path, key: rsa.RSAPrivateKey | None = None) -> Path:
        """A JSON key as Google's console downloads it (the token URI inside is Google's own,
        as in a real file: Footnote reads its token URI from its settings)."""
        pem = (key or self.key).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        path = folder / "service-account.json"
        path.write_text(
            json.dumps(
                {
                    "type": "service_account",
                    "project_id": "acme-project",
                    "private_key_id": "0123456789abcdef0123456789abcdef01234567",
                    "private_key": pem.decode(),
                    "client_email": self.client_email,
                    "client_id": "112233445566778899001",
                    "auth_uri": "https://accounts.google.com/o/oauth2/auth",
                    "token_uri": "https://oauth2.googleapis.com/token",
                }
            )
        )
        return path

    @property
    def token_uri(self) -> str:
        return f"{self.url}/token"

    def token_outage(self, times: int) -> None:
        """The token endpoint answers the next ``times`` requests ``503``."""
        self._token_outage = times

    def expire_tokens(self) -> None:
        """Every access token issued so far is refused from now on, as after an hour."""
        self._tokens.clear()

    # --- content ---------------------------------------------------------------------------

    def shared_drive(self, name: str, members: list[Grant] | None = None) -> str:
        did = f"0A{next(self._ids):06d}Uk9PVA"
        self.drives[did] = FakeDrive(did, name, list(members or []))
        return did

    def set_members(self, drive: str, members: list[Grant]) -> None:
        """Who is a member of the shared drive; reported as one change of the drive."""
        self.drives[drive].members = list(members)
        self._log({"changeType": "drive", "driveId": drive})

    def folder(self, name: str, parent: str, grants: list[Grant] | None = None) -> str:
        return self.put(name, b"", parent, mime=FOLDER, grants=grants)

    def put(
        self,
        name: str,
        content: str | bytes,
        parent: str,
        mime: str = DOC,
        grants: list[Grant] | None = None,
    ) -> str:
        """A file in ``parent`` (a folder's or a shared drive's id, or ``""`` for My Drive)."""
        fid = f"1F{next(self._ids):06d}xYz"
        data = content.encode() if isinstance(content, str) else content
        self.files[fid] = FakeFile(
            fid, name, mime, data, parent, self._drive_of(parent), list(grants or [])
        )
        self._log({"fileId": fid})
        return fid

    def edit(self, fid: str, content: str | bytes) -> None:
        f = self.files[fid]
        f.content = content.encode() if isinstance(content, str) else content
        self._touch(f)

    def share(self, fid: str, grants: list[Grant]) -> None:
        """Set a file's (or folder's) own grants. A folder's pass to what is under it, silently."""
        self.files[fid].grants = list(grants)
        self._touch(self.files[fid])

    def rename(self, fid: str, name: str) -> None:
        self.files[fid].name = name
        self._touch(self.files[fid])

    def move(self, fid: str, parent: str) -> None:
        f = self.files[fid]
        old, f.parent, f.drive = f.drive, parent, self._drive_of(parent)
        self._touch(f)
        if old != f.drive:  # gone from the old drive's feed
            self._log({"fileId": fid, "driveId": old, "removed": True})

    def trash(self, fid: str) -> None:
        self.files[fid].trashed = True
        self._touch(self.files[fid])

    def delete(self, fid: str) -> None:
        f = self.files.pop(fid)
        self._log({"fileId": fid, "driveId": f.drive, "removed": True})

    def throttle(
        self,
        times: int,
        retry_after: str | None = "1",
        file: str | None = None,
        status: int = 429,
        reason: str = "rateLimitExceeded",
        calls: str = "content",
    ) -> None:
        """Answer the next ``times`` API calls with ``status``; with ``file``, only the calls for
        its ``content`` (an export or a download), its ``permissions`` or its ``metadata``."""
        self._throttles.append([times, retry_after, file and (file, calls), status, reason])

    def fetches(self, fid: str) -> int:
        return sum(
            1
            for p, q, _ in self.requests
            if p == f"/drive/v3/files/{fid}/export"
            or (p == f"/drive/v3/files/{fid}" and q.get("alt") == "media")
        )

    def calls(self, suffix: str) -> int:
        return sum(1 for p, _, _ in self.requests if p.endswith(suffix))

    # --- the model ------------------------------------------------------------------------

    def _drive_of(self, parent: str) -> str:
        if parent in self.drives:
            return parent
        return self.files[parent].drive if parent in self.files else ""

    def _touch(self, f: FakeFile) -> None:
        f.version += 1
        f.modified = f"2026-12-01T{f.version % 24:02d}:00:00.000Z"
        self._log({"fileId": f.id})

    def _log(self, change: dict[str, Any]) -> None:
        if "fileId" in change and "driveId" not in change:
            change["driveId"] = self.files[change["fileId"]].drive
        self._changes.append(change)

    def _ancestors(self, f: FakeFile) -> list[FakeFile]:
        chain: list[FakeFile] = []
        parent = f.parent
        while parent in self.files and len(chain) < 100:
            chain.append(self.files[parent])
            parent = self.files[parent].parent
        return chain

    def _gone(self, f: FakeFile) -> bool:
        """Trashed itself or under a trashed folder, as Drive reports it."""
        return f.trashed or any(a.trashed for a in self._ancestors(f))

    def _permissions(self, f: FakeFile) -> list[dict[str, Any]]:
        """Every grant that reaches the file, once per grantee, with where each comes from."""
        found: dict[str, tuple[Grant, list[dict[str, Any]]]] = {}

        def add(g: Grant, kind: str, source: str | None) -> None:
            detail: dict[str, Any] = {"permissionType": kind, "role": g.role}
            detail["inherited"] = source is not None
            if source:
                detail["inheritedFrom"] = source
            found.setdefault(g.id, (g, []))[1].append(detail)

        for g in f.grants:
            add(g, "file", None)
        for folder in self._ancestors(f):
            for g in folder.grants:
                add(g, "file", folder.id)
        if f.drive in self.drives:
            for g in self.drives[f.drive].members:
                add(g, "member", f.drive)
        out = []
        for pid, (g, details) in found.items():
            perm: dict[str, Any] = {"kind": "drive#permission", "id": pid, "type": g.type}
            perm["role"] = g.role
            if g.email:
                perm["emailAddress"] = g.email
            if g.type == "domain":
                perm["domain"] = g.domain
            if g.type in ("domain", "anyone"):
                perm["allowFileDiscovery"] = g.discoverable
            if g.type in ("user", "group"):
                perm["deleted"] = g.deleted
            if f.drive:
                perm["permissionDetails"] = details
            out.append(perm)
        return out

    def _file_json(self, f: FakeFile) -> dict[str, Any]:
        link = _LINKS.get(f.mime, "https://drive.google.com/file/d/{}/view?usp=drivesdk")
        out: dict[str, Any] = {
            "kind": "drive#file",
            "id": f.id,
            "name": f.name,
            "mimeType": f.mime,
            "parents": [f.parent] if f.parent else [],
            "trashed": self._gone(f),
            "version": str(f.version),
            "modifiedTime": f.modified,
            "webViewLink": link.format(f.id),
            "permissionIds": sorted(
                p["id"]
                for p in self._permissions(f)
                if self.inherited_ids
                or any(
                    not d["inherited"] for d in p.get("permissionDetails") or [{"inherited": False}]
                )
            ),
            "lastModifyingUser": {"kind": "drive#user", "displayName": "Page Owner"},
        }
        if f.drive:
            out["driveId"] = f.drive
        else:
            out["owners"] = [{"displayName": "Page Owner", "emailAddress": "owner@acme.example"}]
        if f.mime not in EXPORTABLE and f.mime != FOLDER:
            out["size"] = str(len(f.content))
            out["md5Checksum"] = hashlib.md5(f.content).hexdigest()  # noqa: S324 (Drive's own)
        return out

    # --- serving ---------------------------------------------------------------------------

    def _post(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(h.rfile.read(length).decode()).items()}
        with self._lock:
            if self._token_outage:
                self._token_outage -= 1
                status, body = 503, {"error": "internal_failure", "error_description": "Backend"}
            else:
                status, body = self._token(urlsplit(h.path).path, form)
            self.requests.append(("POST " + urlsplit(h.path).path, {}, status))
        self._send(h, status, {}, json.dumps(body).encode(), "application/json; charset=utf-8")

    def _token(self, path: str, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if path != "/token":
            return 404, {"error": "not_found"}
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return 400, {
                "error": "unsupported_grant_type",
                "error_description": "Invalid grant_type",
            }
        try:
            claims = jwt.decode(
                form.get("assertion", ""),
                self.key.public_key(),
                algorithms=["RS256"],
                audience=self.token_uri,
                options={"require": ["iss", "aud", "exp", "iat", "scope"]},
            )
        except jwt.InvalidSignatureError:
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
        except jwt.PyJWTError as exc:
            return 400, {"error": "invalid_grant", "error_description": f"Invalid JWT: {exc}"}
        if claims["iss"] != self.client_email:
            return 401, {
                "error": "invalid_client",
                "error_description": "The OAuth client was not found.",
            }
        if claims["exp"] - claims["iat"] > 3600:
            return 400, {
                "error": "invalid_grant",
                "error_description": "Invalid JWT: expiry too far",
            }
        if SCOPE not in str(claims["scope"]).split():
            return 400, {"error": "invalid_scope", "error_description": "Invalid OAuth scope."}
        sub = claims.get("sub")
        if sub is not None and self.subjects is not None and sub not in self.subjects:
            return 401, {
                "error": "unauthorized_client",
                "error_description": "Client is unauthorized to retrieve access tokens using "
                "this method, or client not authorized for any of the scopes requested.",
            }
        self.token_requests.append(claims)
        token = "ya29." + secrets.token_urlsafe(24)
        self._tokens[token] = time.time() + self.token_ttl
        return 200, {"access_token": token, "expires_in": self.token_ttl, "token_type": "Bearer"}

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        with self._lock:
            status, headers, body = self._answer(parts.path, query, h.headers.get("Authorization"))
            self.requests.append((parts.path, query, status))
        if status == 200 and isinstance(body, dict):
            body = _select(body, query["fields"]) if "fields" in query else _defaults(body)
        if isinstance(body, bytes):
            data, kind = body, headers.pop("Content-Type", "application/octet-stream")
        else:
            data, kind = json.dumps(body).encode(), "application/json; charset=UTF-8"
        self._send(h, status, headers, data, kind)

    @staticmethod
    def _send(
        h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], data: bytes, kind: str
    ) -> None:
        h.send_response(status)
        h.send_header("Content-Type", kind)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _answer(
        self, path: str, query: dict[str, str], auth: str | None
    ) -> tuple[int, dict[str, str], Any]:
        token = (auth or "").removeprefix("Bearer ")
        if not auth or not auth.startswith("Bearer ") or self._tokens.get(token, 0) < time.time():
            return (
                401,
                {"WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"'},
                _error(
                    401,
                    "Request had invalid authentication credentials. Expected OAuth 2 access token, "
                    "login cookie or other valid authentication credential.",
                    "authError",
                    "global",
                ),
            )
        m = re.fullmatch(r"/drive/v3/files/([^/]+)(/export|/permissions)?", path)
        about = None
        if m and (m.group(2) == "/export" or query.get("alt") == "media"):
            about = (m.group(1), "content")
        elif m and m.group(2) == "/permissions":
            about = (m.group(1), "permissions")
        elif m:
            about = (m.group(1), "metadata")
        for t in self._throttles:
            if t[0] > 0 and (t[2] is None or t[2] == about):
                t[0] -= 1
                headers = {"Retry-After": t[1]} if t[1] is not None else {}
                if t[3] == 503:
                    return (
                        503,
                        headers,
                        _error(
                            503, "The service is currently unavailable.", "backendError", "global"
                        ),
                    )
                return t[3], headers, _error(t[3], "Rate Limit Exceeded", t[4], "usageLimits")
        if path == "/drive/v3/drives":
            return self._drives(query)
        if dm := re.fullmatch(r"/drive/v3/drives/([^/]+)", path):
            d = self.drives.get(dm.group(1))
            if d is None:
                return (
                    404,
                    {},
                    _error(404, f"Shared drive not found: {dm.group(1)}", "notFound", "global"),
                )
            return 200, {}, {"kind": "drive#drive", "id": d.id, "name": d.name}
        if path == "/drive/v3/changes/startPageToken":
            return (
                200,
                {},
                {"kind": "drive#startPageToken", "startPageToken": str(len(self._changes) + 1)},
            )
        if path == "/drive/v3/changes":
            return self._feed(query)
        if path == "/drive/v3/files":
            return self._list(query)
        if m:
            f = self.files.get(m.group(1))
            if f is None:
                return 404, {}, _error(404, f"File not found: {m.group(1)}.", "notFound", "global")
            if m.group(2) == "/permissions":
                return self._page(
                    query, self._permissions(f), "drive#permissionList", "permissions"
                )
            if m.group(2) == "/export":
                wanted = query.get("mimeType", "")
                if f.mime not in EXPORTABLE:
                    return (
                        403,
                        {},
                        _error(
                            403,
                            "Export only supports Docs Editors files.",
                            "fileNotExportable",
                            "global",
                        ),
                    )
                if wanted not in EXPORTABLE[f.mime]:
                    return (
                        400,
                        {},
                        _error(
                            400,
                            "The requested conversion is not supported.",
                            "badRequest",
                            "global",
                        ),
                    )
                return 200, {"Content-Type": wanted}, self._export(f, wanted)
            if query.get("alt") == "media":
                if f.mime in EXPORTABLE or f.mime == FOLDER:
                    return (
                        403,
                        {},
                        _error(
                            403,
                            "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                            "fileNotDownloadable",
                            "global",
                        ),
                    )
                return 200, {"Content-Type": f.mime}, f.content
            return 200, {}, self._file_json(f)
        return 404, {}, _error(404, "Not Found", "notFound", "global")

    def _export(self, f: FakeFile, mime: str) -> bytes:
        if mime != "text/html":
            return f.content
        body = f.content.decode()
        return (
            '<html><head><meta content="text/html; charset=UTF-8" http-equiv="content-type">'
            '<style type="text/css">.c1{font-weight:700}</style></head>'
            f'<body class="c2 doc-content">{body}</body></html>'
        ).encode()

    def _drives(self, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        drives = list(self.drives.values())
        if q := query.get("q"):
            m = re.fullmatch(r"name\s*=\s*'((?:[^'\\]|\\.)*)'", q.strip())
            if not m:
                return 400, {}, _error(400, "Invalid Value", "invalid", "global")
            name = re.sub(r"\\(.)", r"\1", m.group(1))
            drives = [d for d in drives if d.name == name]
        return (
            200,
            {},
            {
                "kind": "drive#driveList",
                "drives": [{"kind": "drive#drive", "id": d.id, "name": d.name} for d in drives],
            },
        )

    def _list(self, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        drive = query.get("driveId", "") if query.get("corpora") == "drive" else ""
        if query.get("corpora") == "drive" and (
            not drive or query.get("includeItemsFromAllDrives") != "true"
        ):
            return (
                400,
                {},
                _error(
                    400,
                    "The includeItemsFromAllDrives parameter must be set to true when driveId is specified.",
                    "invalid",
                    "global",
                ),
            )
        files = [f for f in self.files.values() if f.drive == drive]
        for clause in re.split(r"\s+and\s+", query.get("q", "").strip()) if query.get("q") else []:
            if re.fullmatch(r"trashed\s*=\s*false", clause):
                files = [f for f in files if not self._gone(f)]
            elif pm := re.fullmatch(r"'([^']+)'\s+in\s+parents", clause):
                files = [f for f in files if f.parent == pm.group(1)]
            else:
                return 400, {}, _error(400, f"Invalid Value: {clause}", "invalid", "global")
        items = [self._file_json(f) for f in sorted(files, key=lambda f: f.id)]
        return self._page(query, items, "drive#fileList", "files", incomplete=True)

    def _feed(self, query: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        token = query.get("pageToken", "")
        if not token.isdigit() or not 1 <= int(token) <= len(self._changes) + 1:
            return 400, {}, _error(400, f"Invalid Value: {token}", "invalid", "global")
        drive = query.get("driveId", "")
        size = min(int(query.get("pageSize", 100)), self.max_page)
        start = int(token) - 1
        entries = [
            (n, c)
            for n, c in enumerate(self._changes[start:], start)
            if c.get("driveId", "") == drive
        ][:size]
        changes = []
        for _, c in entries:
            out: dict[str, Any] = {"kind": "drive#change", "time": "2026-12-01T10:00:00.000Z"}
            if c.get("changeType") == "drive":
                d = self.drives[c["driveId"]]
                out |= {"changeType": "drive", "removed": False, "driveId": d.id}
                out["drive"] = {"kind": "drive#drive", "id": d.id, "name": d.name}
            else:
                fid = c["fileId"]
                f = self.files.get(fid)
                gone = c.get("removed") or f is None or f.drive != drive
                out |= {"changeType": "file", "fileId": fid, "removed": bool(gone)}
                if not gone and f is not None:
                    out["file"] = self._file_json(f)
                if drive:
                    out["driveId"] = drive
            changes.append(out)
        body: dict[str, Any] = {"kind": "drive#changeList", "changes": changes}
        later = [
            n for n, c in enumerate(self._changes) if n >= start and c.get("driveId", "") == drive
        ]
        if len(later) > len(entries):
            body["nextPageToken"] = str(later[len(entries)] + 1)
        else:
            body["newStartPageToken"] = str(len(self._changes) + 1)
        return 200, {}, body

    def _page(
        self, query: dict[str, str], items: list[Any], kind: str, key: str, incomplete: bool = False
    ) -> tuple[int, dict[str, str], Any]:
        """One page of ``items``; ``nextPageToken`` when more follow (opaque, bound to the query)."""
        base = json.dumps({k: v for k, v in sorted(query.items()) if k != "pageToken"})
        start = 0
        if token := query.get("pageToken"):
            if token not in self._pages or self._pages[token][0] != base:
                return 400, {}, _error(400, "Invalid Value", "invalid", "global")
            start = self._pages[token][1]
        size = min(int(query.get("pageSize", 100)), self.max_page)
        body: dict[str, Any] = {"kind": kind, key: items[start : start + size]}
        if incomplete:
            body["incompleteSearch"] = False
        if start + size < len(items):
            token = secrets.token_urlsafe(12)
            self._pages[token] = (base, start + size)
            body["nextPageToken"] = token
        return 200, {}, body


# What Drive returns of a resource when the request names no ``fields``
_DEFAULT = {
    "drive#file": {"kind", "id", "name", "mimeType"},
    "drive#permission": {"kind", "id", "type", "role"},
}


def _defaults(body: Any) -> Any:
    if isinstance(body, list):
        return [_defaults(b) for b in body]
    if not isinstance(body, dict):
        return body
    keep = _DEFAULT.get(str(body.get("kind")))
    return {k: _defaults(v) for k, v in body.items() if keep is None or k in keep}


def _select(body: Any, fields: str) -> Any:
    """Only the ``fields`` asked for (``nextPageToken,files(id,owners(displayName))``), as Drive
    answers a partial response: a field the connector forgets to ask for is not there."""
    if isinstance(body, list):
        return [_select(b, fields) for b in body]
    if not isinstance(body, dict) or fields.strip() == "*":
        return body
    wanted: dict[str, str | None] = {}
    depth, start, name = 0, 0, ""
    for i, c in enumerate(fields + ","):
        if c == "(" and depth == 0:
            name, start = fields[start:i].strip(), i + 1
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                wanted[name] = fields[start:i]
        elif c == "," and depth == 0:
            part = fields[start:i].strip()
            if part and not part.endswith(")"):
                wanted[part] = None
            start = i + 1
    return {
        k: (v if wanted[k] is None else _select(v, wanted[k] or "*"))
        for k, v in body.items()
        if k in wanted
    }


def _error(code: int, message: str, reason: str, domain: str) -> dict[str, Any]:
    """Google's JSON error body."""
    status = {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED",
        503: "UNAVAILABLE",
    }.get(code, "UNKNOWN")
    return {
        "error": {
            "code": code,
            "message": message,
            "errors": [{"message": message, "domain": domain, "reason": reason}],
            "status": status,
        }
    }
