"""SharePoint document libraries and OneDrive through Microsoft Graph, with who may read each file.

A thin client of Graph v1.0 over httpx; the msgraph SDK is not used: msgraph-sdk 1.65 is a 29 MB
wheel of 16,748 generated files (126 MB unpacked) plus azure-identity and five Kiota packages,
for the six kinds of GET and one POST made here.

* **Sign-in**: app-only, the client-credentials grant against
  ``{authority}/{tenant}/oauth2/v2.0/token``; the token is kept until it expires and fetched
  again once when Graph answers ``401 InvalidAuthenticationToken``.
* **What**: ``--site URL`` is resolved by ``GET /sites/{host}:/{path}``; its document libraries
  by ``GET /sites/{id}/drives`` (``--drive NAME`` picks one); ``--drive-id`` names a drive (a
  OneDrive) directly.
* **Changes**: ``GET /drives/{id}/root/delta``, following ``@odata.nextLink`` to the
  ``@odata.deltaLink`` that the next sync starts from. Files come with their content
  (``/content``, a redirect to a download URL) and permissions (``/permissions``), fetched
  ``concurrency`` files at a time; folders are only walked; the ``deleted`` facet deletes.
  ``Prefer: deltashowremovedasdeleted, deltatraversepermissiongaps, deltashowsharingchanges``
  makes a change of sharing alone appear.
  A delta token Graph no longer honours (``410 Gone``) starts a full enumeration, after which
  what it did not list is deleted.
* **Versions**: a file's ``eTag`` plus its principals. A sharing change alone moves only the
  principals: the file is fetched again, and the index, seeing the same bytes, relabels its
  points instead of embedding them again.
* **A whole listing** every ``full_every_days`` (7 by default): the delta is started afresh, every
  file's permissions are read again (nothing unchanged is downloaded) and what the listing lacks
  is deleted — a net under whatever a delta may not report.
* **Resuming**: the cursor holds, per drive, the link its current pass started from. Each batch
  records the versions it wrote, so a killed pass starts over from that link and skips (no
  download) every file whose version was recorded. Files that failed are kept in the cursor and
  fetched by id at the next sync, since the delta has moved past them.

Sign-in and throttling are ``graph_client.GraphClient``'s, shared with the bot's Graph directory.

Permissions: every permission the item lists (its own and inherited ones, with any role) grants
reading. People become ``user:<email>`` (their ``email``, else the e-mail in their SharePoint
login claim); Entra ID groups ``group:<object id>``; SharePoint site groups go through the
optional mapping file, else they are left out with a warning. Sharing links: ``organization`` and
``anonymous`` mean ``*`` (every member of the directory, never the open internet), ``users``
means the people the link names, ``existingAccess`` adds no one.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit

from ingest.errors import ConfigError
from ingest.parse import MEDIA_TYPES
from ingest.sources.confluence import load_group_map
from ingest.sources.connector import (
    EVERYONE,
    GROUP,
    USER,
    Batch,
    ConnectorEnv,
    SourceDocument,
    SourceUnavailable,
)
from ingest.sources.graph_client import (
    CLIENT_VAR,
    SECRET_VAR,
    TENANT_VAR,
    GraphClient,
    check_urls,
)

log = logging.getLogger(__name__)

# Without deltashowsharingchanges a change of sharing alone never shows up in the delta; Graph
# requires the other two with it.
PREFER = "deltashowremovedasdeleted, deltatraversepermissiongaps, deltashowsharingchanges"
NEEDS = (
    "the app registration needs the application permission Sites.Read.All (or Sites.Selected "
    "with a read grant on this site) and Files.Read.All, with admin consent"
)
# A file's type by its name, when Graph's mimeType is generic (application/octet-stream).
SUFFIX_TYPES = {suffix: media for media, suffix in reversed(list(MEDIA_TYPES.items()))}


class DeltaExpired(Exception):
    """Graph no longer honours a delta token (``410 Gone``): enumerate again from ``location``."""

    def __init__(self, location: str | None) -> None:
        super().__init__(location)
        self.location = location


@dataclass(frozen=True)
class Drive:
    id: str
    name: str


@dataclass
class SharePointConnector(GraphClient):
    """The app-only client (``graph_client.GraphClient``: token, throttling) and what it syncs."""

    site: str = ""  # https://acme.sharepoint.com/sites/Support
    drive: str = ""  # one document library of the site, by name; "": every one
    drive_id: str = ""  # one drive by id (a OneDrive, or a library), instead of a site
    group_map: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict
    )  # site group → principals
    batch_size: int = 20  # files written per batch
    max_bytes: int = 50 * 2**20
    wall: Callable[[], float] = time.time  # for the age of the last whole listing
    full_every_days: float = 7.0  # list every file again (not only the delta) this often
    concurrency: int = 4  # files whose permissions and content are fetched at once
    warnings: list[str] = field(default_factory=list)
    kind: str = "sharepoint"
    _retry: set[str] = field(default_factory=set)  # keys to fetch by id: the delta moved past them
    _written: dict[str, str] = field(default_factory=dict)  # key → version fetched this sync

    needs: ClassVar[str] = NEEDS

    @classmethod
    def from_config(cls, config: Mapping[str, Any], env: ConnectorEnv) -> SharePointConnector:
        creds = env.graph
        secret = creds.client_secret if creds else None
        if (
            not creds
            or not creds.tenant_id
            or not creds.client_id
            or not secret
            or not secret.get_secret_value()
        ):
            raise ConfigError(
                f"SharePoint needs an app registration: set {TENANT_VAR} (the Entra ID tenant "
                f"id), {CLIENT_VAR} (the app's client id) and {SECRET_VAR} (a client secret from "
                "the app's Certificates & secrets)"
            )
        check_urls(creds.authority, creds.url)
        mapping = config.get("group_map") or ""
        return cls(
            tenant_id=creds.tenant_id,
            client_id=creds.client_id,
            client_secret=secret,
            site=str(config.get("site") or ""),
            drive=str(config.get("drive") or ""),
            drive_id=str(config.get("drive_id") or ""),
            group_map=load_group_map(Path(mapping), "SharePoint") if mapping else {},
            full_every_days=float(config.get("full_every_days") or 7.0),
            concurrency=int(config.get("concurrency") or 4),
            authority=creds.authority,
            graph_url=creds.url,
            max_bytes=env.max_bytes,
        )

    @staticmethod
    def config(
        site: str | None = None,
        drive: str | None = None,
        drive_id: str | None = None,
        group_map: str | None = None,
        full_every_days: float = 7.0,
        concurrency: int = 4,
    ) -> dict[str, Any]:
        """What ``footnote sources add sharepoint`` stores: no credentials, ever."""
        if full_every_days <= 0:
            raise ConfigError("--full-every-days must be more than 0")
        if not 1 <= concurrency <= 16:
            raise ConfigError("--concurrency must be between 1 and 16 (Graph throttles beyond)")
        if bool(site) == bool(drive_id):
            raise ConfigError(
                "give a site (--site https://acme.sharepoint.com/sites/Support) or one drive "
                "(--drive-id, e.g. a OneDrive's), not both"
            )
        if drive and not site:
            raise ConfigError("--drive picks a library of a --site; with --drive-id leave it out")
        url = ""
        if site:
            parts = urlsplit(site.strip().rstrip("/"))
            if parts.scheme != "https" or not parts.hostname or parts.query:
                raise ConfigError(
                    f"--site must be the site's address, such as "
                    f"https://acme.sharepoint.com/sites/Support, got {site!r}"
                )
            path = parts.path
            segments = [p for p in path.split("/") if p]
            if len(segments) > 2 and segments[0] in ("sites", "teams"):
                path = "/" + "/".join(segments[:2])  # a page or library of the site: the site
            url = f"https://{parts.hostname}{path}"
        if group_map:
            load_group_map(Path(group_map), "SharePoint")  # a typo stops here, not at the sync
        return {
            "site": url,
            "drive": drive or "",
            "drive_id": drive_id or "",
            "group_map": str(Path(group_map).resolve()) if group_map else "",
            "full_every_days": full_every_days,
            "concurrency": concurrency,
        }

    # --- the seam --------------------------------------------------------------------------

    def changes(self, cursor: str | None, known: Mapping[str, str]) -> Iterator[Batch]:
        state = json.loads(cursor) if cursor else {}
        links: dict[str, dict[str, Any]] = dict(state.get("drives") or {})
        self._retry = set(state.get("retry") or [])
        self._written = {}
        drives = self._drives()
        ids = {d.id for d in drives}

        def mark() -> str:
            return json.dumps({"drives": links, "retry": sorted(self._retry)}, sort_keys=True)

        # a library deleted, or no longer visible to the app: its files go
        gone = sorted(k for k in known if _drive_of(k) not in ids)
        for drive_id in set(links) - ids:
            del links[drive_id]
        self._retry = {k for k in self._retry if _drive_of(k) in ids}
        if gone:
            yield Batch(cursor=mark(), deleted=gone)
        yield from self._retried(known, mark)
        for drive in drives:
            entry = links.get(drive.id) or {}
            listed = float(entry.get("listed") or 0)
            start, full = entry.get("link"), bool(entry.get("full", True))
            if not start or (not full and self.wall() - listed > self.full_every_days * 86400):
                # a whole listing now and then catches what a delta may not have said
                start, full = self._delta_url(drive.id), True
            links[drive.id] = {"link": start, "full": full, "listed": listed}  # a killed pass
            yield from self._walk(drive, start, full, known, links, mark)  # starts again here

    def close(self) -> None:
        self.client.close()

    # --- the walk --------------------------------------------------------------------------

    def _walk(
        self,
        drive: Drive,
        url: str,
        full: bool,
        known: Mapping[str, str],
        links: dict[str, dict[str, Any]],
        mark: Callable[[], str],
    ) -> Iterator[Batch]:
        seen: set[str] = set()
        removed: set[str] = set()
        pending: dict[str, Mapping[str, Any]] = {}  # files listed, to fetch together
        batch = Batch(cursor="")
        while True:
            try:
                page = self._json(url, f"the changes of {drive.name or drive.id}", delta=True)
            except DeltaExpired as expired:
                # Graph forgot the token: list everything again, then delete what it lacks
                self._warn(
                    f"Graph no longer knows the last sync's delta token for "
                    f"{drive.name or drive.id}: listing every file again (nothing is downloaded "
                    "that did not change)"
                )
                url, full = expired.location or self._delta_url(drive.id), True
                self.same_host(url)
                links[drive.id] = {**links[drive.id], "link": url, "full": True}
                seen.clear()
                removed.clear()
                pending.clear()
                continue
            for item in page.get("value") or []:
                key = f"{drive.id}/{item.get('id')}"
                pending.pop(key, None)  # an item listed twice: its last state counts
                if "deleted" in item:  # a deleted folder's files are listed one by one
                    batch.deleted.append(key)
                    removed.add(key)
                    seen.discard(key)
                    continue
                if "file" not in item:  # folders, the root, OneNote packages: only walked
                    continue
                if key in batch.deleted:  # deleted, then restored
                    batch.deleted.remove(key)
                seen.add(key)
                removed.discard(key)
                self._retry.discard(key)
                pending[key] = item
                if len(pending) >= max(1, self.batch_size):
                    self._fetch(drive.id, list(pending.values()), known, batch)
                    pending.clear()
                    batch.cursor = mark()
                    yield batch
                    batch = Batch(cursor="")
            nxt = page.get("@odata.nextLink")
            if nxt:
                url = self.same_host(str(nxt))
                continue
            delta = page.get("@odata.deltaLink")
            if not delta:
                raise SourceUnavailable(
                    f"Graph's delta of {drive.name or drive.id} ended with neither a next "
                    "nor a delta link"
                )
            break
        self._fetch(drive.id, list(pending.values()), known, batch)
        mine = {k for k in known if _drive_of(k) == drive.id}
        if full:  # the listing was whole: what it lacks is gone
            batch.deleted += sorted(mine - seen - removed)
        else:  # only what changed was listed: the rest is as it was
            batch.unchanged += sorted(mine - seen - removed)
        listed = self.wall() if full else links[drive.id].get("listed", 0)
        links[drive.id] = {"link": self.same_host(str(delta)), "full": False, "listed": listed}
        batch.cursor = mark()
        yield batch

    def _retried(self, known: Mapping[str, str], mark: Callable[[], str]) -> Iterator[Batch]:
        """Files that failed at the last sync, fetched by id: the delta will not list them again."""
        pending = sorted(self._retry)
        for start in range(0, len(pending), max(1, self.batch_size)):
            batch = Batch(cursor="")
            found: dict[str, list[Mapping[str, Any]]] = {}
            for key in pending[start : start + self.batch_size]:
                self._retry.discard(key)
                drive_id, item_id = key.split("/", 1)
                try:
                    item = self._json(
                        f"{self.base}/drives/{quote(drive_id)}/items/{quote(item_id)}",
                        f"file {item_id}",
                        missing_ok=True,
                    )
                except SourceUnavailable as exc:
                    batch.failed.append((key, str(exc)))
                    self._retry.add(key)
                    continue
                if not item or "deleted" in item or "file" not in item:
                    batch.deleted.append(key)
                    continue
                found.setdefault(drive_id, []).append(item)
            for drive_id, items in found.items():
                self._fetch(drive_id, items, known, batch)
            batch.cursor = mark()
            yield batch

    def _fetch(
        self, drive_id: str, items: list[Mapping[str, Any]], known: Mapping[str, str], batch: Batch
    ) -> None:
        """Permissions and, where they or the file changed, content of ``items``: up to
        ``concurrency`` files at a time, added to ``batch`` in the order they were listed."""

        def one(item: Mapping[str, Any]) -> Batch:
            part = Batch(cursor="")
            self._file(drive_id, item, known, part)
            return part

        if self.concurrency > 1 and len(items) > 1:
            with ThreadPoolExecutor(min(self.concurrency, len(items))) as pool:
                parts = list(pool.map(one, items))
        else:
            parts = [one(item) for item in items]
        for part in parts:
            batch.documents += part.documents
            batch.unchanged += part.unchanged
            batch.failed += part.failed
            batch.deleted += part.deleted

    def _file(
        self, drive_id: str, item: Mapping[str, Any], known: Mapping[str, str], batch: Batch
    ) -> None:
        item_id = str(item["id"])
        key = f"{drive_id}/{item_id}"
        name = str(item.get("name") or "")
        media = _media_type(item)
        if media is None:  # not a kind of document Footnote reads (images, zips, …)
            if key in known:
                batch.deleted.append(key)
            return
        size = int(item.get("size") or 0)
        if size > self.max_bytes:
            batch.failed.append((key, f"too large: {size} bytes"))
            return
        try:
            principals = self._principals(drive_id, item_id, name)
        except SourceUnavailable as exc:
            # Who may read it now is unknown: a copy already indexed leaves until it is known,
            # since this change may be the narrowing that should hide it.
            self._retry.add(key)
            if key in known:
                batch.deleted.append(key)
            else:
                batch.failed.append((key, str(exc)))
            return
        version = json.dumps(
            {"tag": str(item.get("eTag") or item.get("cTag") or ""), "principals": principals},
            sort_keys=True,
        )
        if self._written.get(key, known.get(key)) == version:
            batch.unchanged.append(key)
            return
        try:
            data = self._download(drive_id, item_id, name)
        except SourceUnavailable as exc:
            self._retry.add(key)
            if _lost_readers(known.get(key), principals):
                batch.deleted.append(key)  # no stale copy answers someone who lost access
            else:
                batch.failed.append((key, str(exc)))
            return
        if len(data) > self.max_bytes:
            batch.failed.append((key, f"too large: {len(data)} bytes"))
            return
        web_url = str(item.get("webUrl") or "")
        if not web_url.startswith("https://"):  # citations link to it: an address, nothing else
            batch.failed.append((key, f"no https webUrl to cite it by: {web_url[:80]!r}"))
            return
        self._written[key] = version  # listed twice in one sync (Graph may): fetched once
        created = ((item.get("createdBy") or {}).get("user") or {}).get("displayName")
        batch.documents.append(
            SourceDocument(
                key=key,
                url=web_url,
                content=data,
                media_type=media,
                version=version,
                principals=tuple(principals),
                title=PurePosixPath(name).stem,
                updated=str(item.get("lastModifiedDateTime") or "")[:10],
                owner=str(created or ""),
            )
        )

    # --- permissions -----------------------------------------------------------------------

    def _principals(self, drive_id: str, item_id: str, name: str) -> list[str]:
        url: str | None = f"{self.base}/drives/{quote(drive_id)}/items/{quote(item_id)}/permissions"
        found: set[str] = set()
        while url:
            page = self._json(url, f"the permissions of {name or item_id}")
            for perm in page.get("value") or []:
                found |= self._granted(perm, name or item_id)
            url = page.get("@odata.nextLink")
            if url:
                self.same_host(url)
        return sorted(found)

    def _granted(self, perm: Mapping[str, Any], where: str) -> set[str]:
        """The principals one permission lets read. Inherited ones (``inheritedFrom``; SharePoint
        libraries leave it out) count like the item's own: Graph lists what is effective."""
        if not perm.get("roles"):
            return set()
        link = perm.get("link")
        if link:
            scope = link.get("scope")
            if scope in ("organization", "anonymous"):
                return {EVERYONE}  # every member of the directory, never the open internet
            if scope == "users":
                return self._identities(perm.get("grantedToIdentitiesV2") or [], where)
            if scope != "existingAccess":
                self._warn(f"a sharing link of unknown scope {scope!r} is left out (on {where})")
            return set()
        sets = [perm["grantedToV2"]] if perm.get("grantedToV2") else []
        return self._identities([*sets, *(perm.get("grantedToIdentitiesV2") or [])], where)

    def _identities(self, sets: list[Mapping[str, Any]], where: str) -> set[str]:
        out: set[str] = set()
        for s in sets:
            user, group = s.get("user") or {}, s.get("group") or {}
            site_user, site_group = s.get("siteUser") or {}, s.get("siteGroup") or {}
            claim = _claim(str(site_user.get("loginName") or ""))
            if group.get("id"):
                out.add(GROUP + str(group["id"]))  # an Entra ID group, by object id
            elif user:
                email = str(user.get("email") or "").strip()
                if email:
                    out.add(USER + email.lower())
                elif claim:
                    out.add(claim)
                else:
                    who = user.get("displayName") or user.get("id")
                    self._warn(  # once per person, not per file they can read
                        f"{who}'s e-mail is not shown by Graph: what is shared with them alone "
                        "is left out for them"
                    )
            elif claim:
                out.add(claim)
            if site_group:
                name = str(site_group.get("displayName") or "")
                mapped = self.group_map.get(name) or self.group_map.get(str(site_group.get("id")))
                if mapped:
                    out.update(mapped)
                else:
                    self._warn(  # once per group, not per file it grants
                        f"SharePoint site group {name or site_group.get('id')!r} is not in the "
                        "group mapping (--group-map): its members are left out of what it grants"
                    )
        return out

    # --- sites and drives ------------------------------------------------------------------

    def _drives(self) -> list[Drive]:
        if self.drive_id:
            found = self._json(
                f"{self.base}/drives/{quote(self.drive_id)}",
                f"drive {self.drive_id}",
                missing_ok=True,
            )
            if not found:
                raise ConfigError(
                    f"Graph has no drive {self.drive_id!r} this app may read; {NEEDS}"
                )
            return [Drive(str(found["id"]), str(found.get("name") or ""))]
        parts = urlsplit(self.site)
        path = parts.path.rstrip("/")
        where = f"/sites/{parts.hostname}:{path}" if path else f"/sites/{parts.hostname}"
        site = self._json(
            self.base + quote(where, safe="/:"), f"the site {self.site}", missing_ok=True
        )
        if not site:
            raise ConfigError(f"Graph finds no site at {self.site}: check --site; {NEEDS}")
        url: str | None = f"{self.base}/sites/{quote(str(site['id']), safe=',')}/drives"
        drives: list[Drive] = []
        while url:
            page = self._json(url, f"the libraries of {self.site}")
            drives += [
                Drive(str(d["id"]), str(d.get("name") or ""))
                for d in page.get("value") or []
                if d.get("driveType", "documentLibrary") == "documentLibrary"
            ]
            url = page.get("@odata.nextLink")
            if url:
                self.same_host(url)
        if self.drive:
            picked = [d for d in drives if d.name == self.drive]
            if not picked:
                names = ", ".join(sorted(d.name for d in drives)) or "none"
                raise ConfigError(
                    f"{self.site} has no library named {self.drive!r}; it has: {names}"
                )
            drives = picked
        return sorted(drives, key=lambda d: d.id)

    # --- HTTP ------------------------------------------------------------------------------

    def _delta_url(self, drive_id: str) -> str:
        return f"{self.base}/drives/{quote(drive_id)}/root/delta"

    def _json(
        self, url: str, what: str, delta: bool = False, missing_ok: bool = False
    ) -> dict[str, Any]:
        response = self.send(url, what, {"Prefer": PREFER} if delta else {})
        if response.status_code == 200:
            try:
                data = response.json()
            except ValueError as exc:
                raise SourceUnavailable(f"Graph answered {what} with no JSON") from exc
            if isinstance(data, dict):
                return data
        if response.status_code == 410 and delta:
            location = response.headers.get("location")
            raise DeltaExpired(str(response.url.join(location)) if location else None)
        if response.status_code == 404 and missing_ok:
            return {}
        self.fail(response, what)

    def _download(self, drive_id: str, item_id: str, name: str) -> bytes:
        """The file's bytes: Graph redirects to a short-lived download URL, which needs no token
        (httpx drops it on a redirect to another host)."""
        url = f"{self.base}/drives/{quote(drive_id)}/items/{quote(item_id)}/content"
        response = self.send(url, f"the content of {name or item_id}", {}, follow=True)
        if response.status_code == 200:
            return response.content
        self.fail(response, f"the content of {name or item_id}")

    def _warn(self, message: str) -> None:
        with self._lock:
            if message in self.warnings:
                return
            self.warnings.append(message)
        log.warning("%s", message)


