"""Redis goes away mid-conversation: the bot keeps answering, says once that it lost the thread,
and still answers a retried event only once (in-process de-dupe). The Redis here is our own
``redis-server`` on a free port; the machine's Redis is left alone."""

from __future__ import annotations

import shutil

import pytest

from bot.chat.conversation_state import FORGETFUL_NOTICE
from testing.slack import blocks_text, dm_event
from tests.e2e.conftest import running_bot

pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="needs redis-server on PATH"
)


async def test_bot_answers_without_redis_and_says_once_it_lost_the_conversation(
    handbook, assistant, redis_prefix, own_redis
):
    proc, url = own_redis
    async with running_bot(handbook, assistant, redis_prefix, redis_url=url) as bot:
        assert (
            await bot.send.event(
                dm_event("How many vacation days can I carry over?", channel="D0REDIS01")
            )
        )[0] == 200
        first = await bot.slack.final_answer("D0REDIS01")
        assert FORGETFUL_NOTICE not in blocks_text(first.args["blocks"])
        assert len((await bot.state.history("slack:T0NORTHWD:D0REDIS01")).messages) == 2

        proc.kill()
        proc.wait(5)

        follow = dm_event("And how many did the 2024 FAQ allow?", channel="D0REDIS01")
        assert (await bot.send.event(follow))[0] == 200
        second = await bot.slack.final_answer("D0REDIS01", 2)
        text = blocks_text(second.args["blocks"])
        assert "Sources" in text  # still answers from the documents
        assert FORGETFUL_NOTICE in text  # and says it cannot remember the conversation

        # said once: the next answer does not repeat it
        assert (
            await bot.send.event(
                dm_event("What is the leave policy for sick days?", channel="D0REDIS01")
            )
        )[0] == 200
        third = await bot.slack.final_answer("D0REDIS01", 3)
        assert FORGETFUL_NOTICE not in blocks_text(third.args["blocks"])

        # a retry is still answered once, de-duplicated in process
        retried = dm_event("What is the travel policy?", channel="D0REDIS02")
        for n in range(2):
            headers = (
                {"X-Slack-Retry-Num": str(n), "X-Slack-Retry-Reason": "http_timeout"} if n else None
            )
            assert (await bot.send.event(retried, headers=headers))[0] == 200
        await bot.slack.final_answer("D0REDIS02")
        assert len(bot.slack.of("chat.postMessage", "D0REDIS02")) == 1

        async with bot.session.get(bot.url + "/healthz") as resp:
            assert resp.status == 200 and (await resp.json())["redis"] is False
