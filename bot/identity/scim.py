"""SCIM 2.0 (RFC 7643 / 7644): the company's identity provider pushes its people and groups here,
and they become the directory that decides who may read what.

Okta, Entra ID and others provision an app by calling ``/scim/v2/Users`` and ``/scim/v2/Groups``
with a bearer token. The endpoint exists only when ``FOOTNOTE_SCIM__TOKEN`` is set (there is no
default token); every request must carry that token (compared in constant time), else 401.

What is stored, durably in the one database (``ingest/database.py``): per user the id we issue,
``userName``, ``externalId`` (Entra ID's object id, which Teams sends), display name, primary
e-mail and ``active``; per group its id, ``displayName`` and ``externalId``; the memberships.
Nothing else the provider sends is kept.

``ScimDirectory`` reads it as the bot's ``Directory``: a user is found by ``userName``, e-mail
or ``externalId`` (case-blind), only while active; their groups are each group's display name
and, when the provider sent one, its external id (Entra ID group object ids, as SharePoint and
Teams name groups). A deactivated or deleted user is unknown at once: their next question gets
the reply for people the directory does not know, and no document.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Self, cast

from aiohttp import web

from bot.identity.directory import Person
from ingest.database import Database, Migrations, now
from ingest.errors import ConfigError
from ingest.settings import DatabaseSettings

USER = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"
MEDIA_TYPE = "application/scim+json"
BASE = "/scim/v2"
MAX_PAGE = 200  # resources per list response, whatever ``count`` asks

log = logging.getLogger(__name__)

# ``attribute eq "value"``: the filters identity providers send to find what they provisioned.
_FILTER = re.compile(r'^\s*([A-Za-z.]+)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$', re.I)
_MEMBER_PATH = re.compile(r'^members\[value eq "([^"]+)"\]$', re.I)
# What no name or id holds, and what a database cannot store (PostgreSQL refuses NUL in text, and
# a lone UTF-16 surrogate, which JSON's "\ud800" makes, is no UTF-8 at all).
_UNSTORABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


class ScimError(Exception):
    """An RFC 7644 error: HTTP status, ``scimType`` (may be empty) and a detail for the caller."""

    def __init__(self, status: int, detail: str, scim_type: str = ""):
        super().__init__(detail)
        self.status, self.detail, self.scim_type = status, detail, scim_type


class ScimStore(Database):
    """Users, groups and memberships as the identity provider last sent them.

    ``open`` remembers where the database is, so after an outage ``reconnect`` (which the routes
    call before the next request) gets a new connection instead of failing until a restart.
    """

    _where: tuple[DatabaseSettings, Path] | None = None

    VERSION_TABLE: ClassVar[str] = "scim_schema_version"
    WHAT: ClassVar[str] = "the SCIM directory"
    MIGRATIONS: ClassVar[Migrations] = (
        (
            1,
            [
                "CREATE TABLE scim_users (id TEXT PRIMARY KEY, user_name TEXT NOT NULL UNIQUE,"
                " user_key TEXT NOT NULL UNIQUE, external_id TEXT NOT NULL DEFAULT '',"
                " display_name TEXT NOT NULL DEFAULT '', email TEXT NOT NULL DEFAULT '',"
                " active INTEGER NOT NULL DEFAULT 1, created TEXT NOT NULL, modified TEXT NOT NULL)",
                "CREATE INDEX scim_users_email ON scim_users (email)",
                "CREATE INDEX scim_users_external ON scim_users (external_id)",
                "CREATE TABLE scim_groups (id TEXT PRIMARY KEY, display_name TEXT NOT NULL UNIQUE,"
                " external_id TEXT NOT NULL DEFAULT '', created TEXT NOT NULL,"
                " modified TEXT NOT NULL)",
                "CREATE TABLE scim_members (group_id TEXT NOT NULL REFERENCES scim_groups(id)"
                " ON DELETE CASCADE, user_id TEXT NOT NULL REFERENCES scim_users(id)"
                " ON DELETE CASCADE, PRIMARY KEY (group_id, user_id))",
            ],
        ),
    )

    @classmethod
    def open(cls, settings: DatabaseSettings, data_dir: Path, connect_timeout: int = 10) -> Self:
        store = super().open(settings, data_dir, connect_timeout)
        store._where = (settings, data_dir)
        return store

    def reconnect(self) -> None:
        """A new connection to the same database; ``ConfigError`` while it is still away."""
        if self._where is None:
            return
        settings, data_dir = self._where
        fresh = type(self).open(settings, data_dir, connect_timeout=3)
        old, self._conn = self._conn, fresh._conn
        with contextlib.suppress(Exception):
            old.close()

    # -- users -------------------------------------------------------------------------------

    _USER_COLUMNS = "id, user_name, external_id, display_name, email, active, created, modified"

    def create_user(self, body: Mapping[str, Any]) -> dict[str, Any]:
        fields = _user_fields(body)
        if self._user_named(fields["user_name"]) is not None:
            raise ScimError(409, f"userName {fields['user_name']!r} exists", "uniqueness")
        uid, stamp = uuid.uuid4().hex, now()
        with self._transaction():
            self._rows(
                "INSERT INTO scim_users (id, user_name, user_key, external_id, display_name,"
                " email, active, created, modified) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    uid,
                    fields["user_name"],
                    fields["user_name"].lower(),
                    fields["external_id"],
                    fields["display_name"],
                    fields["email"],
                    int(fields["active"]),
                    stamp,
                    stamp,
                ),
            )
        return self.user(uid)

    def user(self, uid: str) -> dict[str, Any]:
        if _UNSTORABLE.search(uid):  # no id we issue holds one
            raise ScimError(404, f"no user {uid!r}")
        rows = self._rows(f"SELECT {self._USER_COLUMNS} FROM scim_users WHERE id = ?", (uid,))
        if not rows:
            raise ScimError(404, f"no user {uid}")
        return self._user_resource(rows[0])

    def users(self, attribute: str = "", value: str = "") -> list[dict[str, Any]]:
        where, params = "", cast(tuple[str, ...], ())
        column = {"username": "user_key", "externalid": "external_id", "emails.value": "email"}
        if attribute:
            if attribute.lower() not in column:
                raise ScimError(400, f"filtering on {attribute} is not supported", "invalidFilter")
            key = value.lower() if attribute.lower() != "externalid" else value
            where, params = f" WHERE {column[attribute.lower()]} = ?", (key,)
        rows = self._rows(
            f"SELECT {self._USER_COLUMNS} FROM scim_users{where} ORDER BY created, id", params
        )
        return [self._user_resource(r) for r in rows]

    def replace_user(self, uid: str, body: Mapping[str, Any]) -> dict[str, Any]:
        self.user(uid)  # 404 first
        fields = _user_fields(body)
        other = self._user_named(fields["user_name"])
        if other is not None and other != uid:
            raise ScimError(409, f"userName {fields['user_name']!r} exists", "uniqueness")
        self._write_user(uid, fields)
        return self.user(uid)

    def patch_user(self, uid: str, operations: list[dict[str, Any]]) -> dict[str, Any]:
        current = self.user(uid)
        fields = {
            "user_name": current["userName"],
            "external_id": current.get("externalId", ""),
            "display_name": current.get("displayName", ""),
            "email": _primary_email(current),
            "active": current["active"],
        }
        for op, path, value in _operations(operations):
            changes = {path: value} if path else value
            if not isinstance(changes, dict):
                raise ScimError(400, "a patch without a path needs an object value", "invalidValue")
            for attr, new in changes.items():
                fields.update(_user_change(op, attr, new))
        other = self._user_named(fields["user_name"])
        if other is not None and other != uid:
            raise ScimError(409, f"userName {fields['user_name']!r} exists", "uniqueness")
        self._write_user(uid, fields)
        return self.user(uid)

    def delete_user(self, uid: str) -> None:
        self.user(uid)
        with self._transaction():
            self._rows("DELETE FROM scim_members WHERE user_id = ?", (uid,))
            self._rows("DELETE FROM scim_users WHERE id = ?", (uid,))

    def _write_user(self, uid: str, fields: dict[str, Any]) -> None:
        with self._transaction():
            self._rows(
                "UPDATE scim_users SET user_name = ?, user_key = ?, external_id = ?,"
                " display_name = ?, email = ?, active = ?, modified = ? WHERE id = ?",
                (
                    fields["user_name"],
                    fields["user_name"].lower(),
                    fields["external_id"],
                    fields["display_name"],
                    fields["email"],
                    int(bool(fields["active"])),
                    now(),
                    uid,
                ),
            )

    def _user_named(self, user_name: str) -> str | None:
        rows = self._rows("SELECT id FROM scim_users WHERE user_key = ?", (user_name.lower(),))
        return str(rows[0][0]) if rows else None

    def _user_resource(self, row: tuple[Any, ...]) -> dict[str, Any]:
        uid, user_name, external_id, display_name, email, active, created, modified = row
        groups = self._rows(
            "SELECT g.id, g.display_name FROM scim_groups g JOIN scim_members m"
            " ON m.group_id = g.id WHERE m.user_id = ? ORDER BY g.display_name",
            (uid,),
        )
        resource: dict[str, Any] = {
            "schemas": [USER],
            "id": uid,
            "userName": user_name,
            "active": bool(active),
            "groups": [{"value": gid, "display": name} for gid, name in groups],
            "meta": _meta("User", uid, created, modified),
        }
        if external_id:
            resource["externalId"] = external_id
        if display_name:
            resource["displayName"] = display_name
        if email:
            resource["emails"] = [{"value": email, "primary": True}]
        return resource

    # -- groups ------------------------------------------------------------------------------

    def create_group(self, body: Mapping[str, Any]) -> dict[str, Any]:
        name = _text(body.get("displayName"), "displayName", required=True)
        if self._rows("SELECT 1 FROM scim_groups WHERE display_name = ?", (name,)):
            raise ScimError(409, f"group {name!r} exists", "uniqueness")
        gid, stamp = uuid.uuid4().hex, now()
        members = _member_ids(body.get("members"))
        with self._transaction():
            self._rows(
                "INSERT INTO scim_groups (id, display_name, external_id, created, modified)"
                " VALUES (?, ?, ?, ?, ?)",
                (gid, name, _text(body.get("externalId"), "externalId"), stamp, stamp),
            )
            self._add_members(gid, members)
        return self.group(gid)

    def group(self, gid: str) -> dict[str, Any]:
        if _UNSTORABLE.search(gid):
            raise ScimError(404, f"no group {gid!r}")
        rows = self._rows(
            "SELECT id, display_name, external_id, created, modified FROM scim_groups WHERE id = ?",
            (gid,),
        )
        if not rows:
            raise ScimError(404, f"no group {gid}")
        return self._group_resource(rows[0])

    def groups(self, attribute: str = "", value: str = "") -> list[dict[str, Any]]:
        where, params = "", cast(tuple[str, ...], ())
        column = {"displayname": "display_name", "externalid": "external_id"}
        if attribute:
            if attribute.lower() not in column:
                raise ScimError(400, f"filtering on {attribute} is not supported", "invalidFilter")
            where, params = f" WHERE {column[attribute.lower()]} = ?", (value,)
        rows = self._rows(
            "SELECT id, display_name, external_id, created, modified FROM scim_groups"
            f"{where} ORDER BY created, id",
            params,
        )
        return [self._group_resource(r) for r in rows]

    def replace_group(self, gid: str, body: Mapping[str, Any]) -> dict[str, Any]:
        self.group(gid)
        name = _text(body.get("displayName"), "displayName", required=True)
        self._name_free(name, gid)
        members = _member_ids(body.get("members"))
        with self._transaction():
            self._rows(
                "UPDATE scim_groups SET display_name = ?, external_id = ?, modified = ?"
                " WHERE id = ?",
                (name, _text(body.get("externalId"), "externalId"), now(), gid),
            )
            self._rows("DELETE FROM scim_members WHERE group_id = ?", (gid,))
            self._add_members(gid, members)
        return self.group(gid)

    def patch_group(self, gid: str, operations: list[dict[str, Any]]) -> dict[str, Any]:
        self.group(gid)
        with self._transaction():
            for op, path, value in _operations(operations):
                changes = {path: value} if path else value
                if not isinstance(changes, dict):
                    raise ScimError(
                        400, "a patch without a path needs an object value", "invalidValue"
                    )
                for attr, new in changes.items():
                    self._group_change(gid, op, attr, new)
            self._rows("UPDATE scim_groups SET modified = ? WHERE id = ?", (now(), gid))
        return self.group(gid)

    def delete_group(self, gid: str) -> None:
        self.group(gid)
        with self._transaction():
            self._rows("DELETE FROM scim_members WHERE group_id = ?", (gid,))
            self._rows("DELETE FROM scim_groups WHERE id = ?", (gid,))

    def _group_change(self, gid: str, op: str, attr: str, value: Any) -> None:
        member = _MEMBER_PATH.match(attr)
        if member and op == "remove":  # members[value eq "id"]
            self._rows(
                "DELETE FROM scim_members WHERE group_id = ? AND user_id = ?",
                (gid, member.group(1)),
            )
        elif attr.lower() == "members":
            ids = _member_ids(value) if value is not None else []
            if op == "remove" and value is None:
                self._rows("DELETE FROM scim_members WHERE group_id = ?", (gid,))
            elif op == "remove":
                for uid in ids:
                    self._rows(
                        "DELETE FROM scim_members WHERE group_id = ? AND user_id = ?", (gid, uid)
                    )
            else:
                if op == "replace":
                    self._rows("DELETE FROM scim_members WHERE group_id = ?", (gid,))
                self._add_members(gid, ids)
        elif attr.lower() == "displayname" and op != "remove":
            name = _text(value, "displayName", required=True)
            self._name_free(name, gid)
            self._rows("UPDATE scim_groups SET display_name = ? WHERE id = ?", (name, gid))
        elif attr.lower() == "externalid":
            new = "" if op == "remove" else _text(value, "externalId")
            self._rows("UPDATE scim_groups SET external_id = ? WHERE id = ?", (new, gid))
        else:
            raise ScimError(400, f"cannot {op} {attr} on a group", "invalidPath")

    def _name_free(self, name: str, gid: str) -> None:
        """409 when another group has this ``displayName`` (the column is unique)."""
        if self._rows("SELECT 1 FROM scim_groups WHERE display_name = ? AND id <> ?", (name, gid)):
            raise ScimError(409, f"group {name!r} exists", "uniqueness")

    def _add_members(self, gid: str, user_ids: list[str]) -> None:
        for uid in user_ids:
            if not self._rows("SELECT 1 FROM scim_users WHERE id = ?", (uid,)):
                raise ScimError(400, f"member {uid} is no user here", "invalidValue")
            if not self._rows(
                "SELECT 1 FROM scim_members WHERE group_id = ? AND user_id = ?", (gid, uid)
            ):
                self._rows("INSERT INTO scim_members (group_id, user_id) VALUES (?, ?)", (gid, uid))

    def _group_resource(self, row: tuple[Any, ...]) -> dict[str, Any]:
        gid, name, external_id, created, modified = row
        members = self._rows(
            "SELECT u.id, u.user_name FROM scim_users u JOIN scim_members m ON m.user_id = u.id"
            " WHERE m.group_id = ? ORDER BY u.user_name",
            (gid,),
        )
        resource: dict[str, Any] = {
            "schemas": [GROUP],
            "id": gid,
            "displayName": name,
            "members": [{"value": uid, "display": user} for uid, user in members],
            "meta": _meta("Group", gid, created, modified),
        }
        if external_id:
            resource["externalId"] = external_id
        return resource

    # -- the directory's read ----------------------------------------------------------------

    def person(self, key: str) -> Person | None:
        """The active user whose userName, e-mail or external id is ``key``, with their groups."""
        key = key.strip()
        if not key:
            return None
        rows = self._rows(
            "SELECT id, user_name, display_name, email, external_id FROM scim_users"
            " WHERE active = 1 AND (user_key = ? OR email = ? OR external_id = ?)"
            " ORDER BY created LIMIT 1",
            (key.lower(), key.lower(), key),
        )
        if not rows:
            return None
        uid, user_name, display_name, email, external_id = rows[0]
        groups = self._rows(
            "SELECT g.display_name, g.external_id FROM scim_groups g JOIN scim_members m"
            " ON m.group_id = g.id WHERE m.user_id = ? ORDER BY g.display_name",
            (uid,),
        )
        names = [n for name, ext in groups for n in (name, ext) if n]
        return Person(
            user_id=user_name,
            name=display_name or user_name,
            email=email,
            groups=tuple(dict.fromkeys(names)),
            teams_id=external_id,
        )


class ScimDirectory:
    """The bot's ``Directory`` over what the identity provider pushed (module doc)."""

    def __init__(self, store: ScimStore):
        self.store = store

    @classmethod
    def open(cls, database: DatabaseSettings, data_dir: Path) -> ScimDirectory:
        return cls(ScimStore.open(database, data_dir))

    def find(self, key: str) -> Person | None:
        return self.store.person(key)