def _drive_of(key: str) -> str:
    return key.split("/", 1)[0]


def _media_type(item: Mapping[str, Any]) -> str | None:
    declared = str(((item.get("file") or {}).get("mimeType")) or "").split(";")[0].strip().lower()
    if declared in MEDIA_TYPES:
        return declared
    return SUFFIX_TYPES.get(PurePosixPath(str(item.get("name") or "")).suffix.lower())


def _claim(login: str) -> str | None:
    """A SharePoint login claim as a principal: ``i:0#.f|membership|ann@x.com`` a person, an
    Entra ID group's claim its object id, "Everyone (except external users)" ``*``."""
    kind, _, rest = login.rpartition("|")
    if kind == "i:0#.f|membership" and "@" in rest:
        return USER + rest.lower()
    if kind == "c:0o.c|federateddirectoryclaimprovider" and rest:
        return GROUP + rest.removesuffix("_o")  # a Microsoft 365 group (``_o``: its owners)
    if kind == "c:0t.c|tenant" and rest:
        return GROUP + rest  # a security group
    if login.startswith("c:0-.f|rolemanager|spo-grid-all-users") or login == "c:0(.s|true":
        return EVERYONE
    return None


def _lost_readers(old: str | None, principals: list[str]) -> bool:
    """Whether the recorded principals include someone the current ones leave out."""
    if old is None:
        return False
    before = set(json.loads(old).get("principals") or [])
    return EVERYONE not in principals and bool(before - set(principals))
