"""``/footnote admin`` in Slack: a signed slash command, acknowledged at once; the admin page's
one-use sign-in link goes to an admin in a DM, never into the channel it was typed in."""

from __future__ import annotations

import json
import re
import time

from bot.chat.slack import COMMAND_USAGE
from bot.identity.admin_access import ADMIN_LINK_SENT, ADMIN_REFUSED
from testing.slack import blocks_text

SAM, ALICE = "U0SAM0001", "U0ALICE01"  # sam is in the admin group; alice is not
CHANNEL = "C0HRENG01"


def link_in(bot, text: str) -> str | None:
    found = re.search(re.escape(bot.url) + r"/admin/signin\?t=[\w.-]+", text)
    return found[0] if found else None


def everything_posted(bot) -> list[tuple[str, str]]:
    """(channel or response_url hook, text) of every message the bot sent anywhere."""
    out = []
    for c in bot.slack.calls:
        if c.method in ("chat.postMessage", "chat.postEphemeral", "chat.update"):
            out.append((c.args.get("channel", ""), blocks_text(c.args.get("blocks") or [])
                        + "\n" + str(c.args.get("text", ""))))  # fmt: skip
        elif c.method == "response_url":
            out.append(("hook:" + c.args["hook"], str(c.args.get("text", ""))))
    return out


async def test_an_admin_gets_a_one_use_link_in_a_dm_not_in_the_channel(bot):
    started = time.monotonic()
    status, body = await bot.send.command(
        "admin", user=SAM, channel=CHANNEL, response_url=bot.slack.response_url("sam1")
    )
    acked_in = time.monotonic() - started
    assert status == 200 and acked_in < 3.0
    dm = bot.slack.dm_channel(SAM)
    post = await bot.slack.posted(dm)
    link = link_in(bot, blocks_text(post.args["blocks"]))
    assert link, post.args
    [opened] = bot.slack.of("conversations.open")
    assert opened.args["users"] == SAM
    # where it was typed: only the ephemeral note, and no link anywhere but the DM
    [note] = await bot.slack.wait_for(lambda _: bot.slack.of("response_url"))
    assert (note.args["text"], note.args["response_type"]) == (ADMIN_LINK_SENT, "ephemeral")
    assert [ch for ch, text in everything_posted(bot) if link_in(bot, text)] == [dm]
    # the link works once
    landing_status, landing = await bot.get(link)
    assert landing_status == 200 and "Continue as <strong>Sam Admin</strong>" in landing
    token = link.split("t=", 1)[1]
    signin, own_page = bot.url + "/admin/signin", {"Origin": bot.url}  # as the browser sends it
    async with bot.session.post(
        signin, data={"t": token}, headers=own_page, allow_redirects=False
    ) as first:
        assert first.status == 303 and first.headers["Location"] == "/admin"
    async with bot.session.post(
        signin, data={"t": token}, headers=own_page, allow_redirects=False
    ) as again:
        assert again.status == 410


async def test_someone_not_an_admin_is_told_privately_whom_to_ask_and_gets_no_link(bot):
    status, _ = await bot.send.command(
        "admin", user=ALICE, channel=CHANNEL, response_url=bot.slack.response_url("alice1")
    )
    assert status == 200
    [note] = await bot.slack.wait_for(lambda _: bot.slack.of("response_url"))
    assert note.args["response_type"] == "ephemeral"
    assert (
        note.args["text"] == ADMIN_REFUSED and "ask the person who runs Footnote" in ADMIN_REFUSED
    )
    assert not [t for _, t in everything_posted(bot) if "/admin/signin" in t]
    assert not bot.slack.of("conversations.open")


async def test_an_unsigned_command_is_refused(bot):
    status, _ = await bot.send.command(
        "admin", user=SAM, channel=CHANNEL, response_url=bot.slack.response_url("forged"),
        signature="v0=" + "0" * 64,
    )  # fmt: skip
    assert status == 401
    assert not bot.slack.of("conversations.open") and not bot.slack.of("response_url")


async def test_the_command_alone_or_unknown_gets_the_usage_line(bot):
    for text in ("", "  ", "sudo make me an admin"):
        status, body = await bot.send.command(
            text, user=SAM, channel=CHANNEL, response_url=bot.slack.response_url("usage")
        )
        assert status == 200
        reply = json.loads(body)
        assert reply["response_type"] == "ephemeral"
        assert reply["text"].startswith("Usage: /footnote admin")
        assert COMMAND_USAGE.split(" —")[0] in reply["text"]
    assert not bot.slack.of("conversations.open")
    assert not [t for _, t in everything_posted(bot) if "/admin/signin" in t]
