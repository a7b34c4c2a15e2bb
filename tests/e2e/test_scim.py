"""SCIM end to end: an identity provider (calling as Entra ID and Okta do) provisions people and
groups over ``/scim/v2``, and Slack questions are answered for exactly what they may read then.
Real aiohttp server, real Bolt, the real store (SQLite in the data dir; both databases in
tests/bot/test_scim.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.chat import render, slack_blocks
from bot.identity.scim import ERROR, LIST, MEDIA_TYPE, PATCH, USER
from bot.settings import ScimSettings
from testing.slack import blocks_text, dm_event
from tests.e2e.conftest import Harness, running_bot

TOKEN = "scim-test-token-0123456789abcdefghijklmnop"
SALARY = "What location factor applies to the salary bands in Kyiv?"


@pytest.fixture
async def scim_bot(handbook, assistant, redis_prefix) -> AsyncIterator[Harness]:
    async with running_bot(
        handbook, assistant, redis_prefix, scim=ScimSettings(token=TOKEN)
    ) as harness:
        yield harness
        for kind in ("Users", "Groups"):  # the data dir is the session's: leave it empty
            _, listed = await call(harness, "GET", f"/scim/v2/{kind}")
            for r in listed["Resources"]:
                await call(harness, "DELETE", f"/scim/v2/{kind}/{r['id']}")


async def call(
    bot: Harness, method: str, path: str, body: dict | None = None, token: str | None = TOKEN
) -> tuple[int, dict]:
    headers = {"Content-Type": MEDIA_TYPE}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with bot.session.request(method, bot.url + path, json=body, headers=headers) as resp:
        if "json" not in (resp.content_type or ""):
            return resp.status, {}
        return resp.status, await resp.json(content_type=None)


async def ask(bot: Harness, text: str, channel: str, n: int) -> str:
    await bot.send.event(dm_event(text, user="U0ALICE01", channel=channel))
    final = await bot.slack.final_answer(channel, n)
    return blocks_text(final.args["blocks"])


ALICE = {
    "schemas": [USER],
    "userName": "alice@northwind.example",
    "externalId": "aad-0001",
    "name": {"givenName": "Alice", "familyName": "Moreau"},
    "emails": [{"value": "alice@northwind.example", "type": "work", "primary": True}],
    "active": True,
}


async def test_without_a_token_setting_there_is_no_scim_endpoint(bot):
    status, _ = await call(bot, "GET", "/scim/v2/Users")
    assert status == 404


async def test_every_scim_call_needs_the_token(scim_bot):
    for token in (None, "wrong-token", TOKEN + "x"):
        status, body = await call(scim_bot, "GET", "/scim/v2/Users", token=token)
        assert status == 401 and body["schemas"] == [ERROR] and body["status"] == "401"
    status, body = await call(scim_bot, "POST", "/scim/v2/Users", ALICE, token="nope")
    assert status == 401
    assert (await call(scim_bot, "GET", "/scim/v2/Users"))[1]["totalResults"] == 0


async def test_provisioned_people_read_what_their_groups_may_until_removed_or_deactivated(
    scim_bot,
):
    # Provisioning, as an identity provider does it: the user, then a group with them in it.
    status, alice = await call(scim_bot, "POST", "/scim/v2/Users", ALICE)
    assert status == 201 and alice["id"] and alice["active"] is True
    assert alice["meta"]["location"] == f"/scim/v2/Users/{alice['id']}"
    status, found = await call(
        scim_bot, "GET", '/scim/v2/Users?filter=userName eq "Alice@Northwind.example"'
    )
    assert status == 200 and found["schemas"] == [LIST] and found["totalResults"] == 1
    status, hr = await call(
        scim_bot,
        "POST",
        "/scim/v2/Groups",
        {"displayName": "hr", "externalId": "grp-hr", "members": [{"value": alice["id"]}]},
    )
    assert status == 201 and [m["value"] for m in hr["members"]] == [alice["id"]]

    first = await ask(scim_bot, SALARY, "D0SCIM001", 1)
    assert "Salary Bands" in first  # an hr-only document, read because SCIM says she is in hr

    # Taken out of the group (Entra ID's form of the patch): the next question no longer reads it.
    status, hr = await call(
        scim_bot,
        "PATCH",
        f"/scim/v2/Groups/{hr['id']}",
        {
            "schemas": [PATCH],
            "Operations": [{"op": "Remove", "path": f'members[value eq "{alice["id"]}"]'}],
        },
    )
    assert status == 200 and hr["members"] == []
    second = await ask(scim_bot, SALARY, "D0SCIM002", 1)
    assert "Salary Bands" not in second

    # Deactivated: unknown at once, and told so.
    status, alice = await call(
        scim_bot,
        "PATCH",
        f"/scim/v2/Users/{alice['id']}",
        {"schemas": [PATCH], "Operations": [{"op": "Replace", "path": "active", "value": "False"}]},
    )
    assert status == 200 and alice["active"] is False
    await scim_bot.send.event(dm_event(SALARY, user="U0ALICE01", channel="D0SCIM003"))
    reply = await scim_bot.slack.posted("D0SCIM003")
    assert reply.args["text"] == slack_blocks.slack_inert(render.NOT_IN_DIRECTORY)


async def test_the_directory_file_is_not_read_when_scim_is_on(scim_bot):
    """alice is in the demo directory file; with SCIM on and nothing provisioned she is unknown."""
    await scim_bot.send.event(dm_event(SALARY, user="U0ALICE01", channel="D0SCIM004"))
    reply = await scim_bot.slack.posted("D0SCIM004")
    assert reply.args["text"] == slack_blocks.slack_inert(render.NOT_IN_DIRECTORY)


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "scim_type"),
    [
        ("POST", "/scim/v2/Users", {"emails": []}, 400, "invalidValue"),  # no userName
        ("POST", "/scim/v2/Users", {"userName": 5}, 400, "invalidValue"),
        ("GET", '/scim/v2/Users?filter=userName co "a"', None, 400, "invalidFilter"),
        ("GET", '/scim/v2/Users?filter=title eq "x"', None, 400, "invalidFilter"),
        ("GET", "/scim/v2/Users/nobody", None, 404, ""),
        ("PATCH", "/scim/v2/Users/nobody", {"Operations": []}, 404, ""),
        (
            "POST",
            "/scim/v2/Groups",
            {"displayName": "x", "members": [{"value": "nobody"}]},
            400,
            "invalidValue",
        ),
        ("POST", "/scim/v2/Groups", {"members": "x"}, 400, "invalidValue"),
    ],
)
async def test_junk_gets_a_scim_error_never_a_crash(
    scim_bot, method, path, body, status, scim_type
):
    got, error = await call(scim_bot, method, path, body)
    assert got == status and error["schemas"] == [ERROR] and error["status"] == str(status)
    assert error.get("scimType", "") == scim_type


async def test_a_body_that_is_not_scim_json_is_refused(scim_bot):
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/plain"}
    async with scim_bot.session.post(
        scim_bot.url + "/scim/v2/Users", data="userName=x", headers=headers
    ) as resp:
        assert resp.status == 415
    headers["Content-Type"] = MEDIA_TYPE
    async with scim_bot.session.post(
        scim_bot.url + "/scim/v2/Users", data="{not json", headers=headers
    ) as resp:
        assert resp.status == 400
    status, _ = await call(scim_bot, "POST", "/scim/v2/Users", ALICE)
    assert status == 201
    status, dup = await call(
        scim_bot, "POST", "/scim/v2/Users", ALICE | {"userName": "ALICE@northwind.example"}
    )
    assert status == 409 and dup["scimType"] == "uniqueness"
