"""The answer streamed while an LLM writes it, end to end: the real assistant over the handbook with
the LLM reasoner pointed at ``FakeOpenAI`` (OpenAI's SSE wire format, chunk by chunk), the bot on
loopback; assertions on what the fake Slack Web API and the fake Bot Framework connector received.
"""

from __future__ import annotations

import json
import re

import pytest

from agent.assistant import build_assistant, build_reasoner
from agent.fallback_reasoner import FallbackReasoner, StepTimeouts
from agent.llm_reasoner import LLMReasoner
from agent.llms import build_llms, provider_errors
from agent.settings import LLMSettings
from bot.chat import render
from bot.web.server import SLACK_KEY
from testing.llm import FakeOpenAI, Reply
from testing.slack import TEAM_ID, blocks_text, buttons, dm_event, mention_event, shown
from testing.teams import FakeConnector, teams_activity
from tests.e2e.conftest import running_bot

CARRY_OVER = "How many vacation days can I carry over?"
TRUE = "Up to 10 unused vacation days carry over to the next year."


def answer_json(*texts: str) -> str:
    sentences = [{"text": t, "citations": [1]} for t in texts]
    return json.dumps({"sentences": sentences, "missing": None})


class Steps:
    """The fake model's replies, by the step a request is for (its JSON schema's name); the
    answer step's reply is the test's. Every check says "supported" unless ``rejected``."""

    def __init__(self, answer: Reply, *, rejected: bool = False):
        self.answer, self.rejected = answer, rejected
        self.answer_requests = 0

    def __call__(self, body: dict) -> Reply:
        fmt = body.get("response_format") or {}
        name = (fmt.get("json_schema") or {}).get("name", "")
        if not name:  # the tool step (the turn's tools offered): no calls
            return Reply(content="No tool is needed.")
        if name == "AnswerReply":
            self.answer_requests += 1
            return self.answer
        replies = {
            "RouteReply": {"kind": "question", "question": CARRY_OVER},
            "PlanReply": {"subquestions": [CARRY_OVER]},
            "GradeReply": {
                "grades": [
                    {"n": n, "label": "relevant", "score": 0.9, "reason": "on topic"}
                    for n in range(1, 9)
                ]
            },
            "RewriteReply": {"query": CARRY_OVER},
            "CheckReply": {
                "sentences": [{"n": n, "supported": not self.rejected} for n in range(1, 9)],
                "answers_question": not self.rejected,
                "reason": "checked",
            },
        }
        return Reply(content=json.dumps(replies[name]))


@pytest.fixture
def llm():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def llm_assistant(handbook, llm):
    """As ``footnote serve`` builds it with an OpenAI-compatible LLM: the offline reasoner behind."""
    settings = LLMSettings(
        provider="openai_like",
        base_url=llm.base_url,
        model="fake",
        max_retries=0,
        pause_after_failure_s=0,
    )
    cheap, strong = build_llms(settings)
    reasoner = FallbackReasoner(
        LLMReasoner(cheap, strong),
        build_reasoner(handbook),  # no LLM in the handbook's settings: the offline reasoner
        StepTimeouts.every(20),
        recoverable=provider_errors(settings),
    )
    return build_assistant(handbook, reasoner=reasoner)


@pytest.fixture
async def bot(handbook, llm_assistant, redis_prefix, monkeypatch):
    monkeypatch.setattr("bot.chat.teams.STREAM_INTERVAL_S", 0)
    monkeypatch.setattr("bot.chat.teams.PROGRESS_INTERVAL_S", 0)
    async with running_bot(handbook, llm_assistant, redis_prefix) as harness:
        harness.app[SLACK_KEY].draft_interval_s = 0  # every whole word goes out at once
        yield harness


def script(llm: FakeOpenAI, steps: Steps) -> Steps:
    llm.enqueue(*[steps] * 40)
    return steps


async def ask_in_panel(bot, channel: str, thread: str, text: str = CARRY_OVER):
    await bot.send.event(dm_event(text, channel=channel, thread_ts=thread))
    return await bot.slack.final_answer(channel)


