"""Google Drive as a source: the files of a shared drive or of a folder, with who may read each.

A thin client of the Drive API v3 (``/drive/v3``) over httpx; Google's client library is not
needed for the dozen GET requests below. Every request carries an access token the service
account gets by the OAuth 2.0 JWT bearer flow: an RS256-signed assertion (PyJWT), POSTed to the
token URI, cached until it expires and fetched again when Drive answers ``401``.

* First sync: ``changes/startPageToken`` first, so nothing changed during the listing is missed,
  then ``files.list`` of the drive (or of the folder, folder by folder), metadata only, page by
  page through ``nextPageToken``.
* Later syncs: ``changes.list`` from the saved token to its ``newStartPageToken``. A removed or
  trashed file, or one moved out of the drive or the folder, is deleted. A change to a folder
  reports none of the files under it: the cursor keeps each folder's parent and sharing, so a
  folder new to the scope is listed alone, and one shared, moved or trashed (or a change of the
  drive's members) makes the sync list everything again, metadata only, read every file's
  permissions, and fetch just what differs. Files that failed are kept in the cursor and asked
  for by id next time.
* Per new or changed file: ``permissions.list`` and the content (``export`` for Google Docs,
  Sheets and Slides, ``alt=media`` for the types the folder ingest parses; others are counted
  and skipped).

The version recorded per file is its Drive ``version``, its ``permissionIds`` and its principals:
a file whose readers alone changed is fetched again, and the index relabels it without
embedding it again. Permissions become principals: a user ``user:<email>``, a group
``group:<email>`` (Google names groups by e-mail), the company's own domain and ``anyone`` ``*``
(every member of the directory, never the open internet); shared-drive members, inherited by
every file, count like direct grants.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic import SecretStr

from ingest.errors import ConfigError
from ingest.parse import MEDIA_TYPES
from ingest.retry_after import retry_after
from ingest.settings import GoogleDriveSettings
from ingest.sources.connector import (
    EVERYONE,
    GROUP,
    USER,
    Batch,
    ConnectorEnv,
    SourceDocument,
    SourceUnavailable,
)

log = logging.getLogger(__name__)

KEY_VAR = "FOOTNOTE_GDRIVE__KEY_FILE"
SUBJECT_VAR = "FOOTNOTE_GDRIVE__SUBJECT"
SCOPE = "https://www.googleapis.com/auth/drive.readonly"
GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
FOLDER = "application/vnd.google-apps.folder"
# Google's own formats, exported as what the folder ingest reads (Sheets: the first sheet)
EXPORTS = {
    "application/vnd.google-apps.document": "text/html",
    "application/vnd.google-apps.spreadsheet": "text/csv",
    "application/vnd.google-apps.presentation": "text/plain",
}
FILE_FIELDS = (
    "id,name,mimeType,modifiedTime,version,webViewLink,owners(displayName,emailAddress),"
    "lastModifyingUser(displayName),parents,trashed,md5Checksum,size,driveId,permissionIds"
)
PERMISSION_FIELDS = (
    "nextPageToken,permissions(id,type,role,emailAddress,domain,allowFileDiscovery,deleted,"
    "permissionDetails)"
)
RATE_REASONS = {"rateLimitExceeded", "userRateLimitExceeded"}
DRIVE_ID = re.compile(r"[A-Za-z0-9_-]{1,200}")  # ids go into paths and queries: Drive's alphabet
RETRIED = {429, 500, 502, 503, 504}
LOOPBACK = {"127.0.0.1", "localhost", "::1"}  # test fakes, on this machine only


class GoogleAuthError(ConfigError):
    """Google refused the service account (a bad or revoked key, no delegation): the fix is in
    the environment or the Workspace admin console."""


@dataclass(frozen=True)
class ServiceAccountKey:
    email: str
    key_id: str
    private_key: SecretStr

    @classmethod
    def load(cls, path: Path) -> ServiceAccountKey:
        """The JSON key Google's console downloads. Errors name the file, never its content."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(
                f"cannot read the key file {path} ({KEY_VAR}): {exc.strerror}"
            ) from None
        except ValueError:
            raise ConfigError(
                f"the key file {path} ({KEY_VAR}) is not JSON: give the service account's key "
                "as Google downloads it (IAM → Service accounts → Keys → Add key → JSON)"
            ) from None
        if not isinstance(data, dict) or data.get("type") != "service_account":
            raise ConfigError(f"the key file {path} ({KEY_VAR}) is not a service account's key")
        email, key = data.get("client_email"), data.get("private_key")
        if not email or not key:
            raise ConfigError(f"the key file {path} ({KEY_VAR}) lacks client_email or private_key")
        return cls(str(email), str(data.get("private_key_id") or ""), SecretStr(str(key)))


