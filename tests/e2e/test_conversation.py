"""The conversation contract: what a person sees is the same in Slack and Teams.

Every test runs against both adapters over the loopback wire (signed Slack payloads to the Web
API fake, Bot Framework activities with real tokens to the connector fake), through the real
assistant and real Redis. A ``Chat`` speaks one platform: it asks in a room (a DM, or a channel
with given members), clicks a button of the last reply, and reads what a person was shown.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
import uuid
from dataclasses import dataclass, field

import pytest

from agent.assistant import build_assistant
from agent.messages import CATALOGUE, say
from agent.traces import SqliteTraceStore
from bot.chat import render
from bot.chat.conversation_state import FORGETFUL_NOTICE, RATE_LIMITED
from bot.identity.admin_access import ADMIN_REFUSED
from bot.reports.feedback import FeedbackStore
from testing.slack import (
    BOT_USER_ID,
    FakeSlackAPI,
    block_action,
    blocks_text,
    buttons,
    dm_event,
    mention_event,
)
from testing.teams import BOT_ACCOUNT, FakeConnector, teams_activity, teams_channel_activity
from tests.e2e.conftest import Harness, running_bot

PLATFORMS = ["slack", "teams"]
CARRY_OVER = "How many vacation days can I carry over?"
CARRY_OVER_DE = "Wie viele Urlaubstage kann ich ins nächste Jahr übertragen?"
DEAD_REDIS = "redis://127.0.0.1:1/0"  # nothing listens on port 1
EXCEPTION_NAME = re.compile(r"\b\w*(Error|Exception|Timeout)\b")


@dataclass(frozen=True)
class User:
    slack_id: str
    teams_id: str
    name: str


USERS = {
    "alice": User("U0ALICE01", "29:alice", "Alice Moreau"),
    "bob": User("U0BOB0001", "29:bob", "Bob Okafor"),
    "stranger": User("U0STRANGR", "29:nobody", "Nobody"),  # in no directory
    "sam": User("U0SAM0001", "29:sam", "Sam Admin"),  # in the admin group
}


def error_text(lang: str) -> re.Pattern:
    """The one "something went wrong" reply in ``lang``, with its reference as group 1."""
    template = re.escape(CATALOGUE["something_wrong"][lang]).replace(r"\{ref\}", "{ref}")
    return re.compile(template.format(ref="([0-9a-f]{8})"))


@dataclass
class SlackChat:
    bot: Harness
    rooms: dict[str, str] = field(default_factory=dict)  # room → channel id
    _n: itertools.count = field(default_factory=itertools.count)

    def channel(self, room: str, members: list[str] | None) -> str:
        if room not in self.rooms:
            n = next(self._n)
            self.rooms[room] = f"C0ROOM{n:03d}" if members else f"D0ROOM{n:03d}"
            if members:
                self.bot.slack.channels[self.rooms[room]] = [
                    *(USERS[m].slack_id for m in members),
                    BOT_USER_ID,
                ]
        return self.rooms[room]

    def conversation(self, room: str) -> str:
        return f"slack:T0NORTHWD:{self.rooms[room]}"

    def _shown(self, channel: str, user: str | None = None) -> list[tuple[str, list]]:
        """What was shown in a channel (the placeholder and progress left out), as (text,
        blocks); with ``user``, what that user alone saw there too."""
        out = []
        for c in self.bot.slack.calls:
            if c.args.get("channel") != channel:
                continue
            if (
                (c.method == "chat.postMessage" and c.args.get("text") != render.PLACEHOLDER)
                or (c.method == "chat.update" and FakeSlackAPI.is_final(c))
                or (c.method == "chat.postEphemeral" and user and c.args.get("user") == user)
            ):
                blocks = c.args.get("blocks") or []
                out.append((blocks_text(blocks) if blocks else c.args.get("text", ""), c))
        return out

    async def _next(self, channel: str, before: int, user: str | None = None) -> str:
        shown = await self.bot.slack.wait_for(
            lambda _: len(self._shown(channel, user)) > before and self._shown(channel, user)
        )
        return shown[-1][0]

    async def ask(
        self, text: str, *, user: str = "alice", room: str = "dm", members: list[str] | None = None
    ) -> str:
        channel = self.channel(room, members)
        before = len(self._shown(channel))
        sender = USERS[user].slack_id
        event = (
            mention_event(text, user=sender, channel=channel)
            if members
            else dm_event(text, user=sender, channel=channel)
        )
        assert (await self.bot.send.event(event))[0] == 200
        return await self._next(channel, before)

    async def click(
        self, button: str, *, user: str = "alice", room: str = "dm", note: str = ""
    ) -> str:
        """Click ``button`` (confirm, feedback_up, feedback_down) on the last answer, or a reason
        (``reason:wrong``, ``other`` with ``note``) on the last reasons the clicker was shown;
        what the clicker sees."""
        channel = self.rooms[room]
        clicker = USERS[user].slack_id
        before = len(self._shown(channel, clicker))
        if button.startswith("reason:") or button == "other":
            payload = self._reason(channel, clicker, button, note)
        else:
            action = {
                "confirm": render.CONFIRM,
                "feedback_up": render.FEEDBACK_UP,
                "feedback_down": render.FEEDBACK_DOWN,
            }[button]
            last = self._with_button(room, action)
            blocks = last.args["blocks"]
            message = {"ts": last.args["ts"], "text": last.args["text"], "blocks": blocks}
            payload = block_action(clicker, channel, message, buttons(blocks)[action])
        assert (await self.bot.send.action(payload))[0] == 200
        return await self._next(channel, before, clicker)

    def _reason(self, channel: str, clicker: str, button: str, note: str) -> dict:
        """The payload of a reason button, or of Enter in the "other" line, on the last reasons
        shown to ``clicker`` (an ephemeral message: Slack sends no ``message`` for it)."""
        (last, *_) = [
            c
            for c in reversed(self.bot.slack.of("chat.postEphemeral", channel))
            if c.args.get("user") == clicker
            and any(b["type"] == "input" for b in c.args.get("blocks") or [])
        ]
        blocks = last.args["blocks"]
        message = {"ts": last.result["message_ts"], "blocks": blocks}
        if button == "other":
            (line,) = [b for b in blocks if b["type"] == "input"]
            element = {
                "type": "plain_text_input",
                "action_id": render.FEEDBACK_OTHER,
                "block_id": line["block_id"],
                "value": note,
            }
        else:
            element = next(
                e
                for b in blocks
                if b["type"] == "actions"
                for e in b["elements"]
                if json.loads(e["value"])["r"] == button.removeprefix("reason:")
            )
        payload = block_action(clicker, channel, message, {"text": "", **element})
        payload["container"]["is_ephemeral"] = True
        del payload["message"]
        if button == "other":
            payload["actions"] = [{**element, "action_ts": payload["actions"][0]["action_ts"]}]
        return payload

    def _with_button(self, room: str, action: str):
        """The last answer that carries the button ``action``."""
        shown = [c for _, c in self._shown(self.rooms[room]) if c.method == "chat.update"]
        return [c for c in shown if action in buttons(c.args["blocks"])][-1]

    def turn_id(self, room: str) -> str:
        last = self._with_button(room, render.FEEDBACK_DOWN)
        return json.loads(buttons(last.args["blocks"])[render.FEEDBACK_DOWN]["value"])["t"]

    async def privately(self, user: str, room: str) -> list[str]:
        """What ``user`` alone was shown in the room (waits for the first)."""
        calls = await self.bot.slack.wait_for(
            lambda _: [
                c
                for c in self.bot.slack.of("chat.postEphemeral", self.rooms[room])
                if c.args["user"] == USERS[user].slack_id
            ]
        )
        return [c.args["text"] for c in calls]


@dataclass
class TeamsChat:
    bot: Harness
    rooms: dict[str, tuple[str, str]] = field(default_factory=dict)  # room → (team, channel)

    def _room(self, room: str, members: list[str]) -> tuple[str, str]:
        if room not in self.rooms:
            key = uuid.uuid4().hex[:8]
            team, channel = f"19:{key}-team@thread.tacv2", f"19:{key}@thread.tacv2"
            self.bot.connector.members[team] = [
                *(
                    {"id": u.teams_id, "name": u.name, "aadObjectId": f"aad-{u.teams_id}"}
                    for u in (USERS[m] for m in members)
                ),
                BOT_ACCOUNT,
            ]
            self.rooms[room] = (team, channel)
        return self.rooms[room]

    def _conversation_id(self, room: str, user: str) -> str:
        if room in self.rooms:
            return f"{self.rooms[room][1]};messageid=1"
        return f"a:personal-{USERS[user].teams_id}"

    def conversation(self, room: str, user: str = "alice") -> str:
        return "teams:" + self._conversation_id(room, user)

    def _shown(self, cid: str) -> list[dict]:
        return self.bot.connector.messages(cid)

    @staticmethod
    def _text(activity: dict) -> str:
        card = FakeConnector.card(activity)
        if not card:
            return activity.get("text", "")
        titles = " ".join(a.get("title", "") for a in card.get("actions") or [])
        return FakeConnector.card_text(card) + (f"\n{titles}" if titles else "")

    async def _send(self, activity: dict, cid: str) -> str:
        before = len(self._shown(cid))
        assert (await self.bot.teams(activity))[0] in (200, 201)
        shown = self._shown(cid)
        assert len(shown) > before, "no reply"
        return self._text(shown[-1])

    async def ask(
        self, text: str, *, user: str = "alice", room: str = "dm", members: list[str] | None = None
    ) -> str:
        u = USERS[user]
        url = self.bot.connector.url
        if members:
            team, channel = self._room(room, members)
            activity = teams_channel_activity(
                text, service_url=url, team=team, channel=channel, user=u.teams_id, name=u.name
            )
        else:
            activity = teams_activity(text, service_url=url, user=u.teams_id, name=u.name)
        return await self._send(activity, self._conversation_id(room, user))

    def _button(self, room: str, button: str) -> dict:
        """The ``Action.Submit`` data of ``button`` on the last card that has it."""
        cards = [FakeConnector.card(a) for a in self._shown(self._conversation_id(room, "alice"))]
        found = [
            a["data"]
            for card in cards
            if card
            for a in card.get("actions") or []
            if (button == "confirm" and a["data"]["action"] == "confirm")
            or (
                button == f"feedback_{a['data'].get('value')}" and a["data"]["action"] == "feedback"
            )
            or (
                a["data"]["action"] == "feedback_reason"
                and button in (f"reason:{a['data']['reason']}", a["data"]["reason"])
            )
        ]
        return found[-1]

    async def click(
        self, button: str, *, user: str = "alice", room: str = "dm", note: str = ""
    ) -> str:
        data = self._button(room, button)
        if note:
            data = {**data, "note": note}  # Teams sends the card's inputs with the data
        u = USERS[user]
        cid = self._conversation_id(room, "alice")
        activity = teams_activity(
            "", service_url=self.bot.connector.url, user=u.teams_id, value=data
        )
        if room in self.rooms:  # a click in the channel thread the card is in
            team, channel = self.rooms[room]
            channel_activity = teams_channel_activity(
                "", service_url=self.bot.connector.url, team=team, channel=channel, mention=False
            )
            activity["conversation"] = channel_activity["conversation"]
            activity["channelData"] = channel_activity["channelData"]
        return await self._send(activity, cid)

    def turn_id(self, room: str) -> str:
        return self._button(room, "feedback_down")["turn_id"]

    async def privately(self, user: str, room: str) -> list[str]:
        return [a["text"] for a in self.bot.connector.private_messages(USERS[user].teams_id)]


def chat_on(platform: str, bot: Harness) -> SlackChat | TeamsChat:
    return SlackChat(bot) if platform == "slack" else TeamsChat(bot)


@pytest.fixture(params=PLATFORMS)
def chat(request, bot):
    return chat_on(request.param, bot)


# -- before any search --------------------------------------------------------------------------


async def test_someone_not_in_the_directory_is_told_so(chat):
    assert await chat.ask(CARRY_OVER, user="stranger") == render.NOT_IN_DIRECTORY


async def test_an_empty_question_gets_the_prompt(chat):
    assert await chat.ask("   ") == say("en", "empty_question")


async def test_an_over_long_question_is_refused_in_its_own_language(chat):
    reply = await chat.ask((CARRY_OVER_DE + " ") * 100)
    assert reply == say("de", "too_long", n=len((CARRY_OVER_DE + " ") * 100) - 1, limit=4000)


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_the_rate_limit_holds_on_every_platform(handbook, assistant, redis_prefix, platform):
    async with running_bot(handbook, assistant, redis_prefix, rate_per_minute=1) as bot:
        chat = chat_on(platform, bot)
        assert "Sources" in await chat.ask(CARRY_OVER)
        assert await chat.ask("And sick days?") == RATE_LIMITED


# -- a turn -----------------------------------------------------------------------------------


async def test_a_follow_up_carries_the_history(chat, bot):
    await chat.ask(CARRY_OVER)
    await chat.ask("And what did the 2024 FAQ say about it?")
    history = await bot.state.history(chat.conversation("dm"))
    assert history.available and [m.text for m in history.messages[::2]] == [
        CARRY_OVER,
        "And what did the 2024 FAQ say about it?",
    ]


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_without_redis_it_answers_and_says_once_it_lost_the_conversation(
    handbook, assistant, redis_prefix, platform
):
    async with running_bot(handbook, assistant, redis_prefix, redis_url=DEAD_REDIS) as bot:
        chat = chat_on(platform, bot)
        first = await chat.ask(CARRY_OVER)
        assert "Sources" in first and FORGETFUL_NOTICE in first
        second = await chat.ask("And sick days?")
        assert FORGETFUL_NOTICE not in second


async def test_a_channel_answer_is_for_every_member_and_the_hint_for_the_asker_alone(chat):
    reply = await chat.ask(
        "What are the salary bands for engineers?", room="eng", members=["alice", "bob"]
    )
    assert "salary-bands" not in reply and "78,000" not in reply  # bob may not read them
    assert "direct message" not in reply and "only you" not in reply
    (hint,) = await chat.privately("alice", "eng")
    assert hint == say("en", "dm_hint")


class _BrokenTraces(SqliteTraceStore):
    """A trace store with a bug of ours in it: a disk fault is logged and the answer goes out
    (tests/security/test_disk_faults.py); an error nobody foresaw must still end in one reply."""

    def save(self, turn, answer, ms=None):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug in the trace store")


@pytest.fixture(scope="module")
def broken_traces(tmp_path_factory):
    return _BrokenTraces(tmp_path_factory.mktemp("traces") / "traces.sqlite")


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_a_failure_is_one_reply_in_the_askers_language_with_a_logged_reference(
    handbook, redis_prefix, broken_traces, platform, caplog
):
    failing = build_assistant(handbook, traces=broken_traces)
    async with running_bot(handbook, failing, redis_prefix) as bot:
        chat = chat_on(platform, bot)
        with caplog.at_level(logging.ERROR):
            reply = await chat.ask(CARRY_OVER_DE)
        found = error_text("de").fullmatch(reply)
        assert found, reply
        assert not EXCEPTION_NAME.search(reply)
        assert any(found.group(1) in r.getMessage() and r.exc_info for r in caplog.records)


# -- buttons ----------------------------------------------------------------------------------


async def test_only_the_asker_confirms_a_ticket_and_it_is_filed_once(chat, assistant):
    room = {"room": "desk", "members": ["alice", "bob"]}
    proposal = await chat.ask("Please open a ticket: the projector in room 4 flickers", **room)
    assert "Confirm" in proposal
    before = assistant.desk.count()
    assert await chat.click("confirm", user="bob", room="desk") == (
        "Only Alice Moreau can confirm or cancel this ticket."
    )
    assert assistant.desk.count() == before
    assert re.search(r"Ticket .*HELP-\d+.* filed", await chat.click("confirm", room="desk"))
    assert "already handled" in await chat.click("confirm", room="desk")
    assert assistant.desk.count() == before + 1


async def test_after_a_ticket_is_filed_the_same_chat_answers_what_its_number_was(chat, assistant):
    assert not re.search(r"HELP-\d+", await chat.ask("What was the ticket number?"))  # none yet
    proposal = await chat.ask("Please open a ticket: the kiln room door sticks")
    assert "Confirm" in proposal
    filed = re.search(r"HELP-\d+", await chat.click("confirm"))
    assert filed
    before = assistant.desk.count()
    reply = await chat.ask("What was the ticket number?")
    assert filed.group() in reply and "kiln room door" in reply
    assert assistant.desk.count() == before  # read back, not another ticket


def records(bot: Harness) -> FeedbackStore:
    """The durable record the bot writes, read as `footnote feedback export` reads it."""
    return FeedbackStore.open(bot.settings.database, bot.settings.data_dir)


async def recorded(store: FeedbackStore, turn_id: str):
    """The turn once on record: it is written while the answer is shown, not before."""
    for _ in range(100):
        if (turn := store.turn(turn_id)) is not None:
            return turn
        await asyncio.sleep(0.05)
    raise AssertionError(f"turn {turn_id} was never recorded")


async def test_a_turn_and_its_feedback_with_a_reason_are_recorded(chat, bot):
    await chat.ask(CARRY_OVER)
    turn_id = chat.turn_id("dm")
    store = records(bot)
    turn = await recorded(store, turn_id)
    assert (turn.user_id, turn.question) == ("alice", CARRY_OVER)
    assert turn.groups == ("hr", "managers") and turn.channel_kind == "dm"
    assert turn.platform == type(chat).__name__.removesuffix("Chat").lower()
    assert turn.status == "answered" and turn.answer
    assert {c.doc_id.rsplit("/", 1)[-1] for c in turn.citations} >= {"leave-policy-2026.md"}

    picker = await chat.click("feedback_down")
    assert "What was wrong" in picker
    assert all(label in picker for label in ("Wrong", "Outdated", "Incomplete", "Didn't answer"))
    (fb,) = store.feedback(turn_id)
    assert (fb.user_id, fb.vote, fb.reason) == ("alice", "down", "")

    assert await chat.click("reason:outdated") == "Thanks for the feedback!"
    (fb,) = store.feedback(turn_id)
    assert (fb.vote, fb.reason) == ("down", "outdated")
    assert await chat.click("other", note="the 2026 policy says 10") == "Thanks for the feedback!"
    (fb,) = store.feedback(turn_id)
    assert (fb.reason, fb.note) == ("other", "the 2026 policy says 10")
    store.close()


async def test_only_the_asker_rates_their_answer(chat, bot):
    room = {"room": "rating", "members": ["alice", "bob"]}
    await chat.ask(CARRY_OVER, **room)
    turn_id = chat.turn_id("rating")
    reply = await chat.click("feedback_up", user="bob", room="rating")
    assert reply == "Only Alice Moreau can rate this answer."
    store = records(bot)
    assert store.feedback(turn_id) == []
    assert "Anything to add" in await chat.click("feedback_up", room="rating")
    assert [f.vote for f in store.feedback(turn_id)] == ["up"]
    store.close()


async def test_help_says_what_is_stored_and_for_how_long(chat):
    reply = await chat.ask("help")
    assert "for 30 days" in reply and "questions" in reply


async def test_the_running_bot_deletes_turns_past_retention_at_start(
    handbook, assistant, redis_prefix
):
    from bot.reports.feedback import FeedbackRecord, TurnRecord, ago

    store = FeedbackStore.open(handbook.settings.database, handbook.settings.data_dir)
    for turn_id, days in (("retention-old", 31), ("retention-new", 29)):
        store.record_turn(
            TurnRecord(turn_id, "slack", "c", "alice", (), "dm", "q", "answered", "a", at=ago(days))
        )
        store.record_feedback(FeedbackRecord(turn_id, "alice", "up"))
    async with running_bot(handbook, assistant, redis_prefix):
        for _ in range(100):
            if store.turn("retention-old") is None:
                break
            await asyncio.sleep(0.05)
    assert store.turn("retention-old") is None and store.feedback("retention-old") == []
    assert store.turn("retention-new") is not None
    store.close()


@pytest.mark.parametrize("platform", PLATFORMS)
async def test_admin_in_a_private_chat_brings_a_sign_in_link_to_admins_only(bot, platform):
    chat = chat_on(platform, bot)
    reply = await chat.ask("admin", user="sam")
    link = re.search(re.escape(bot.url) + r"/admin/signin\?t=[\w.-]+", reply)
    assert link, reply
    status, page = await bot.get(link[0])
    assert status == 200 and "Continue as <strong>Sam Admin</strong>" in page
    refused = await chat.ask("admin", user="alice")
    assert refused == ADMIN_REFUSED and "/admin/signin" not in refused