async def test_the_draft_streams_into_the_assistant_thread_before_the_checked_answer(bot, llm):
    written = Reply(content=answer_json(TRUE, "Ask HR for more."), chunk_s=0.04, piece=6)
    script(llm, Steps(written))
    thread = "1764600000.000100"

    final = await ask_in_panel(bot, "D0STREAM1", thread)

    [start] = bot.slack.of("chat.startStream", "D0STREAM1")
    appends = bot.slack.of("chat.appendStream", "D0STREAM1")
    [stop] = bot.slack.of("chat.stopStream", "D0STREAM1")
    assert start.args["thread_ts"] == thread
    assert start.args["recipient_user_id"] == "U0ALICE01"
    assert start.args["recipient_team_id"] == TEAM_ID
    assert len(appends) >= 3  # word by word as the model wrote them, not at the end
    ts = start.result["ts"]
    assert all(c.args["ts"] == ts for c in [*appends, stop])
    # the draft was out while the model still wrote (~1.5 s of chunks), well before the answer
    assert start.at < appends[-1].at - 0.5 and appends[-1].at <= stop.at <= final.at
    [streamed] = bot.slack.streamed_text("D0STREAM1")
    assert streamed.startswith("Up to 10 unused vacation days carry over")
    # the checked answer replaces the draft in the same message, as an answer is shown today
    assert final.method == "chat.update" and final.args["ts"] == ts
    text = blocks_text(final.args["blocks"])
    assert re.search(r"\|\[1\]>", text)  # its citations, linked
    assert {render.FEEDBACK_UP, render.FEEDBACK_DOWN} <= set(buttons(final.args["blocks"]))
    assert bot.slack.of("chat.postMessage", "D0STREAM1") == []  # one message, no placeholder


async def test_a_mention_or_link_split_across_chunks_never_renders_in_the_draft(bot, llm):
    hostile = "Ask <@U0BOB0001> or <!channel> at https://evil.example/steal?x=1 for *all* 10 days."
    script(llm, Steps(Reply(content=answer_json(hostile), chunk_s=0.01, piece=3)))

    await ask_in_panel(bot, "D0STREAM2", "1764600000.000200")

    sent = [c.args.get("markdown_text") for c in bot.slack.calls if c.method.endswith("Stream")]
    sent = [t for t in sent if t]
    assert len(sent) > 3  # many chunks: the mention and the link were cut across deltas
    streamed = "".join(sent)
    assert "<" not in streamed and ">" not in streamed and "*" not in streamed
    assert "＠U0BOB0001" in streamed  # shown as the characters it is
    links = re.findall(r"\S*https?://\S*", streamed)
    assert links and all(w.startswith("`") and w.endswith("`") for w in links)


async def test_a_rejected_draft_is_replaced_by_the_final_answer(bot, llm):
    wrong = "You may carry over 99 vacation days."
    script(llm, Steps(Reply(content=answer_json(wrong), chunk_s=0.01, piece=5), rejected=True))

    final = await ask_in_panel(bot, "D0STREAM3", "1764600000.000300")

    [streamed] = bot.slack.streamed_text("D0STREAM3")
    assert "99" in streamed  # the unchecked draft was shown while written...
    [stop] = bot.slack.of("chat.stopStream", "D0STREAM3")
    assert final.args["ts"] == stop.args["ts"]  # ...and the answer took its place
    assert "99" not in shown(blocks_text(final.args["blocks"]))
    assert "99" not in shown(final.args["text"])


async def test_an_llm_error_mid_stream_ends_in_the_offline_answer(bot, llm):
    wrong = "Up to 99 days carry over every single year without any limit at all."
    failing = Reply(content=answer_json(wrong), piece=4, fail_after=14, error="overloaded")
    steps = script(llm, Steps(failing))

    final = await ask_in_panel(bot, "D0STREAM4", "1764600000.000400")

    assert steps.answer_requests == 1  # the error is not retried: the offline reasoner answers
    [streamed] = bot.slack.streamed_text("D0STREAM4")
    assert "99" in streamed
    assert final.args["ts"] == bot.slack.of("chat.stopStream", "D0STREAM4")[0].args["ts"]
    text = shown(blocks_text(final.args["blocks"]))
    assert "99" not in text and "10" in text  # the handbook's rule, found offline


async def test_a_workspace_that_refuses_streaming_gets_the_answer_whole(bot, llm):
    script(llm, Steps(Reply(content=answer_json(TRUE), chunk_s=0.01, piece=6)))
    bot.slack.fail["chat.startStream"] = "unknown_method"  # an older workspace

    final = await ask_in_panel(bot, "D0STREAM5", "1764600000.000500")

    assert len(bot.slack.of("chat.startStream", "D0STREAM5")) == 1  # tried once, then not again
    assert bot.slack.of("chat.appendStream", "D0STREAM5") == []
    assert bot.slack.of("chat.stopStream", "D0STREAM5") == []
    assert final.method == "chat.postMessage" and "10" in blocks_text(final.args["blocks"])