@dataclass
class DriveClient:
    """GETs against the Drive API as the service account (or the user it acts for), retried on
    Google's rate limits and server errors after ``Retry-After`` (bounded)."""

    key: ServiceAccountKey
    subject: str = ""  # the Workspace user to act as (domain-wide delegation); "": the account
    token_uri: str = "https://oauth2.googleapis.com/token"
    api_url: str = "https://www.googleapis.com"
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=60.0))
    retries: int = 4  # tries after the first, per request, on a rate limit or a 5xx
    max_wait_s: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    requests: int = 0  # API requests made (token requests not counted), for reports
    _token: str = ""
    _expires: float = 0.0

    @classmethod
    def from_settings(cls, settings: GoogleDriveSettings | None) -> DriveClient:
        if settings is None or settings.key_file is None:
            raise ConfigError(
                f"Google Drive needs a service account: set {KEY_VAR} to its JSON key file, and "
                f"{SUBJECT_VAR} to the Workspace user it acts as if it has domain-wide delegation"
            )
        for var, url in (("TOKEN_URI", settings.token_uri), ("API_URL", settings.api_url)):
            parts = urlsplit(url)
            if parts.scheme != "https" and not (
                parts.scheme == "http" and parts.hostname in LOOPBACK
            ):
                raise ConfigError(
                    f"FOOTNOTE_GDRIVE__{var} must be an https URL (a signed assertion or an "
                    f"access token travels to it), got {url!r}; unset, it is Google's"
                )
        return cls(
            key=ServiceAccountKey.load(settings.key_file),
            subject=settings.subject,
            token_uri=settings.token_uri,
            api_url=settings.api_url.rstrip("/"),
        )

    @property
    def account(self) -> str:
        return self.subject or self.key.email

    def get(self, path: str, params: Mapping[str, Any], what: str) -> dict[str, Any]:
        response = self._send(path, params, what)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise SourceUnavailable(f"Google Drive answered {what} with no JSON object")
        return data

    def content(self, path: str, params: Mapping[str, Any], what: str) -> bytes:
        return self._send(path, params, what).content

    def close(self) -> None:
        self.client.close()

    # --- auth ------------------------------------------------------------------------------

    def access_token(self, refresh: bool = False) -> str:
        """A cached access token, fetched again a minute before it expires or on demand."""
        if self._token and not refresh and self.clock() < self._expires - 60:
            return self._token
        import jwt

        now = int(self.clock())
        claims: dict[str, Any] = {"iss": self.key.email, "scope": SCOPE, "aud": self.token_uri}
        claims |= {"iat": now, "exp": now + 3600}
        if self.subject:
            claims["sub"] = self.subject
        headers = {"kid": self.key.key_id} if self.key.key_id else None
        try:
            assertion = jwt.encode(
                claims, self.key.private_key.get_secret_value(), "RS256", headers=headers
            )
        except (ValueError, TypeError, jwt.PyJWTError):  # the message could quote the key
            raise ConfigError(
                f"the private key in {KEY_VAR} cannot sign (not an RSA key in PEM form)"
            ) from None
        for attempt in range(self.retries + 1):
            try:
                response = self.client.post(
                    self.token_uri, data={"grant_type": GRANT, "assertion": assertion}
                )
            except httpx.TransportError as exc:
                if attempt == self.retries:
                    raise SourceUnavailable(f"cannot reach Google's token endpoint: {exc}") from exc
                self.sleep(min(2.0**attempt, self.max_wait_s))
                continue
            if response.status_code not in RETRIED or attempt == self.retries:
                break
            self.sleep(retry_after(response.headers.get("retry-after"), attempt, self.max_wait_s))
        body = _json(response)
        if response.status_code != 200 or not body.get("access_token"):
            if response.status_code >= 500 or response.status_code == 429:
                raise SourceUnavailable(
                    f"Google's token endpoint answered HTTP {response.status_code}"
                )
            reason = f"{body.get('error') or response.status_code}: "
            reason += str(body.get("error_description") or response.reason_phrase)[:200]
            delegation = (
                f"; with {SUBJECT_VAR}={self.subject}, the account's client id needs "
                f"domain-wide delegation of {SCOPE} in the Workspace admin console"
                if self.subject
                else ""
            )
            raise GoogleAuthError(
                f"Google refused the service account {self.key.email} ({reason}): check that "
                f"{KEY_VAR} holds a current key of it{delegation}"
            )
        self._token = str(body["access_token"])
        self._expires = self.clock() + float(body.get("expires_in") or 3600)
        return self._token

    # --- HTTP ------------------------------------------------------------------------------

    def _send(self, path: str, params: Mapping[str, Any], what: str) -> httpx.Response:
        url = f"{self.api_url}/drive/v3{path}"
        response: httpx.Response | None = None
        refreshed = False
        attempt = 0
        while True:
            token = self.access_token()
            self.requests += 1
            try:
                response = self.client.get(
                    url, params=dict(params), headers={"Authorization": f"Bearer {token}"}
                )
            except httpx.TransportError as exc:
                if attempt == self.retries:
                    raise SourceUnavailable(f"cannot reach Google Drive for {what}: {exc}") from exc
                self.sleep(min(2.0**attempt, self.max_wait_s))
                attempt += 1
                continue
            if response.status_code == 401 and not refreshed:  # expired or revoked: once more
                refreshed = True
                self.access_token(refresh=True)
                continue
            if not _throttled(response) or attempt == self.retries:
                break
            self.sleep(retry_after(response.headers.get("retry-after"), attempt, self.max_wait_s))
            attempt += 1
        if response.status_code == 401:
            raise GoogleAuthError(
                f"Google Drive refused a fresh access token for {what} ({_message(response)}): "
                f"check the service account in {KEY_VAR} and the scope {SCOPE}"
            )
        if response.status_code == 200:
            return response
        tries = f" after {attempt + 1} tries" if _throttled(response) else ""
        raise DriveError(
            f"Google Drive answered {what} with HTTP {response.status_code}{tries}: "
            f"{_message(response)}",
            status=response.status_code,
            reason=_reason(response),
        )