# -- reading what the provider sends ---------------------------------------------------------


def _text(value: object, name: str, required: bool = False) -> str:
    if value is None or value == "":
        if required:
            raise ScimError(400, f"{name} is required", "invalidValue")
        return ""
    if not isinstance(value, str) or len(value) > 512:
        raise ScimError(400, f"{name} must be a string of at most 512 characters", "invalidValue")
    if _UNSTORABLE.search(value):
        raise ScimError(
            400, f"{name} holds a control character or a lone surrogate", "invalidValue"
        )
    return value.strip()


def _flag(value: object) -> bool:
    """``active``: a boolean, or the strings "True"/"False" some providers send in patches."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ScimError(400, "active must be true or false", "invalidValue")


def _primary_email(resource: Mapping[str, Any]) -> str:
    emails = resource.get("emails")
    if emails is None:
        return ""
    if not isinstance(emails, list) or not all(isinstance(e, dict) for e in emails):
        raise ScimError(400, "emails must be a list of objects", "invalidValue")
    chosen = next((e for e in emails if e.get("primary")), emails[0] if emails else {})
    return _text(chosen.get("value"), "emails.value").lower()


def _user_fields(body: Mapping[str, Any]) -> dict[str, Any]:
    raw_name = body.get("name")
    name: dict[str, Any] = raw_name if isinstance(raw_name, dict) else {}
    display = _text(body.get("displayName"), "displayName") or " ".join(
        p
        for p in (
            _text(name.get("givenName"), "name.givenName"),
            _text(name.get("familyName"), "name.familyName"),
        )
        if p
    )
    user_name = _text(body.get("userName"), "userName", required=True)
    return {
        "user_name": user_name,
        "external_id": _text(body.get("externalId"), "externalId"),
        "display_name": display,
        "email": _primary_email(body) or (user_name.lower() if "@" in user_name else ""),
        "active": _flag(body.get("active", True)),
    }


def _user_change(op: str, attr: str, value: Any) -> dict[str, Any]:
    key = attr.lower()
    if key == "active":
        return {"active": False if op == "remove" else _flag(value)}
    if key == "username" and op != "remove":
        return {"user_name": _text(value, "userName", required=True)}
    if key == "externalid":
        return {"external_id": "" if op == "remove" else _text(value, "externalId")}
    if key in ("displayname", "name.formatted"):
        return {"display_name": "" if op == "remove" else _text(value, "displayName")}
    if key == "emails" or key.startswith("emails["):
        if op == "remove":
            return {"email": ""}
        emails = value if isinstance(value, list) else [{"value": value, "primary": True}]
        return {"email": _primary_email({"emails": emails})}
    if key in ("name.givenname", "name.familyname", "name"):
        return {}  # the display name carries the name we show
    raise ScimError(400, f"cannot {op} {attr} on a user", "invalidPath")


def _operations(operations: object) -> list[tuple[str, str, Any]]:
    if not isinstance(operations, list) or not operations:
        raise ScimError(400, "Operations must be a non-empty list", "invalidSyntax")
    out = []
    for o in operations:
        if not isinstance(o, dict):
            raise ScimError(400, "each operation must be an object", "invalidSyntax")
        op = str(o.get("op", "")).lower()  # Entra ID sends "Replace", "Add", "Remove"
        if op not in ("add", "replace", "remove"):
            raise ScimError(400, f"unknown op {o.get('op')!r}", "invalidSyntax")
        path = o.get("path") or ""
        if not isinstance(path, str):
            raise ScimError(400, "path must be a string", "invalidPath")
        out.append((op, path, o.get("value")))
    return out


def _member_ids(members: object) -> list[str]:
    if members is None:
        return []
    if not isinstance(members, list) or not all(
        isinstance(m, dict) and isinstance(m.get("value"), str) for m in members
    ):
        raise ScimError(400, 'members must be a list of {"value": id}', "invalidValue")
    ids = list(dict.fromkeys(m["value"] for m in members))
    if any(_UNSTORABLE.search(i) for i in ids):
        raise ScimError(400, "a member's value holds a control character", "invalidValue")
    return ids


def _meta(kind: str, rid: str, created: str, modified: str) -> dict[str, str]:
    return {
        "resourceType": kind,
        "created": created,
        "lastModified": modified,
        "location": f"{BASE}/{kind}s/{rid}",
    }


# -- HTTP ------------------------------------------------------------------------------------


def scim_routes(app: web.Application, store: ScimStore, token: str) -> None:
    """Mount ``/scim/v2``: Users and Groups (create, read, list with an ``eq`` filter, replace,
    patch, delete) and ServiceProviderConfig, each behind the bearer token."""
    if len(token) < 32 or token != token.strip():
        raise ValueError(
            "the SCIM token must be at least 32 characters, with no whitespace around it"
        )
    expected = f"Bearer {token}".encode()
    broken = False  # the last request lost the database: reconnect before the next

    def guarded(
        handler: Callable[[web.Request], Awaitable[Any]], status: int = 200
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def route(request: web.Request) -> web.Response:
            nonlocal broken
            given = request.headers.get("Authorization", "").encode("utf-8", "surrogateescape")
            if not hmac.compare_digest(given, expected):
                return _error(ScimError(401, "a valid bearer token is required"))
            try:
                if broken:
                    store.reconnect()
                    broken = False
                result = await handler(request)
            except ScimError as exc:
                return _error(exc)
            except Exception as exc:
                fault = _database_fault(exc)
                if fault is None:
                    raise
                if fault.status == 503:
                    broken = True
                    log.warning("SCIM: the database is not answering: %s", exc)
                return _error(fault)
            if result is None:
                return web.Response(status=204)
            return web.Response(status=status, text=json.dumps(result), content_type=MEDIA_TYPE)

        return route

    async def body(request: web.Request) -> dict[str, Any]:
        if request.content_type not in (MEDIA_TYPE, "application/json"):
            raise ScimError(415, f"send {MEDIA_TYPE}")
        raw = await request.read()  # the app's client_max_size answers 413 above 1 MB
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ScimError(400, "the body is not JSON", "invalidSyntax") from exc
        if not isinstance(data, dict):
            raise ScimError(400, "the body must be a JSON object", "invalidSyntax")
        return data

    def listing(
        request: web.Request, find: Callable[[str, str], list[dict[str, Any]]]
    ) -> dict[str, Any]:
        attribute = value = ""
        if "filter" in request.query:
            m = _FILTER.match(request.query["filter"])
            if not m:
                raise ScimError(
                    400, 'only `attribute eq "value"` filters are supported', "invalidFilter"
                )
            attribute, value = m.group(1), m.group(2).replace('\\"', '"')
            if _UNSTORABLE.search(value):
                raise ScimError(
                    400, "the filter's value holds a control character", "invalidFilter"
                )
        try:
            start = max(1, int(request.query.get("startIndex", "1")))
            count = min(MAX_PAGE, max(0, int(request.query.get("count", str(MAX_PAGE)))))
        except ValueError as exc:
            raise ScimError(400, "startIndex and count must be integers", "invalidValue") from exc
        found = find(attribute, value)
        page = found[start - 1 : start - 1 + count]
        return {
            "schemas": [LIST],
            "totalResults": len(found),
            "startIndex": start,
            "itemsPerPage": len(page),
            "Resources": page,
        }

    def resource(
        kind: str,
        find: Callable[[str, str], list[dict[str, Any]]],
        create: Callable[[dict[str, Any]], dict[str, Any]],
        read: Callable[[str], dict[str, Any]],
        replace: Callable[[str, dict[str, Any]], dict[str, Any]],
        patch: Callable[[str, Any], dict[str, Any]],
        delete: Callable[[str], None],
    ) -> None:
        """The six routes of one resource type (Users or Groups) over the store's methods."""

        async def list_(request: web.Request) -> dict[str, Any]:
            return listing(request, find)

        async def create_(request: web.Request) -> dict[str, Any]:
            return create(await body(request))

        async def read_(request: web.Request) -> dict[str, Any]:
            return read(request.match_info["id"])

        async def replace_(request: web.Request) -> dict[str, Any]:
            return replace(request.match_info["id"], await body(request))

        async def patch_(request: web.Request) -> dict[str, Any]:
            return patch(request.match_info["id"], (await body(request)).get("Operations"))

        async def delete_(request: web.Request) -> None:
            delete(request.match_info["id"])

        r = app.router
        r.add_get(f"{BASE}/{kind}", guarded(list_))
        r.add_post(f"{BASE}/{kind}", guarded(create_, 201))
        r.add_get(f"{BASE}/{kind}/{{id}}", guarded(read_))
        r.add_put(f"{BASE}/{kind}/{{id}}", guarded(replace_))
        r.add_patch(f"{BASE}/{kind}/{{id}}", guarded(patch_))
        r.add_delete(f"{BASE}/{kind}/{{id}}", guarded(delete_))

    async def config(request: web.Request) -> dict[str, Any]:
        return {
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
            "patch": {"supported": True},
            "bulk": {"supported": False, "maxOperations": 0, "maxPayloadSize": 0},
            "filter": {"supported": True, "maxResults": MAX_PAGE},
            "changePassword": {"supported": False},
            "sort": {"supported": False},
            "etag": {"supported": False},
            "authenticationSchemes": [
                {"type": "oauthbearertoken", "name": "Bearer token", "primary": True}
            ],
        }

    app.router.add_get(f"{BASE}/ServiceProviderConfig", guarded(config))
    s = store
    resource("Users", s.users, s.create_user, s.user, s.replace_user, s.patch_user, s.delete_user)
    resource(
        "Groups", s.groups, s.create_group, s.group, s.replace_group, s.patch_group, s.delete_group
    )