async def test_a_channel_question_never_streams(bot, llm):
    script(llm, Steps(Reply(content=answer_json(TRUE), chunk_s=0.01, piece=6)))

    await bot.send.event(mention_event(CARRY_OVER, channel="C0HRONLY1"))
    final = await bot.slack.final_answer("C0HRONLY1")

    assert "10" in blocks_text(final.args["blocks"])
    assert not [c for c in bot.slack.calls if c.method.endswith("Stream")]


async def test_teams_personal_chat_streams_with_increasing_sequence_and_a_final_card(bot, llm):
    script(llm, Steps(Reply(content=answer_json(TRUE, "Ask HR."), chunk_s=0.03, piece=6)))
    activity = teams_activity(CARRY_OVER, service_url=bot.connector.url)
    conversation = activity["conversation"]["id"]

    assert (await bot.teams(activity))[0] in (200, 201)
    await bot.connector.wait_for(
        lambda calls: any(
            (FakeConnector.stream_info(c.args.get("activity") or {}) or {}).get("streamType")
            == "final"
            for c in calls
        )
    )

    sent = bot.connector.activities(conversation)
    streamed = [(c, FakeConnector.stream_info(c.args["activity"])) for c in sent]
    streamed = [(c, info) for c, info in streamed if info is not None]
    first, info = streamed[0]
    assert first.args["activity"]["type"] == "typing"
    assert info["streamType"] == "informative" and info["streamSequence"] == 1
    assert first.args["activity"].get("textFormat") == "plain"  # our progress line, never markup
    stream_id = first.result["id"]
    later = [i for _, i in streamed[1:]]
    assert all(i["streamId"] == stream_id for i in later)
    sequences = [i["streamSequence"] for i in later if i["streamType"] != "final"]
    assert sequences == sorted(set(sequences)) and sequences[0] == 2
    drafts = [c.args["activity"]["text"] for c, i in streamed if i["streamType"] == "streaming"]
    assert len(drafts) >= 2 and all(
        b.startswith(a) for a, b in zip(drafts, drafts[1:], strict=False)
    )
    assert drafts[-1].startswith("Up to 10 unused vacation days")
    final, info = streamed[-1]
    assert info["streamType"] == "final" and final.args["activity"]["type"] == "message"
    card = FakeConnector.card(final.args["activity"])
    assert card is not None and "10" in FakeConnector.card_text(card)
    kinds = [i["streamType"] for _, i in streamed]
    assert kinds.index("streaming") > 0 and "informative" not in kinds[kinds.index("streaming") :]


async def test_teams_group_chat_never_streams(bot, llm):
    script(llm, Steps(Reply(content=answer_json(TRUE), chunk_s=0.01, piece=6)))
    mention = {
        "type": "mention",
        "mentioned": {"id": "28:footnote-bot", "name": "Footnote"},
        "text": "<at>Footnote</at>",
    }
    activity = teams_activity(
        f"<at>Footnote</at> {CARRY_OVER}",
        service_url=bot.connector.url,
        conversation={
            "id": "19:group-chat-1@thread.v2",
            "conversationType": "groupChat",
            "isGroup": True,
            "tenantId": "t-northwind",
        },
        entities=[mention],
    )

    assert (await bot.teams(activity))[0] in (200, 201)
    await bot.connector.wait_for(
        lambda calls: any(
            FakeConnector.card(c.args.get("activity") or {}) is not None for c in calls
        )
    )

    sent = bot.connector.activities("19:group-chat-1@thread.v2")
    assert not [c for c in sent if FakeConnector.stream_info(c.args["activity"])]


async def test_a_draft_slack_will_not_update_is_deleted_and_the_answer_posted(bot, llm):
    wrong = "You may carry over 99 vacation days."
    script(llm, Steps(Reply(content=answer_json(wrong), chunk_s=0.01, piece=5), rejected=True))
    bot.slack.fail["chat.update"] = "cant_update_message"

    await bot.send.event(dm_event(CARRY_OVER, channel="D0STREAM6", thread_ts="1764600000.0006"))
    final = await bot.slack.wait_for(
        lambda _: [c for c in bot.slack.of("chat.postMessage", "D0STREAM6") if c.args.get("blocks")]
    )

    [start] = bot.slack.of("chat.startStream", "D0STREAM6")
    [deleted] = bot.slack.of("chat.delete", "D0STREAM6")
    assert deleted.args["ts"] == start.result["ts"]  # the unchecked draft is gone
    assert "99" not in shown(blocks_text(final[0].args["blocks"]))
    assert deleted.at < final[0].at