class DriveError(SourceUnavailable):
    """Drive refused a request; ``status`` and ``reason`` (its ``errors[0].reason``) say why."""

    def __init__(self, message: str, status: int, reason: str) -> None:
        super().__init__(message)
        self.status, self.reason = status, reason


@dataclass
class GoogleDriveConnector:
    drive: DriveClient
    drive_id: str = ""  # the shared drive synced, or the one the folder lives in ("": My Drive)
    folder_id: str = ""  # "": the whole shared drive
    domains: tuple[str, ...] = ()  # the company's Workspace domains: sharing with one means *
    batch_size: int = 20
    page_size: int = 1000  # files and changes per listing request (Drive's maximum)
    max_bytes: int = 50 * 2**20
    warnings: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # mime type → files not read
    kind: str = "gdrive"
    _parents: dict[str, tuple[str, ...]] = field(default_factory=dict)  # folder id → its parents
    _retry: set[str] = field(default_factory=set)  # failed this sync: asked for again next time
    _read: dict[str, list[str] | None] = field(default_factory=dict)  # principals read ahead
    _folders: dict[str, Any] = field(default_factory=dict)  # folder id → its parents and sharing

    @classmethod
    def from_config(cls, config: Mapping[str, Any], env: ConnectorEnv) -> GoogleDriveConnector:
        return cls(
            drive=DriveClient.from_settings(env.gdrive),
            drive_id=str(config.get("drive_id") or ""),
            folder_id=str(config.get("folder_id") or ""),
            domains=tuple(str(d).lower() for d in config.get("domains") or ()),
            max_bytes=env.max_bytes,
        )

    @staticmethod
    def config(
        drive: DriveClient,
        shared_drive: str | None = None,
        folder: str | None = None,
        domains: Sequence[str] = (),
    ) -> dict[str, Any]:
        """What ``footnote sources add gdrive`` stores, resolved against Drive now so a typo
        stops here: the drive's (or folder's) id and name, the company's domains. No key."""
        if bool(shared_drive) == bool(folder):
            raise ConfigError('give one of --shared-drive "NAME" or --folder ID')
        if folder and not DRIVE_ID.fullmatch(folder):
            raise ConfigError(f"--folder takes a folder's id (the end of its URL), got {folder!r}")
        wanted = sorted({d.strip().lower().lstrip("@") for d in domains if d.strip()})
        if not wanted and "@" in drive.subject:
            wanted = [drive.subject.rsplit("@", 1)[1].lower()]
        if not wanted:
            raise ConfigError(
                "give --domain with your Workspace domain (files shared with everyone in it "
                f"become readable by every member of the directory), or set {SUBJECT_VAR}"
            )
        if shared_drive:
            found = find_shared_drive(drive, shared_drive)
            return {"drive_id": found["id"], "name": found["name"], "domains": wanted}
        meta = drive.get(
            f"/files/{folder}",
            {"fields": "id,name,mimeType,driveId,trashed", "supportsAllDrives": "true"},
            f"the folder {folder}",
        )
        if meta.get("mimeType") != FOLDER or meta.get("trashed"):
            raise ConfigError(f"--folder {folder} is not a folder (it is {meta.get('mimeType')})")
        return {
            "drive_id": str(meta.get("driveId") or ""),
            "folder_id": str(meta["id"]),
            "name": str(meta.get("name") or folder),
            "domains": wanted,
        }

    # --- the seam --------------------------------------------------------------------------

    def changes(self, cursor: str | None, known: Mapping[str, str]) -> Iterator[Batch]:
        saved = json.loads(cursor) if cursor else {}
        token = str(saved.get("changes") or "")
        if not token:
            token = str(
                self.drive.get(
                    "/changes/startPageToken",
                    self._drive_params(),
                    "the start of the changes feed",
                )["startPageToken"]
            )
            yield from self._listing(token, known)
        elif saved.get("relist") or "folders" not in saved:
            yield from self._listing(token, known, recheck=saved.get("relist") == "recheck")
        else:
            assert cursor is not None
            yield from self._incremental(cursor, saved, known)
        self._note_skipped()

    def close(self) -> None:
        self.drive.close()

    @property
    def requests(self) -> int:
        return self.drive.requests

    # --- listing ---------------------------------------------------------------------------

    def _listing(
        self, token: str, known: Mapping[str, str], recheck: bool = False
    ) -> Iterator[Batch]:
        """Every file, metadata only; what differs from ``known`` is fetched, what is missing is
        deleted (first, so a file that left shows up nowhere a moment longer). ``recheck``: a
        folder or the drive's members changed, so every file's permissions are read again too,
        whether or not Drive moved its ``permissionIds``."""
        mark = json.dumps({"changes": token, "relist": "recheck" if recheck else True})
        everything = [_checked(f) for f in self._list_files()]
        self._folders = {str(f["id"]): _folder_stamp(f) for f in everything if _is_folder(f)}
        listed = [f for f in everything if self._readable(f)]
        ids = {str(f["id"]) for f in listed}
        stale = [f for f in listed if _stamp(f) != _stamp_of(known.get(str(f["id"])))]
        fetched = {str(f["id"]) for f in stale}
        for f in listed if recheck else ():
            fid = str(f["id"])
            if fid in fetched or fid not in known:
                continue
            try:
                self._read[fid] = self._principals(fid)
            except SourceUnavailable:
                self._read[fid] = None  # stale: _fetch tries again, and fails closed
            if self._read[fid] != json.loads(known[fid]).get("principals"):
                stale.append(f)
                fetched.add(fid)
        unchanged = [str(f["id"]) for f in listed if str(f["id"]) not in fetched]
        yield Batch(cursor=mark, deleted=sorted(set(known) - ids), unchanged=unchanged)
        for start in range(0, len(stale), self.batch_size):
            batch = Batch(cursor=mark)
            self._fetch(stale[start : start + self.batch_size], known, batch)
            yield batch
        yield Batch(cursor=self._cursor(token))

    def _cursor(self, token: str) -> str:
        """Where the next sync starts: the feed's token, and the files that failed this time
        (the feed will not name them again unless they change)."""
        out: dict[str, Any] = {"changes": token, "folders": self._folders}
        if self._retry:
            out["retry"] = sorted(self._retry)
        return json.dumps(out, sort_keys=True)

    def _list_files(self, under: str | None = None) -> Iterator[dict[str, Any]]:
        """Every item of the drive, or under the folder (``under``: another folder), folders
        included."""
        root = under or self.folder_id
        if not root:
            yield from self._files("trashed = false")
            return
        folders, seen = [root], {root}
        while folders:  # breadth first, one listing per folder
            parent = folders.pop(0)
            for f in self._files(f"'{parent}' in parents and trashed = false"):
                if f.get("mimeType") == FOLDER and f["id"] not in seen:
                    seen.add(f["id"])
                    folders.append(str(f["id"]))
                yield f

    def _files(self, q: str) -> Iterator[dict[str, Any]]:
        params: dict[str, Any] = {
            "q": q,
            "fields": f"nextPageToken,incompleteSearch,files({FILE_FIELDS})",
            "pageSize": self.page_size,
            "includeItemsFromAllDrives": "true",
            "supportsAllDrives": "true",
        }
        params |= {"corpora": "drive", "driveId": self.drive_id} if self.drive_id else {}
        page: str | None = None
        while True:
            reply = self.drive.get(
                "/files", params | ({"pageToken": page} if page else {}), "the file listing"
            )
            if reply.get("incompleteSearch"):  # deleting what it lacks would be wrong
                raise SourceUnavailable("Google Drive returned an incomplete file listing")
            yield from reply.get("files") or []
            page = reply.get("nextPageToken")
            if not page:
                return

    # --- the changes feed ------------------------------------------------------------------

    def _incremental(
        self, cursor: str, saved: Mapping[str, Any], known: Mapping[str, str]
    ) -> Iterator[Batch]:
        token = str(saved["changes"])
        retry = [str(r) for r in saved.get("retry") or []]
        self._folders = dict(saved["folders"])  # folder id → its parents and sharing
        latest: dict[str, dict[str, Any]] = {}  # file id → its last change
        changed_folders: dict[str, dict[str, Any]] = {}
        relist = False
        page, new_token = token, ""
        while not new_token:
            params = self._drive_params() | {
                "pageToken": page,
                "pageSize": self.page_size,
                "includeItemsFromAllDrives": "true",
                "fields": f"nextPageToken,newStartPageToken,changes(kind,changeType,time,removed,"
                f"fileId,driveId,file({FILE_FIELDS}))",
            }
            reply = self.drive.get("/changes", params, "the changes feed")
            for change in reply.get("changes") or []:
                if change.get("changeType") == "drive":  # its members changed, say
                    relist = relist or change.get("driveId") == self.drive_id
                elif change.get("fileId"):
                    fid = str(_checked({"id": change["fileId"]})["id"])
                    if _is_folder(change.get("file") or {}) or fid in self._folders:
                        changed_folders[fid] = change
                    else:
                        latest[fid] = change
            new_token = str(reply.get("newStartPageToken") or "")
            page = str(reply.get("nextPageToken") or "")
            if not new_token and not page:
                raise SourceUnavailable("Google Drive's changes feed ended without a next token")
        arrived: list[str] = []
        for fid, change in changed_folders.items() if not relist else ():
            f = change.get("file") or {}
            here = not change.get("removed") and bool(f) and self._in_scope(f)
            if fid == self.folder_id or (fid in self._folders and not here):
                relist = True  # the synced folder itself, or one in it, changed or left
            elif fid in self._folders:
                relist = relist or _folder_stamp(f) != self._folders[fid]  # shared or moved
            elif here:
                arrived.append(fid)  # new, or moved in with what it holds
        if relist:  # what is under a shared, moved or trashed folder did not report
            yield from self._listing(new_token, known, recheck=True)
            return
        for fid in arrived:
            self._folders[fid] = _folder_stamp(changed_folders[fid]["file"])
            for f in self._list_files(under=fid):
                if _is_folder(_checked(f)):
                    self._folders[str(f["id"])] = _folder_stamp(f)
                else:
                    latest.setdefault(str(f["id"]), {"fileId": f["id"], "file": f})
        for fid in retry:  # failed last time and not changed since: asked for by id
            if fid not in latest and (change := self._file(fid)) is not None:
                latest[fid] = change
        stay = cursor  # until every batch is written: a killed sync reads the same feed again
        deleted, stale = [], []
        for fid, change in latest.items():
            f = change.get("file") or {}
            if change.get("removed") or not f or not self._in_scope(f) or not self._readable(f):
                if fid in known:
                    deleted.append(fid)
            elif _stamp(f) != _stamp_of(known.get(fid)):
                stale.append(f)
        # the feed names every file that changed: the rest are as they were
        moved = set(deleted) | {str(f["id"]) for f in stale}
        unchanged = [k for k in known if k not in moved]
        yield Batch(cursor=stay, deleted=sorted(deleted), unchanged=unchanged)
        for start in range(0, len(stale), self.batch_size):
            batch = Batch(cursor=stay)
            self._fetch(stale[start : start + self.batch_size], known, batch)
            yield batch
        yield Batch(cursor=self._cursor(new_token))

    def _file(self, fid: str) -> dict[str, Any] | None:
        """One file's metadata, as a change of it: ``removed`` when it is gone or hidden from
        the account; None when Drive cannot say now (asked again next time)."""
        try:
            meta = self.drive.get(
                f"/files/{fid}",
                {"fields": FILE_FIELDS, "supportsAllDrives": "true"},
                f"the file {fid}",
            )
        except DriveError as exc:
            if exc.status in (403, 404) and exc.reason not in RATE_REASONS:
                return {"fileId": fid, "removed": True}
            self._retry.add(fid)
            return None
        except SourceUnavailable:
            self._retry.add(fid)
            return None
        return {"fileId": fid, "file": meta}

    def _in_scope(self, f: Mapping[str, Any]) -> bool:
        if f.get("trashed") or str(f.get("driveId") or "") != self.drive_id:
            return False
        if not self.folder_id:
            return True
        parents: tuple[str, ...] = tuple(f.get("parents") or ())
        seen: set[str] = set()
        while parents:  # one parent per item since 2020; walk up to the folder or the root
            if self.folder_id in parents:
                return True
            parent = parents[0]
            if parent == self.drive_id or parent in seen or len(seen) > 100:
                return False  # the shared drive's root, above the folder
            seen.add(parent)
            if parent in self._folders and parent not in self._parents:  # seen in the listing
                self._parents[parent] = tuple(self._folders[parent][0])
            if parent not in self._parents:
                try:
                    meta = self.drive.get(
                        f"/files/{parent}",
                        {"fields": "id,parents,trashed", "supportsAllDrives": "true"},
                        f"the folder {parent}",
                    )
                except DriveError as exc:
                    if exc.status != 404:  # gone, or hidden from the account: not ours
                        raise
                    meta = {"trashed": True}
                self._parents[parent] = (
                    () if meta.get("trashed") else tuple(meta.get("parents") or ())
                )
            parents = self._parents[parent]
        return False

    # --- files -----------------------------------------------------------------------------

    def _readable(self, f: Mapping[str, Any]) -> bool:
        """Whether Footnote reads this file's type; folders are walked, never read."""
        mime = str(f.get("mimeType") or "")
        if mime == FOLDER:
            return False
        if mime in EXPORTS or mime in MEDIA_TYPES:
            return True
        self.skipped[mime] = self.skipped.get(mime, 0) + 1
        return False

    def _fetch(
        self, files: Sequence[Mapping[str, Any]], known: Mapping[str, str], batch: Batch
    ) -> None:
        for f in files:
            fid = str(f["id"])
            read = self._read.pop(fid, None)
            try:
                principals = read if read is not None else self._principals(fid)
                content, media_type = self._content(f)
            except DriveError as exc:
                if exc.status == 404:  # gone since it was listed: the next feed says so
                    continue
                self._failed(fid, f, known, batch, str(exc), read)
                continue
            except SourceUnavailable as exc:
                self._failed(fid, f, known, batch, str(exc), read)
                continue
            if content is None:
                batch.failed.append((fid, media_type))
                continue
            owners = f.get("owners") or []
            owner = (owners[0] if owners else f.get("lastModifyingUser") or {}).get("displayName")
            link = str(f.get("webViewLink") or "")
            if not link.startswith("https://"):  # a citation opens it: Google's own links only
                link = f"https://drive.google.com/file/d/{fid}/view"
            batch.documents.append(
                SourceDocument(
                    key=fid,
                    url=link,
                    content=content,
                    media_type=media_type,
                    version=json.dumps({**_stamp(f), "principals": principals}, sort_keys=True),
                    principals=tuple(principals),
                    title=str(f.get("name") or ""),
                    updated=str(f.get("modifiedTime") or "")[:10],
                    owner=str(owner or ""),
                )
            )

    def _failed(
        self,
        fid: str,
        f: Mapping[str, Any],
        known: Mapping[str, str],
        batch: Batch,
        why: str,
        read: list[str] | None,
    ) -> None:
        """Tried again at the next sync. A file that lost a permission leaves the index meanwhile
        (it comes back when fetched): its old copy must not answer someone who lost access."""
        self._retry.add(fid)
        old = json.loads(known[fid]) if known.get(fid) else None
        lost = old is not None and bool(set(old.get("ids") or []) - set(_stamp(f)["ids"]))
        if old is not None and read is not None and EVERYONE not in read:
            lost = lost or bool(set(old.get("principals") or []) - set(read))
        if lost:
            batch.deleted.append(fid)
        else:
            batch.failed.append((fid, why))

    def _content(self, f: Mapping[str, Any]) -> tuple[bytes | str | None, str]:
        fid, mime, name = str(f["id"]), str(f.get("mimeType") or ""), str(f.get("name") or "")
        if mime in EXPORTS:
            target = EXPORTS[mime]
            data = self.drive.content(
                f"/files/{fid}/export", {"mimeType": target}, f"the export of {fid}"
            )
            if len(data) > self.max_bytes:
                return None, f"too large: {len(data)} bytes"
            if target == "text/csv":
                return sheet_html(name, data), "text/html"
            if target == "text/html":
                return doc_html(name, data), "text/html"
            return data, target
        size = int(f.get("size") or 0)
        if size > self.max_bytes:
            return None, f"too large: {size} bytes"
        data = self.drive.content(
            f"/files/{fid}", {"alt": "media", "supportsAllDrives": "true"}, f"the file {fid}"
        )
        return data, mime

    # --- permissions -----------------------------------------------------------------------

    def _principals(self, fid: str) -> list[str]:
        found: set[str] = set()
        page: str | None = None
        while True:
            params = {"supportsAllDrives": "true", "fields": PERMISSION_FIELDS, "pageSize": 100}
            try:
                reply = self.drive.get(
                    f"/files/{fid}/permissions",
                    params | ({"pageToken": page} if page else {}),
                    f"the permissions of {fid}",
                )
            except DriveError as exc:
                if exc.status != 403 or exc.reason in RATE_REASONS:
                    raise
                self._warn(  # fail closed, and say why
                    f"{self.drive.account} may not see who may read some files (Drive: "
                    f"{exc.reason or exc.status}): they are admins only; make it a manager or "
                    "content manager of the shared drive, or an editor of the folder"
                )
                return []
            for perm in reply.get("permissions") or []:
                found |= self._principal(perm)
            page = reply.get("nextPageToken")
            if not page:
                return [EVERYONE] if EVERYONE in found else sorted(found)

    def _principal(self, perm: Mapping[str, Any]) -> set[str]:
        kind = perm.get("type")
        email = str(perm.get("emailAddress") or "").strip().lower()
        if perm.get("deleted"):  # the account is gone
            return set()
        if kind in ("user", "group"):
            if email:
                return {(USER if kind == "user" else GROUP) + email}
            self._warn(f"a {kind} permission without an e-mail address was left out")
            return set()
        if kind == "anyone":  # anyone with the link, or public: every member, never the internet
            return {EVERYONE}
        if kind == "domain":
            domain = str(perm.get("domain") or "").lower()
            if domain in self.domains:
                return {EVERYONE}
            self._warn(
                f"grants to the domain {domain} (not one of {', '.join(self.domains)}) were "
                "left out; add it with --domain if it is yours"
            )
        return set()

    # --- helpers ---------------------------------------------------------------------------

    def _drive_params(self) -> dict[str, Any]:
        return (
            {"driveId": self.drive_id, "supportsAllDrives": "true"}
            if self.drive_id
            else {"supportsAllDrives": "true"}
        )

    def _note_skipped(self) -> None:
        if self.skipped:
            kinds = ", ".join(f"{n} {m or 'untyped'}" for m, n in sorted(self.skipped.items()))
            self._warn(f"files of types Footnote does not read were skipped: {kinds}")

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            log.warning("%s", message)


