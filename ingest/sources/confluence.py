"""Confluence Cloud as a source: the pages of some spaces, with who may read each one.

Every sync makes the same few kinds of request to the REST API (v1, ``/wiki/rest/api``):

* ``GET /space/{key}?expand=permissions`` per space: who may read the space (its ``read``
  permission's users and groups; anonymous access, or a group every licensed user is in, is ``*``);
* one CQL listing of every page, ``space in (…) and type=page``, without bodies but with each
  page's version, ancestors and read restrictions, followed page by page through
  ``_links.next``;
* bodies (``body.storage``) of the pages whose version or readers differ from what was last
  written, by CQL ``id in (…)``, one request per batch.

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
Confluence's group names differ from the directory's.
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
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import yaml
from pydantic import SecretStr

from ingest.errors import ConfigError
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
LISTING = f"version,ancestors,space,{RESTRICTIONS}"
BODIES = "body.storage,version,space,history"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


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
    sleep: Callable[[float], None] = time.sleep
    requests: int = 0
    warnings: list[str] = field(default_factory=list)
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
        order = sorted(listed, key=lambda p: (len(p), p))  # numeric ids in numeric order
        stale = [pid for pid in order if versions[pid] != known.get(pid)]
        fresh = set(order) - set(stale)
        mark = json.dumps({"listed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        # the listing is whole: what it lacks is gone; what it shows as written is unchanged
        yield Batch(
            cursor=mark,
            deleted=sorted(set(known) - set(listed)),
            unchanged=[pid for pid in order if pid in fresh],
        )
        for start in range(0, len(stale), self.batch_size):
            ids = stale[start : start + self.batch_size]
            batch = Batch(cursor=mark)
            self._fetch(ids, versions, known, batch)
            yield batch

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
        """One GET with the account's API token, retried on 429 / 503 after their Retry-After
        (bounded) and on a dropped connection. 401 names the variables to fix."""
        auth = base64.b64encode(f"{self.email}:{self.token.get_secret_value()}".encode()).decode()
        headers = {"Authorization": f"Basic {auth}", "Accept": "application/json"}
        response: httpx.Response | None = None
        for attempt in range(self.retries + 1):
            self.requests += 1
            try:
                response = self.client.get(url, headers=headers)
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
        if response.status_code == 200:
            try:
                data = response.json()
            except ValueError as exc:
                raise SourceUnavailable(f"Confluence answered {what} with no JSON") from exc
            if isinstance(data, dict):
                return data
        tries = f" after {self.retries + 1} tries" if response.status_code in (429, 503) else ""
        raise SourceUnavailable(
            f"Confluence answered {what} with HTTP {response.status_code}{tries}: "
            f"{_message(response)}"
        )

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            log.warning("%s", message)


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
