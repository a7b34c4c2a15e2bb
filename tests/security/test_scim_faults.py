"""SCIM answers every fault with the right 4xx or a 503, never a 500 (issue 23, item 9).

Found: a uniqueness conflict the store did not check first (a group renamed to another's
``displayName``, a user PATCHed to another's ``userName``) was the database's IntegrityError, 500;
``"userName": "\\ud800"`` (a lone surrogate, no UTF-8) and, on PostgreSQL, a NUL were 500;
with PostgreSQL down ``GET /scim/v2/Users`` was 500; ``FOOTNOTE_SCIM__TOKEN`` with a trailing
space was taken. Each runs on SQLite and on the real PostgreSQL, over HTTP on loopback; the
outage is a real one: the store's connection runs through a forwarder that is then stopped.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr, ValidationError

from bot.identity.scim import MEDIA_TYPE, ScimStore, scim_routes
from bot.settings import ScimSettings
from ingest.settings import DatabaseSettings
from testing.tcp import Forwarder

TOKEN = "scim-second-attack-token-3f9d7c1e5a2b8064"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": MEDIA_TYPE}


async def serve(store: ScimStore) -> TestClient:
    app = web.Application(client_max_size=1024 * 1024)
    scim_routes(app, store, TOKEN)
    client = TestClient(TestServer(app))
    await client.start_server()
    return client


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> DatabaseSettings:
    if request.param == "sqlite":
        return DatabaseSettings(url=SecretStr(f"sqlite:///{tmp_path / 'state.db'}"))
    return DatabaseSettings(url=SecretStr(request.getfixturevalue("postgres_url")))


@pytest.fixture
async def scim(database, tmp_path) -> AsyncIterator[TestClient]:
    store = ScimStore.open(database, tmp_path)
    client = await serve(store)
    yield client
    await client.close()
    store.close()


async def call(client: TestClient, method: str, path: str, body: object = None, raw: str = ""):
    data = raw.encode() if raw else (json.dumps(body).encode() if body is not None else None)
    r = await client.request(method, f"/scim/v2/{path}", data=data, headers=AUTH)
    text = await r.text()
    return r.status, (json.loads(text) if text else None)


def fill(template: str, value: str) -> str:
    """A JSON body with ``value`` (JSON text, escapes and all) where ``VALUE`` stands."""
    return template.replace("VALUE", value)


def patch(path: str, value: object) -> dict:
    return {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        "Operations": [{"op": "replace", "path": path, "value": value}],
    }


# -- uniqueness: 409 ---------------------------------------------------------------------------


async def test_renaming_a_group_to_another_groups_name_is_a_409(scim):
    status, hr = await call(scim, "POST", "Groups", {"displayName": "hr"})
    assert status == 201
    status, ops = await call(scim, "POST", "Groups", {"displayName": "ops"})
    assert status == 201
    probes = [
        ("PUT", {"displayName": "hr"}),
        ("PATCH", patch("displayName", "hr")),
        ("PATCH", {"Operations": [{"op": "replace", "value": {"displayName": "hr"}}]}),
    ]
    for method, body in probes:
        status, error = await call(scim, method, f"Groups/{ops['id']}", body)
        assert (status, error["scimType"]) == (409, "uniqueness"), (method, body, error)
    _, still = await call(scim, "GET", f"Groups/{ops['id']}")
    assert still["displayName"] == "ops"
    # renaming a group to its own name is no conflict
    assert (await call(scim, "PUT", f"Groups/{hr['id']}", {"displayName": "hr"}))[0] == 200


async def test_patching_a_user_name_to_another_users_is_a_409(scim):
    _, ann = await call(scim, "POST", "Users", {"userName": "ann@acme.example"})
    _, bob = await call(scim, "POST", "Users", {"userName": "bob@acme.example"})
    for body in (
        patch("userName", "ann@acme.example"),
        patch("userName", "ANN@acme.example"),  # userName is unique case-blind
        {"Operations": [{"op": "replace", "value": {"userName": "ann@acme.example"}}]},
    ):
        status, error = await call(scim, "PATCH", f"Users/{bob['id']}", body)
        assert (status, error["scimType"]) == (409, "uniqueness"), (body, error)
    _, still = await call(scim, "GET", f"Users/{bob['id']}")
    assert still["userName"] == "bob@acme.example"
    assert (await call(scim, "PATCH", f"Users/{ann['id']}", patch("userName", "Ann@acme.example")))[
        0
    ] == 200


# -- values no database stores: 400 ----------------------------------------------------------

# JSON text as an identity provider (or an attacker with the token) would send it.
UNSTORABLE = {"lone surrogate": r"\ud800", "NUL": r"a\u0000b", "escape": r"\u001b[2J"}


@pytest.mark.parametrize("value", list(UNSTORABLE.values()), ids=list(UNSTORABLE))
async def test_values_no_database_can_store_are_a_400(scim, value):
    _, ann = await call(scim, "POST", "Users", {"userName": "ann@acme.example"})
    _, hr = await call(scim, "POST", "Groups", {"displayName": "hr"})
    probes = [
        ("POST", "Users", fill('{"userName": "VALUE"}', value)),
        ("POST", "Users", fill('{"userName": "cy@acme.example", "displayName": "VALUE"}', value)),
        ("POST", "Users", fill('{"userName": "cy@acme.example", "externalId": "VALUE"}', value)),
        (
            "POST",
            "Users",
            fill('{"userName": "cy@acme.example", "emails": [{"value": "VALUE"}]}', value),
        ),
        ("PUT", f"Users/{ann['id']}", fill('{"userName": "VALUE"}', value)),
        (
            "PATCH",
            f"Users/{ann['id']}",
            fill(
                '{"Operations": [{"op": "replace", "path": "userName", "value": "VALUE"}]}', value
            ),
        ),
        ("POST", "Groups", fill('{"displayName": "VALUE"}', value)),
        ("POST", "Groups", fill('{"displayName": "x", "members": [{"value": "VALUE"}]}', value)),
        (
            "PATCH",
            f"Groups/{hr['id']}",
            fill(
                '{"Operations": [{"op": "add", "path": "members", "value": [{"value": "VALUE"}]}]}',
                value,
            ),
        ),
    ]
    for method, path, raw in probes:
        status, error = await call(scim, method, path, raw=raw)
        assert status == 400, (method, path, raw, status, error)
    # the same in a filter and an id, where they reach the database as query parameters
    for path in (
        "Users?filter=" + 'userName eq "a%00b"',
        "Groups?filter=" + 'displayName eq "a%00b"',
        "Users/a%00b",
        "Groups/a%00b",
        "Users/%ED%A0%80",
    ):
        status, _ = await call(scim, "GET", path)
        assert status in (400, 404), (path, status)
    _, users = await call(scim, "GET", "Users")
    assert [u["userName"] for u in users["Resources"]] == ["ann@acme.example"]


# -- PostgreSQL down: 503, and back when it is ---------------------------------------------------


async def test_with_postgresql_down_scim_says_503_and_recovers_when_it_is_back(
    postgres_url, tmp_path
):
    forwarder = Forwarder(5432).start()
    url = postgres_url.replace("127.0.0.1:5432", f"127.0.0.1:{forwarder.port}")
    assert url != postgres_url
    store = ScimStore.open(DatabaseSettings(url=SecretStr(url)), tmp_path)
    client = await serve(store)
    try:
        assert (await call(client, "POST", "Users", {"userName": "ann@acme.example"}))[0] == 201
        forwarder.stop()  # the URL now names a closed loopback port
        for method, path, body in [
            ("GET", "Users", None),
            ("GET", "Users", None),  # and again: reconnecting fails too
            ("GET", "Groups", None),
            ("POST", "Users", {"userName": "bob@acme.example"}),
            ("GET", "Users/x", None),
        ]:
            status, error = await call(client, method, path, body)
            assert status == 503, (method, path, status, error)
            assert "not answering" in error["detail"]
        forwarder.start()  # back, on the same port
        status, users = await call(client, "GET", "Users")
        assert status == 200 and users["totalResults"] == 1
    finally:
        forwarder.stop()
        await client.close()
        store.close()


# -- the token ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "padding", [" ", "\n", "\t", " \n"], ids=["space", "newline", "tab", "both"]
)
def test_a_scim_token_with_whitespace_around_it_is_refused_at_start(padding):
    """HTTP drops whitespace around a header's value, so such a token matches no request, and
    31 characters and a space passed the 32-character minimum."""
    for token in (TOKEN + padding, padding + TOKEN, "x" * 31 + padding):
        with pytest.raises(ValidationError, match="space or line break"):
            ScimSettings(token=SecretStr(token))
        with pytest.raises(ValueError, match="whitespace"):
            scim_routes(web.Application(), None, token)  # type: ignore[arg-type]


async def test_only_the_exact_token_is_taken(scim):
    for given in (
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        f"Bearer  {TOKEN}",
        f"bearer {TOKEN}",
        f"Bearer {TOKEN}\u00a0",
        f"Bearer {TOKEN} {TOKEN}",
        TOKEN,
        "",
    ):
        r = await scim.get("/scim/v2/Users", headers={"Authorization": given})
        assert r.status == 401, repr(given)
    r = await scim.get("/scim/v2/Users", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status == 200