def find_shared_drive(drive: DriveClient, name: str) -> dict[str, str]:
    """A shared drive by its name (as the account sees the drives it is a member of), or by id."""
    quoted = name.replace("\\", "\\\\").replace("'", "\\'")
    reply = drive.get(
        "/drives", {"q": f"name = '{quoted}'", "pageSize": 100}, f"the shared drive {name!r}"
    )
    found = [d for d in reply.get("drives") or [] if d.get("name") == name]
    if len(found) > 1:
        ids = ", ".join(str(d["id"]) for d in found)
        raise ConfigError(f"{len(found)} shared drives are named {name!r} ({ids}): give its id")
    if found:
        return {"id": str(found[0]["id"]), "name": name}
    try:
        if not DRIVE_ID.fullmatch(name):
            raise DriveError("not an id", 404, "notFound")
        by_id = drive.get(f"/drives/{name}", {}, f"the shared drive {name!r}")
    except DriveError as exc:
        if exc.status != 404:
            raise
        raise ConfigError(
            f"{drive.account} is not a member of a shared drive named {name!r}: add it as a "
            "member (Content manager, to see who may read each file) or check the name"
        ) from None
    return {"id": str(by_id["id"]), "name": str(by_id.get("name") or name)}


def _checked(f: dict[str, Any]) -> dict[str, Any]:
    if not DRIVE_ID.fullmatch(str(f.get("id") or "")):
        raise SourceUnavailable(
            f"Google Drive listed an unexpected file id {str(f.get('id'))[:40]!r}"
        )
    return f


