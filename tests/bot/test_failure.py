"""One error path: whatever fails inside a turn, the agent raises (its trace kept) and the bot
alone says sorry, once, with a reference the log line carries; a question's size is checked by
the agent's one rule, before the chat shows any sign of work."""

from __future__ import annotations

import logging
import re
import uuid

import pytest

from agent.messages import CATALOGUE, say
from agent.turns import Answer, Turn, TurnFailed
from bot.chat.conversation import Conversation, Member, Question
from bot.chat.conversation_state import ConversationState
from bot.chat.failure import failure_reply
from bot.identity.directory import FileDirectory
from bot.settings import HANDBOOK_DIRECTORY, RedisSettings
from bot.web.links import LinkSigner

EXCEPTION_NAME = re.compile(r"\b\w*(Error|Exception|Timeout)\b")


def sorry(lang: str) -> re.Pattern:
    template = re.escape(CATALOGUE["something_wrong"][lang]).replace(r"\{ref\}", "{ref}")
    return re.compile(template.format(ref="([0-9a-f]{8})"))


class FailingAgent:
    """An agent whose turns fail in our own code, as ``Assistant.answer`` reports it; its size
    rule is a short one, so the test can tell it is the agent's that applies."""

    streams = False

    def __init__(self) -> None:
        self.asked: list[Turn] = []

    def refusal(self, text: str) -> Answer | None:
        return Answer("too long for the agent", "rejected") if len(text) > 20 else None

    async def answer(self, turn, progress=None, draft=None) -> Answer:  # type: ignore[no-untyped-def]
        self.asked.append(turn)
        failed = Answer("", "error", trace=[], lang="de")
        try:
            raise ConnectionError("something deep down broke")
        except ConnectionError as exc:
            raise TurnFailed(failed) from exc

    async def confirm(self, action_id: str, user_id: str, approve: bool) -> Answer:
        raise AssertionError("not clicked")

    def document(self, doc_id, groups):  # type: ignore[no-untyped-def]
        return []


class Said:
    """A Reply that keeps what was said and whether work was shown to have started."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.worked = False

    async def say(self, text: str) -> None:
        self.said.append(text)

    async def streaming(self) -> None:
        return None

    async def working(self) -> None:
        self.worked = True

    async def show(self, answer: Answer, view: dict) -> None:
        raise AssertionError("a failed turn shows no answer")

    async def tell_privately(self, text: str) -> None:
        self.said.append(text)

    async def ask_reason(self, turn_id: str, vote: str, asker: str) -> None:
        raise AssertionError("no vote")


@pytest.fixture
async def conversation():
    state = ConversationState.from_settings(
        RedisSettings(), prefix=f"footnote-test-{uuid.uuid4().hex[:8]}:"
    )
    agent = FailingAgent()
    links = LinkSigner("http://127.0.0.1:1", uuid.uuid4().hex + uuid.uuid4().hex, 600)
    chat = Conversation(
        agent,
        state,
        FileDirectory.load(HANDBOOK_DIRECTORY),
        links,
        platform="slack",
        private_chat="direct message",
    )
    yield chat, agent
    await state.close()


async def test_a_failed_turn_is_one_sorry_in_the_askers_language_with_the_logged_reference(
    conversation, caplog
):
    chat, agent = conversation
    reply = Said()
    with caplog.at_level(logging.ERROR):
        await chat.ask(
            Question(Member(("U0ALICE01",)), "Wie viele Tage?", "slack:T:D1", "dm"), reply
        )
    assert agent.asked and len(reply.said) == 1
    found = sorry("de").fullmatch(reply.said[0])
    assert found, reply.said
    assert not EXCEPTION_NAME.search(reply.said[0])
    logged = [r for r in caplog.records if found.group(1) in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info
    assert isinstance(logged[0].exc_info[1], TurnFailed)


async def test_a_question_the_agent_refuses_for_its_size_costs_no_work(conversation):
    chat, agent = conversation
    reply = Said()
    long = "How many vacation days do I have?"
    await chat.ask(Question(Member(("U0ALICE01",)), long, "slack:T:D2", "dm"), reply)
    assert reply.said == ["too long for the agent"] and not reply.worked and not agent.asked


def test_the_reply_and_the_log_line_share_one_reference(caplog):
    with caplog.at_level(logging.ERROR):
        try:
            raise KeyError("a bug")
        except KeyError:
            text = failure_reply("terminal turn", "en")
    ref = sorry("en").fullmatch(text).group(1)  # type: ignore[union-attr]
    (record,) = [r for r in caplog.records if ref in r.getMessage()]
    assert record.getMessage() == f"terminal turn failed (reference {ref})"
    assert record.exc_info and isinstance(record.exc_info[1], KeyError)
    assert text == say("en", "something_wrong", ref=ref)
