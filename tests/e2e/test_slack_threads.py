"""Slack thread follow-ups (``FOOTNOTE_SLACK__THREAD_FOLLOWUPS``): in a channel thread where Footnote
has answered, a reply by anyone is a follow-up without a new @mention. Real Bolt over loopback,
real assistant, real Redis; assertions on what the fake Slack Web API received.

Each test that shows something is NOT answered ends with a reply that IS (so it fails without the
feature) and then checks that nothing else was posted."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator

import pytest

from bot.chat import render
from testing.slack import BOT_USER_ID, TEAM_ID, blocks_text, channel_message_event, mention_event
from tests.e2e.conftest import Harness, running_bot

CHANNEL = "C0HRENG01"  # alice (hr, managers) + bob (engineering) + another bot
CARRY_OVER = "How many vacation days can I carry over?"
ON_CALL = "How quickly must the on-call engineer acknowledge a SEV1 page?"
DROPPED = "Is the Zephyr reorg final?"  # what the messages that must be dropped say
SETTLE_S = 0.5  # how long to wait for an answer that must not come


@pytest.fixture
async def followups(handbook, assistant, redis_prefix) -> AsyncIterator[Harness]:
    async with running_bot(handbook, assistant, redis_prefix, thread_followups=True) as harness:
        yield harness


async def answered_thread(bot: Harness, channel: str = CHANNEL) -> str:
    """alice @mentions Footnote in the channel; returns the thread (her message's ts) once the
    answer is in it."""
    mention = mention_event(CARRY_OVER, channel=channel)
    assert (await bot.send.event(mention))[0] == 200
    await bot.slack.final_answer(channel)
    return mention["event"]["ts"]


def posts(bot: Harness, channel: str = CHANNEL) -> list:
    return bot.slack.of("chat.postMessage", channel)


def link_readers(blocks: list[dict]) -> set[str]:
    """The reader each signed citation link was made for (its ``u=`` parameter)."""
    return set(re.findall(r"/docs/[^|>\s]*[?&]u=([^&|>#]+)", blocks_text(blocks)))


async def reply(bot: Harness, text: str, thread_ts: str, user: str = "U0BOB0001", **kw) -> dict:
    """``user`` replies in the thread without mentioning Footnote."""
    event = channel_message_event(text, user=user, thread_ts=thread_ts, **kw)
    assert (await bot.send.event(event))[0] == 200
    return event


async def seen_markers(bot: Harness) -> int:
    """De-dupe markers written: one per event the bot took up."""
    return len([k async for k in bot.state.client.scan_iter(match=bot.state.prefix + "seen:*")])


async def test_a_reply_by_anyone_in_the_thread_is_answered_for_them_with_the_threads_history(
    followups,
):
    bot = followups
    thread = await answered_thread(bot)
    conversation = f"slack:{TEAM_ID}:{CHANNEL}:{thread}"
    marker = f"{bot.state.prefix}answered:{conversation}"
    assert 0 < await bot.state.client.ttl(marker) <= bot.settings.redis.history_ttl_s

    # bob, who did not start the thread, replies without mentioning Footnote
    await reply(bot, "And how many sick days do we get?", thread)
    placeholder = await bot.slack.posted(CHANNEL, 2)
    assert placeholder.args["thread_ts"] == thread
    final = await bot.slack.final_answer(CHANNEL, 2)
    assert final.args["ts"] == placeholder.result["ts"]
    assert "Sources" in blocks_text(final.args["blocks"])
    assert link_readers(final.args["blocks"]) == {"bob"}  # answered for bob, not for alice

    history = await bot.state.history(conversation)
    assert [m.text for m in history.messages[::2]] == [
        CARRY_OVER,
        "And how many sick days do we get?",
    ]
    assert len(history.messages) == 4
    # under the channel's scope: its members were looked up for bob's turn too
    assert len(bot.slack.of("conversations.members", CHANNEL)) == 2


async def test_a_follow_up_sees_only_what_every_channel_member_may_read(followups):
    """bob may read the on-call runbook (engineering); alice may not. In their shared channel his
    follow-up does not use it, and only he is told, privately, that a DM may answer better."""
    bot = followups
    thread = await answered_thread(bot)
    await reply(bot, ON_CALL, thread)
    final = await bot.slack.final_answer(CHANNEL, 2)
    assert "oncall-runbook" not in blocks_text(final.args["blocks"])
    (hint,) = await bot.slack.wait_for(lambda _: bot.slack.of("chat.postEphemeral", CHANNEL))
    assert hint.args["user"] == "U0BOB0001" and hint.args["thread_ts"] == thread
    assert "direct message" in hint.args["text"]


async def test_a_stranger_replying_in_the_thread_is_told_they_are_not_in_the_directory(
    followups,
):
    bot = followups
    thread = await answered_thread(bot)
    await reply(bot, CARRY_OVER, thread, user="U0STRANGR")
    answer = await bot.slack.posted(CHANNEL, 2)
    assert answer.args["text"] == render.NOT_IN_DIRECTORY and answer.args["thread_ts"] == thread
    assert len(bot.slack.finals(CHANNEL)) == 1  # no answer was composed for them


async def test_messages_that_are_not_follow_ups_are_dropped_unread(followups, caplog):
    caplog.set_level(logging.DEBUG)
    bot = followups
    thread = await answered_thread(bot)
    assert await seen_markers(bot) == 1
    ignored = [
        # a top-level message, and a message that is its own thread's parent
        channel_message_event(DROPPED),
        channel_message_event(DROPPED, thread_ts="1700000000.000100", ts="1700000000.000100"),
        # a reply in a thread Footnote never answered in
        channel_message_event(DROPPED, thread_ts="1700000000.000200"),
        # another bot's reply, and Footnote's own
        channel_message_event(DROPPED, user="U0OTHRBOT", thread_ts=thread),
        channel_message_event("an answer", user=BOT_USER_ID, thread_ts=thread),
    ]
    ignored[3]["event"]["bot_id"] = "B0OTHER"
    ignored[4]["event"]["bot_id"] = "BFOOTNOTE"
    # an edit and a deletion of a reply in the thread, as Slack sends them
    reply_ts = "1700000001.000300"
    original = {
        "type": "message",
        "user": "U0BOB0001",
        "text": DROPPED,
        "ts": reply_ts,
        "thread_ts": thread,
    }
    edited = channel_message_event("")  # the envelope; the event is Slack's message_changed
    edited["event"] = {
        "type": "message",
        "subtype": "message_changed",
        "hidden": True,
        "channel": CHANNEL,
        "channel_type": "channel",
        "ts": "1700000002.000400",
        "event_ts": "1700000002.000400",
        "message": {**original, "text": DROPPED + " (edited)", "edited": {"user": "U0BOB0001"}},
        "previous_message": original,
    }
    deleted = channel_message_event("")
    deleted["event"] = {
        "type": "message",
        "subtype": "message_deleted",
        "hidden": True,
        "channel": CHANNEL,
        "channel_type": "channel",
        "ts": "1700000003.000500",
        "event_ts": "1700000003.000500",
        "deleted_ts": reply_ts,
        "previous_message": original,
    }
    # a person's message with another subtype (/me) in the thread
    me = channel_message_event(DROPPED, thread_ts=thread)
    me["event"]["subtype"] = "me_message"
    # a file shared in the thread with no words: not said to Footnote (a mention would get a prompt)
    file_only = channel_message_event("", thread_ts=thread)
    file_only["event"]["subtype"] = "file_share"
    file_only["event"]["files"] = [{"id": "F0DROPPED1", "name": "screenshot.png"}]
    for payload in [*ignored, edited, deleted, me, file_only]:
        assert (await bot.send.event(payload))[0] == 200
    await asyncio.sleep(SETTLE_S)
    assert len(posts(bot)) == 1

    await reply(bot, "And how many sick days do we get?", thread)  # the one follow-up here
    await bot.slack.final_answer(CHANNEL, 2)
    await asyncio.sleep(SETTLE_S)
    assert len(posts(bot)) == 2 and len(bot.slack.finals(CHANNEL)) == 2
    # nothing of the dropped messages was stored (not even a de-dupe marker) or logged
    assert await seen_markers(bot) == 2
    assert not [r for r in caplog.records if DROPPED in r.getMessage()]


async def test_a_reply_that_mentions_footnote_is_answered_once(followups):
    """Slack sends such a reply twice: as ``app_mention`` and as a channel message."""
    bot = followups
    thread = await answered_thread(bot)
    mention = mention_event("and for part-timers?", user="U0BOB0001", channel=CHANNEL)
    mention["event"]["thread_ts"] = thread
    message = channel_message_event(
        mention["event"]["text"], thread_ts=thread, ts=mention["event"]["ts"]
    )
    for payload in (message, mention):
        assert (await bot.send.event(payload))[0] == 200
    await bot.slack.final_answer(CHANNEL, 2)
    await asyncio.sleep(SETTLE_S)
    assert len(posts(bot)) == 2

    await reply(bot, "And how many sick days do we get?", thread)  # without a mention: answered
    await bot.slack.final_answer(CHANNEL, 3)
    await asyncio.sleep(SETTLE_S)
    assert len(posts(bot)) == 3
    history = await bot.state.history(f"slack:{TEAM_ID}:{CHANNEL}:{thread}")
    assert len(history.messages) == 6


async def test_a_reply_in_a_private_channel_thread_is_a_follow_up_too(followups):
    bot = followups
    thread = await answered_thread(bot, channel="C0HRONLY1")
    await reply(
        bot,
        "And how many sick days do we get?",
        thread,
        user="U0ALICE01",
        channel="C0HRONLY1",
        channel_type="group",  # message.groups
    )
    placeholder = await bot.slack.posted("C0HRONLY1", 2)
    assert placeholder.args["thread_ts"] == thread
    await bot.slack.final_answer("C0HRONLY1", 2)


async def test_with_the_option_off_a_thread_reply_still_needs_a_mention(bot):
    """The default: nothing changes, and nothing is written for channel messages."""
    thread = await answered_thread(bot)
    await reply(bot, "And how many sick days do we get?", thread)
    await asyncio.sleep(SETTLE_S)
    assert len(posts(bot)) == 1
    conversation = f"slack:{TEAM_ID}:{CHANNEL}:{thread}"
    assert not await bot.state.client.exists(f"{bot.state.prefix}answered:{conversation}")

    mention = mention_event("And how many sick days do we get?", user="U0BOB0001", channel=CHANNEL)
    mention["event"]["thread_ts"] = thread
    assert (await bot.send.event(mention))[0] == 200
    await bot.slack.final_answer(CHANNEL, 2)
    assert len((await bot.state.history(conversation)).messages) == 4