def _is_folder(f: Mapping[str, Any]) -> bool:
    return f.get("mimeType") == FOLDER


def _folder_stamp(f: Mapping[str, Any]) -> list[Any]:
    """What makes a folder's change reach the files under it: where it is, who has access."""
    return [sorted(f.get("parents") or []), sorted(f.get("permissionIds") or [])]


def _stamp(f: Mapping[str, Any]) -> dict[str, Any]:
    """What says a file changed without fetching it: Drive's version and who has access."""
    return {"version": str(f.get("version") or ""), "ids": sorted(f.get("permissionIds") or [])}


def _stamp_of(recorded: str | None) -> dict[str, Any] | None:
    if not recorded:
        return None
    try:
        old = json.loads(recorded)
    except ValueError:
        return None
    return {"version": old.get("version"), "ids": old.get("ids")} if isinstance(old, dict) else None


def _throttled(response: httpx.Response) -> bool:
    if response.status_code in RETRIED:
        return True
    return response.status_code == 403 and _reason(response) in RATE_REASONS


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        data = response.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _reason(response: httpx.Response) -> str:
    error = _json(response).get("error")
    errors = (error.get("errors") if isinstance(error, dict) else None) or [{}]
    return str(errors[0].get("reason") or "")


def _message(response: httpx.Response) -> str:
    error = _json(response).get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return str(message)[:200] if message else response.reason_phrase


