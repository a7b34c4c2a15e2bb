"""With Redis down, every kind of turn still gets a useful reply (hole 6): an "I don't know" says
tickets cannot be opened right now instead of failing, a ticket request says the same, a confirm
says it cannot check; and no reply ever names an exception — an error carries a reference that
the log line carries too."""

from __future__ import annotations

import asyncio
import re

import pytest
import redis

from agent.actions import RedisPendingActions
from agent.assistant import build_assistant
from agent.turns import Turn, TurnFailed
from testing.slack import blocks_text, dm_event
from tests.e2e.conftest import running_bot

TICKETS_UNAVAILABLE = "I can't open tickets right now; please try again in a few minutes."
DEAD = "redis://127.0.0.1:1/0"  # nothing listens on port 1: every call is refused
EXCEPTION_NAME = re.compile(r"\b\w*(Error|Exception|Timeout)\b")


@pytest.fixture(scope="module")
def dead_assistant(handbook_deps):
    client = redis.Redis.from_url(DEAD, socket_connect_timeout=0.2, socket_timeout=0.2)
    return build_assistant(handbook_deps, pending=RedisPendingActions(client))


def ask(assistant, text: str):
    return asyncio.run(assistant.answer(Turn(user_id="bob", text=text, groups=("engineering",))))


def test_i_dont_know_without_redis_says_tickets_are_unavailable(dead_assistant):
    answer = ask(dead_assistant, "What is our policy on pet insurance?")
    assert answer.status == "unknown"
    assert answer.text.startswith("I don't know") and TICKETS_UNAVAILABLE in answer.text
    assert answer.pending_action is None
    assert not EXCEPTION_NAME.search(str(answer.to_dict()))


def test_a_ticket_request_without_redis_says_so(dead_assistant):
    answer = ask(dead_assistant, "Open a ticket: the VPN drops every hour")
    assert answer.text == TICKETS_UNAVAILABLE and answer.pending_action is None
    done = asyncio.run(dead_assistant.confirm("whatever", "bob", True))
    assert "can't check that request right now" in done.text


class Broken:
    """A reasoner whose every step fails, like a bug in our own code would."""

    def __getattr__(self, name):
        async def fail(*args, **kwargs):
            raise ConnectionError("something deep down broke")

        return fail


def test_a_failed_turn_keeps_its_trace_and_leaves_the_words_to_the_bot(handbook_deps):
    """The agent says no sorry of its own (bot/chat/failure.py is the one place, its reference in
    the log: tests/bot/test_failure.py); it raises with what the turn did, and keeps the trace."""
    assistant = build_assistant(handbook_deps, reasoner=Broken())
    with pytest.raises(TurnFailed) as failed:
        ask(assistant, "How many vacation days can I carry over?")
    answer = failed.value.answer
    assert answer.status == "error" and answer.text == ""  # the route step failed: no steps ran
    assert isinstance(failed.value.__cause__, ConnectionError)
    assert assistant.traces.recent(1)[0]["status"] == "error"


async def test_slack_unknown_answer_without_redis(handbook, dead_assistant, redis_prefix):
    async with running_bot(handbook, dead_assistant, redis_prefix, redis_url=DEAD) as bot:
        channel = "D0NOREDIS"
        assert (await bot.send.event(dm_event("Is there a pet insurance?", channel=channel)))[
            0
        ] == 200
        final = await bot.slack.final_answer(channel)
        text = blocks_text(final.args["blocks"])
        assert "I don't know" in text and TICKETS_UNAVAILABLE in text
        for call in bot.slack.calls:
            assert not EXCEPTION_NAME.search(str(call.args)), call.args