# DB-API exception names, shared by sqlite3 and psycopg, and what each means for the caller.
_FAULTS = {
    "IntegrityError": (409, "that value is taken by another resource", "uniqueness"),
    "DataError": (400, "a value the database cannot store", "invalidValue"),
    "OperationalError": (503, "the directory's database is not answering; retry later", ""),
    "InterfaceError": (503, "the directory's database is not answering; retry later", ""),
}


def _database_fault(exc: Exception) -> ScimError | None:
    """The SCIM error for a database exception (a race past the checks above, an outage)."""
    if isinstance(exc, ConfigError):  # reconnecting failed: the database is still away
        return ScimError(503, "the directory's database is not answering; retry later")
    if isinstance(exc, UnicodeEncodeError):  # a lone surrogate in an id or filter (SQLite)
        return ScimError(400, "a value the database cannot store", "invalidValue")
    for kind in type(exc).__mro__:
        if kind.__module__.split(".")[0] in ("sqlite3", "psycopg") and kind.__name__ in _FAULTS:
            return ScimError(*_FAULTS[kind.__name__])
    return None


def _error(exc: ScimError) -> web.Response:
    payload: dict[str, Any] = {"schemas": [ERROR], "status": str(exc.status), "detail": exc.detail}
    if exc.scim_type:
        payload["scimType"] = exc.scim_type
    return web.Response(status=exc.status, text=json.dumps(payload), content_type=MEDIA_TYPE)
