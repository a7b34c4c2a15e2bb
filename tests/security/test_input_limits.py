"""Bounds on one turn, whatever a user sends: an over-long question gets a polite "please shorten
it" and no search, an empty one a prompt, and the searches of one turn are bounded however many
parts a question has."""

from __future__ import annotations

import asyncio

import pytest

from agent.assistant import build_assistant
from agent.turns import Turn
from testing.slack import dm_event


@pytest.fixture(scope="module")
def assistant(handbook_deps):
    return build_assistant(handbook_deps)


def ask(assistant, text: str):
    return asyncio.run(assistant.answer(Turn(user_id="bob", text=text, groups=("engineering",))))


def test_an_over_long_question_is_refused_politely_without_a_search(assistant):
    answer = ask(assistant, "How many vacation days? " * 400)
    assert answer.status == "rejected" and "shorten" in answer.text and not answer.trace


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_an_empty_question_gets_a_prompt(assistant, text):
    answer = ask(assistant, text)
    assert "Ask me anything" in answer.text and not answer.trace


def test_the_searches_of_one_turn_are_bounded(assistant):
    topics = ["vacation", "VPN", "refunds", "expenses", "on-call", "passwords", "salary", "travel"]
    question = "? ".join(f"What is the rule on {t} number {i}" for i in range(5) for t in topics)
    assert len(question) < 4000
    answer = ask(assistant, question)
    searches = sum(len(s.queries) for s in answer.trace if s.step == "search")
    assert 0 < searches <= 4 * 3  # at most 4 sub-questions, each searched at most 3 times
    assert all(len(q) <= 500 for s in answer.trace for q in s.queries)


async def test_slack_says_please_shorten_it(bot):
    assert (await bot.send.event(dm_event("x " * 2500, channel="D0LONGQ01")))[0] == 200
    # refused before any work: one message, no placeholder to update
    reply = await bot.slack.posted("D0LONGQ01")
    assert "shorten" in reply.args["text"]
    assert bot.slack.of("chat.update", "D0LONGQ01") == []