def doc_html(title: str, exported: bytes) -> str:
    """A Google Doc's HTML export, its headings anchored as Docs links them (``#heading=h.…``),
    the file's name as its title (and not again as a Title-styled first line). Text stays text: the parser reads the tree, escaping nothing in."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(exported.decode("utf-8", errors="replace"), "html.parser")
    for tag in soup.find_all(["script", "style"]):
        tag.decompose()
    for para in soup.find_all("p", class_="title"):  # the doc's name again, in the Title style
        if " ".join(para.get_text(" ").split()) == " ".join(title.split()):
            para.decompose()
    for heading in soup.find_all(["h1", "h2", "h3", "h4", "h5", "h6"]):
        anchor = str(heading.get("id") or "")
        if anchor.startswith("h."):
            heading["id"] = f"heading={anchor}"
    body = soup.body or soup
    head = f"<title>{escape(title)}</title>" if title else ""
    return f"<html><head>{head}</head><body>{body.decode_contents()}</body></html>"


def sheet_html(title: str, exported: bytes) -> str:
    """A sheet's CSV as an HTML table, which the folder ingest reads row by row with its header."""
    rows = list(csv.reader(io.StringIO(exported.decode("utf-8-sig", errors="replace"))))
    cells = "".join(
        "<tr>"
        + "".join(
            f"<t{'h' if i == 0 else 'd'}>{escape(c)}</t{'h' if i == 0 else 'd'}>" for c in row
        )
        + "</tr>"
        for i, row in enumerate(rows)
        if any(c.strip() for c in row)
    )
    head = f"<title>{escape(title)}</title>" if title else ""
    return f"<html><head>{head}</head><body><h1>{escape(title)}</h1><table>{cells}</table></body></html>"
