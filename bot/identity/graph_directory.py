"""The directory in Microsoft Entra ID, asked through Microsoft Graph one person at a time.

The SharePoint connector's app registration serves (``FOOTNOTE_GRAPH__*``, app-only token from
``ingest.sources.graph_client``); it needs the application permissions ``User.Read.All`` and
``GroupMember.Read.All`` with admin consent.

* A Teams user arrives with their Entra ID object id: ``GET /users/{id}``.
* A Slack user arrives with the e-mail of their Slack profile:
  ``GET /users?$filter=mail eq '…' or userPrincipalName eq '…'`` (quotes doubled, as OData
  strings want). Any other key (a Slack user id) is not something Entra ID knows: None, no call.
* Their groups: ``GET /users/{id}/transitiveMemberOf/microsoft.graph.group``, every page, so a
  member of a group nested in another reads what either may. A group is named by its object id,
  as SharePoint permissions name it (``group:<object id>`` in an ACL); a mapping file may add a
  second name (a demo group such as ``hr``) to an object id.
* A disabled account or a guest (``userType: Guest``) is unknown: no documents, and the reply
  that names whom to ask, as for anyone the directory lacks.
* Graph throttling (``429`` / ``503``, ``Retry-After``) is waited out a bounded number of times;
  after that, or when Graph cannot be reached, ``DirectoryUnavailable``: the asker is told the
  directory cannot be reached, never answered with someone else's groups or as everyone.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, urlencode

import httpx
import yaml

from bot.identity.directory import DirectoryUnavailable, Person
from ingest.errors import ConfigError
from ingest.settings import GraphSettings
from ingest.sources.connector import SourceUnavailable
from ingest.sources.graph_client import (
    CLIENT_VAR,
    SECRET_VAR,
    TENANT_VAR,
    GraphClient,
    check_urls,
)

log = logging.getLogger(__name__)

NEEDS = (
    "the app registration needs the application permissions User.Read.All and "
    "GroupMember.Read.All, with admin consent"
)
USER_FIELDS = "id,displayName,mail,userPrincipalName,accountEnabled,userType"
_OBJECT_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


class GraphDirectoryClient(GraphClient):
    """The shared app-only client, with this use's permissions named in its 403 errors."""

    needs: ClassVar[str] = NEEDS


