"""What a channel learns (hole 7): nothing says that restricted documents exist — the hint that
the asker alone could read more goes to the asker alone — and members the directory does not
know (guests, people of other organisations) shrink the channel to public documents, or silence
it where the company says so."""

from __future__ import annotations

import json

import pytest

from testing.slack import BOT_USER_ID, blocks_text, mention_event
from testing.teams import FakeConnector, teams_channel_activity
from tests.e2e.conftest import running_bot

# Questions whose best answer sits in a document bob (engineering) may not read.
PRIVATE_TOPICS = [
    "What are the salary bands for engineers?",
    "What is the location factor for Kyiv salaries?",
    "How do performance review calibrations work?",
    "What is in the reorganisation draft?",
    "How much can a contractor claim for meals?",
]
LEAVE = "handbook/hr/leave-policy-2026.md"
DM_HINT = "Some documents only you can read may answer this better"
STRANGERS = (
    "some members are not in the company directory"  # open to everyone in the directory ("*")
)


def channel_messages(bot, channel: str) -> str:
    return json.dumps(
        [
            c.args
            for c in bot.slack.calls
            if c.args.get("channel") == channel and c.method != "chat.postEphemeral"
        ],
        ensure_ascii=False,
    )


async def test_the_dm_hint_never_reaches_a_slack_channel(bot):
    for i, question in enumerate(PRIVATE_TOPICS):
        assert (await bot.send.event(mention_event(question, channel="C0HRENG01")))[0] == 200
        await bot.slack.final_answer("C0HRENG01", i + 1)
    hints = await bot.slack.wait_for(lambda _: bot.slack.of("chat.postEphemeral", "C0HRENG01"))
    assert hints and all(h.args["user"] == "U0ALICE01" for h in hints)  # alice asked: to her alone
    assert DM_HINT not in channel_messages(bot, "C0HRENG01")
    assert "only you" not in channel_messages(bot, "C0HRENG01")


async def test_a_stranger_in_a_slack_channel_shrinks_it_to_public_documents(bot):
    bot.slack.channels["C0GUESTS1"] = ["U0ALICE01", "U0STRANGR", BOT_USER_ID]
    event = mention_event("What are the salary bands for an L4 engineer?", channel="C0GUESTS1")
    assert (await bot.send.event(event))[0] == 200
    final = await bot.slack.final_answer("C0GUESTS1")
    text = blocks_text(final.args["blocks"])
    assert "salary-bands" not in text and "78,000" not in text
    assert (
        await bot.send.event(
            mention_event("How many vacation days carry over?", channel="C0GUESTS1")
        )
    )[0] == 200
    final = await bot.slack.final_answer("C0GUESTS1", 2)
    assert LEAVE in blocks_text(final.args["blocks"])  # public documents still answer


@pytest.mark.parametrize("platform", ["slack", "teams"])
async def test_a_company_can_silence_channels_with_strangers(
    handbook, assistant, redis_prefix, platform
):
    async with running_bot(handbook, assistant, redis_prefix, unknown_members="refuse") as bot:
        if platform == "slack":
            bot.slack.channels["C0GUESTS2"] = ["U0ALICE01", "U0STRANGR", BOT_USER_ID]
            event = mention_event("How many vacation days carry over?", channel="C0GUESTS2")
            assert (await bot.send.event(event))[0] == 200
            reply = await bot.slack.posted("C0GUESTS2")
            assert STRANGERS in reply.args["text"]
            assert bot.slack.of("chat.update", "C0GUESTS2") == []
            return
        team = "19:guests-team@thread.tacv2"
        bot.connector.members[team] = [
            {"id": "29:alice", "name": "Alice Moreau", "aadObjectId": "aad-29:alice"},
            {"id": "29:visitor", "name": "A Visitor", "aadObjectId": "aad-visitor"},
        ]
        channel = "19:guests@thread.tacv2"
        activity = teams_channel_activity(
            "How many vacation days carry over?",
            service_url=bot.connector.url,
            team=team,
            channel=channel,
        )
        assert (await bot.teams(activity))[0] in (200, 201)
        (reply,) = bot.connector.messages(f"{channel};messageid=1")
        assert STRANGERS in reply["text"] and FakeConnector.card(reply) is None