@dataclass
class GraphDirectory:
    graph: GraphClient
    group_names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # object id → names

    @classmethod
    def from_settings(
        cls, graph: GraphSettings | None, group_names: Path | None = None
    ) -> GraphDirectory:
        secret = graph.client_secret if graph else None
        if not graph or not graph.tenant_id or not graph.client_id or not secret:
            raise ConfigError(
                "FOOTNOTE_DIRECTORY__SOURCE=graph reads people from Microsoft Entra ID: set "
                f"{TENANT_VAR}, {CLIENT_VAR} and {SECRET_VAR} (an app registration with the "
                "application permissions User.Read.All and GroupMember.Read.All, admin consent)"
            )
        if not secret.get_secret_value():
            raise ConfigError(f"{SECRET_VAR} is empty: set the app's client secret")
        check_urls(graph.authority, graph.url)
        client = GraphDirectoryClient(
            tenant_id=graph.tenant_id,
            client_id=graph.client_id,
            client_secret=secret,
            authority=graph.authority,
            graph_url=graph.url,
            # a person waits for this: fail in seconds, not in a sync's minutes
            client=httpx.Client(timeout=10.0),
            retries=2,
            max_wait_s=5.0,
        )
        return cls(client, load_group_names(group_names) if group_names else {})

    @staticmethod
    def asks_about(key: str) -> bool:
        """Whether ``key`` is one Entra ID can have (an object id or an address); any other
        (a Slack user id, a demo name) is answered None at once, with no request."""
        key = key.strip()
        return bool(_OBJECT_ID.match(key)) or "@" in key

    def find(self, key: str) -> Person | None:
        key = key.strip()
        if not self.asks_about(key):
            return None
        try:
            user = self._user(key) if _OBJECT_ID.match(key) else self._by_email(key)
            if user is None or not _member(user):
                return None
            groups = self._groups(str(user["id"]))
        except SourceUnavailable as exc:
            raise DirectoryUnavailable(f"Microsoft Graph: {exc}") from exc
        except ConfigError as exc:  # credentials or permissions: the message names the fix
            raise DirectoryUnavailable(f"Microsoft Graph refused the lookup: {exc}") from exc
        upn = str(user.get("userPrincipalName") or "")
        named = [n for g in groups for n in (g, *self.group_names.get(g, ()))]
        return Person(
            user_id=upn.lower(),
            name=str(user.get("displayName") or upn),
            email=str(user.get("mail") or upn),
            groups=tuple(dict.fromkeys(named)),
            teams_id=str(user["id"]),
        )

    def close(self) -> None:
        self.graph.client.close()

    # --- Graph ---------------------------------------------------------------------------------

    def _get(
        self, url: str, what: str, params: Mapping[str, str] | None = None, **headers: str
    ) -> dict[str, Any] | None:
        if params:  # %20 for spaces, %2B for a '+' in an address: never '+' for a space
            url += "?" + urlencode(params, quote_via=quote, safe="$,")
        response = self.graph.send(url, what, headers)
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            self.graph.fail(response, what)
        try:
            body = response.json()
        except ValueError as exc:
            raise SourceUnavailable(f"Graph answered {what} with no JSON") from exc
        if not isinstance(body, dict):
            raise SourceUnavailable(f"Graph answered {what} with no JSON object")
        return body

    def _user(self, object_id: str) -> dict[str, Any] | None:
        return self._get(
            f"{self.graph.base}/users/{quote(object_id)}",
            f"the user {object_id}",
            {"$select": USER_FIELDS},
        )

    def _by_email(self, email: str) -> dict[str, Any] | None:
        literal = "'" + email.replace("'", "''") + "'"
        body = self._get(
            f"{self.graph.base}/users",
            "a user by e-mail",
            {
                "$filter": f"mail eq {literal} or userPrincipalName eq {literal}",
                "$select": USER_FIELDS,
            },
        )
        found = [u for u in (body or {}).get("value") or [] if isinstance(u, dict)]
        exact = [u for u in found if str(u.get("mail") or "").lower() == email.lower()]
        chosen = exact or found
        return chosen[0] if chosen else None

    def _groups(self, object_id: str) -> list[str]:
        url: str | None = (
            f"{self.graph.base}/users/{quote(object_id)}/transitiveMemberOf/microsoft.graph.group"
        )
        params: dict[str, str] | None = {
            "$select": "id,displayName",
            "$top": "999",
            "$count": "true",
        }
        ids: list[str] = []
        while url:
            # the OData cast is an advanced query: Graph wants ConsistencyLevel and $count
            page = self._get(url, "the user's groups", params, ConsistencyLevel="eventual")
            if page is None:
                raise SourceUnavailable(f"Graph lost the user {object_id} while listing groups")
            ids += [str(g["id"]) for g in page.get("value") or [] if g.get("id")]
            url, params = page.get("@odata.nextLink"), None
            if url:
                self.graph.same_host(str(url))
        return sorted(set(ids))


def _member(user: Mapping[str, Any]) -> bool:
    """An enabled member of the tenant: a guest or a disabled account reads nothing."""
    return user.get("accountEnabled") is not False and user.get("userType") != "Guest"


def load_group_names(path: Path) -> dict[str, tuple[str, ...]]:
    """``{object id: name or [names]}`` from YAML: extra names for Entra ID groups (demo names,
    the admin group), beside the object id itself."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"cannot read the group names {path}: {exc}; fix FOOTNOTE_DIRECTORY__GROUP_NAMES"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must map Entra ID group object ids to names")
    return {
        str(k): tuple(str(n) for n in (v if isinstance(v, list) else [v])) for k, v in data.items()
    }
