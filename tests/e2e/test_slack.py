"""Slack end to end: signed payloads POSTed to the running app; assertions on what the fake Slack
Web API received. Real Bolt, real assistant over the sample handbook, real Redis."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from agent.messages import say
from bot.chat import render, slack_blocks
from bot.chat.conversation_state import RATE_LIMITED
from bot.reports.feedback import FeedbackStore
from testing.slack import (
    BOT_USER_ID,
    assistant_thread_started_event,
    block_action,
    blocks_text,
    buttons,
    dm_event,
    flat,
    mention_event,
)
from tests.e2e.conftest import running_bot

CARRY_OVER = "How many vacation days can I carry over?"


async def ask_dm(
    bot, text: str, *, user: str = "U0ALICE01", channel: str = "D0ALICE01", count: int = 1, **kw
):
    status, _ = await bot.send.event(dm_event(text, user=user, channel=channel, **kw))
    assert status == 200
    return await bot.slack.final_answer(channel, count)


def signed_links(text: str) -> list[str]:
    return re.findall(r"<(http://127\.0\.0\.1:\d+/docs/[^|>]+)\|", text)


async def test_dm_answer_has_placeholder_citation_links_sources_and_feedback(bot):
    t0 = time.perf_counter()
    status, body = await bot.send.event(dm_event(CARRY_OVER))
    assert status == 200 and time.perf_counter() - t0 < 2.0  # acknowledged at once, work after

    placeholder = await bot.slack.posted("D0ALICE01")
    assert placeholder.args["text"] == render.PLACEHOLDER
    assert "thread_ts" not in placeholder.args or not placeholder.args["thread_ts"]
    final = await bot.slack.final_answer("D0ALICE01")
    blocks = final.args["blocks"]
    text = blocks_text(blocks)

    assert len(blocks) <= slack_blocks.MAX_BLOCKS
    assert all(len(b["text"]["text"]) <= 3000 for b in blocks if b["type"] == "section")
    assert "10" in flat(blocks[0])  # the 2026 policy: up to 10 days
    # [n] markers in the answer are links, and each source is a link with its date
    assert re.search(
        r"<http://127\.0\.0\.1:\d+/docs/handbook/hr/leave-policy-2026\.md\?[^|>]+\|\[1\]>", text
    )
    assert "\nSources\n" in text
    assert re.search(r"\|\[1\] Leave Policy[^\n]*> · updated 2026-01-15", text)
    assert set(buttons(blocks)) >= {render.FEEDBACK_UP, render.FEEDBACK_DOWN}
    # the placeholder message is the one updated, and the final update is the last call
    assert final.args["ts"] == placeholder.result["ts"]
    assert [c for c in bot.slack.calls if c.args.get("channel") == "D0ALICE01"][-1] is final

    # the signed link opens the passage for alice
    link = signed_links(text)[0]
    status, page = await bot.get(link)
    assert status == 200
    anchor = link.split("#", 1)[1]
    assert f'id="{anchor}"' in page
    assert "carry over" in page.lower()


async def test_follow_up_in_the_same_dm_uses_redis_history(bot):
    await ask_dm(bot, CARRY_OVER, channel="D0ALICE02")
    conversation = "slack:T0NORTHWD:D0ALICE02"
    history = await bot.state.history(conversation)
    assert history.available and [m.role for m in history.messages] == ["user", "assistant"]
    assert history.messages[0].text == CARRY_OVER

    await ask_dm(bot, "And what did the 2024 FAQ say about it?", channel="D0ALICE02", count=2)
    history = await bot.state.history(conversation)
    assert len(history.messages) == 4
    # bounded to history_turns (3 in the harness) question/answer pairs
    for i in range(2):
        await ask_dm(bot, f"What about sick days, round {i}?", channel="D0ALICE02", count=3 + i)
    assert len((await bot.state.history(conversation)).messages) == 6


async def test_forged_and_stale_signatures_are_rejected(bot):
    payload = json.dumps(dm_event(CARRY_OVER, channel="D0FORGED1"))
    status, _ = await bot.send.post(payload, signature="v0=" + "0" * 64)
    assert status == 401
    status, _ = await bot.send.post(payload, timestamp=int(time.time()) - 600)
    assert status == 401
    await asyncio.sleep(0.3)
    assert bot.slack.of("chat.postMessage", "D0FORGED1") == []


async def test_url_verification_echoes_the_challenge(bot):
    status, body = await bot.send.event(
        {
            "token": "x",
            "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
            "type": "url_verification",
        }
    )
    assert status == 200 and "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" in body


async def test_a_retried_event_is_answered_once(bot):
    event = dm_event(CARRY_OVER, channel="D0RETRY01")
    first, second = await asyncio.gather(
        bot.send.event(event),
        bot.send.event(
            event, headers={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
        ),
    )
    assert first[0] == 200 and second[0] == 200
    await bot.slack.final_answer("D0RETRY01")
    status, _ = await bot.send.event(
        event, headers={"X-Slack-Retry-Num": "2", "X-Slack-Retry-Reason": "http_timeout"}
    )
    assert status == 200
    await asyncio.sleep(0.5)
    assert len(bot.slack.of("chat.postMessage", "D0RETRY01")) == 1
    assert len(bot.slack.finals("D0RETRY01")) == 1


async def test_bot_messages_and_its_own_are_ignored(bot):
    own = dm_event("I am the bot talking", user=BOT_USER_ID, channel="D0IGNORE1")
    other_bot = dm_event("beep", user="U0OTHRBOT", channel="D0IGNORE1")
    other_bot["event"]["bot_id"] = "B0OTHER"
    edited = dm_event(CARRY_OVER, channel="D0IGNORE1")
    edited["event"]["subtype"] = "message_changed"
    channel_msg = dm_event(CARRY_OVER, channel="C0HRENG01")
    channel_msg["event"]["channel_type"] = "channel"
    for payload in (own, other_bot, edited, channel_msg):
        assert (await bot.send.event(payload))[0] == 200
    await asyncio.sleep(0.5)
    assert bot.slack.of("chat.postMessage") == []


async def test_mention_in_a_channel_answers_in_the_thread(bot):
    event = mention_event(CARRY_OVER, channel="C0HRONLY1")
    assert (await bot.send.event(event))[0] == 200
    placeholder = await bot.slack.posted("C0HRONLY1")
    assert placeholder.args["thread_ts"] == event["event"]["ts"]
    final = await bot.slack.final_answer("C0HRONLY1")
    assert "leave-policy-2026" in blocks_text(final.args["blocks"])
    assert bot.slack.of("conversations.members")[0].args["channel"] == "C0HRONLY1"

    # a follow-up in the thread is answered in the same thread with the thread's history
    follow = mention_event(
        "and in the 2024 FAQ?", channel="C0HRONLY1", thread_ts=event["event"]["ts"]
    )
    assert (await bot.send.event(follow))[0] == 200
    second = await bot.slack.posted("C0HRONLY1", 2)
    assert second.args["thread_ts"] == event["event"]["ts"]
    await bot.slack.final_answer("C0HRONLY1", 2)
    history = await bot.state.history(f"slack:T0NORTHWD:C0HRONLY1:{event['event']['ts']}")
    assert len(history.messages) == 4 and "<@" not in history.messages[0].text


SALARY = "What are the salary bands for engineers?"
MONEY = re.compile(r"(€|\$|EUR|USD)\s?\d|\d{2,3}[ ,.]\d{3}")


async def test_channel_answers_use_only_what_every_member_may_read(bot):
    # alice alone (hr) in a DM: the HR-only salary document answers
    dm = await ask_dm(bot, SALARY, channel="D0ALICE03")
    assert "salary-bands" in blocks_text(dm.args["blocks"])

    # alice (hr) + bob (engineering) in a channel: never the salary document, and a hint to ask in a DM
    assert (await bot.send.event(mention_event(SALARY, channel="C0HRENG01")))[0] == 200
    final = await bot.slack.final_answer("C0HRENG01")
    text = blocks_text(final.args["blocks"])
    assert "salary-bands" not in text
    assert not MONEY.search(flat(final.args["blocks"][0])), flat(final.args["blocks"][0])
    # the hint that alice alone could read more goes to her alone, never into the channel
    assert "direct message" not in text and "only you" not in text
    (hint,) = await bot.slack.wait_for(lambda _: bot.slack.of("chat.postEphemeral", "C0HRENG01"))
    assert hint.args["user"] == "U0ALICE01" and "direct message" in hint.args["text"]
    members = bot.slack.of("conversations.members", "C0HRENG01")
    assert members and bot.slack.of("users.info")  # the other bot was looked up and skipped


async def test_identity_falls_back_to_the_email_and_strangers_get_a_polite_reply(bot):
    final = await ask_dm(bot, CARRY_OVER, user="U0NEWALIC", channel="D0NEWALI1")
    assert "leave-policy-2026" in blocks_text(final.args["blocks"])
    assert any(c.args.get("user") == "U0NEWALIC" for c in bot.slack.of("users.info"))

    assert (await bot.send.event(dm_event(CARRY_OVER, user="U0STRANGR", channel="D0STRANG1")))[
        0
    ] == 200
    reply = await bot.slack.posted("D0STRANG1")
    assert reply.args["text"] == render.NOT_IN_DIRECTORY
    assert bot.slack.of("chat.update", "D0STRANG1") == []


async def ticket_message(bot, channel: str) -> tuple[dict, dict]:
    final = await ask_dm(
        bot, "Please open a ticket: the VPN client crashes on macOS 15", channel=channel
    )
    blocks = final.args["blocks"]
    message = {"ts": final.args["ts"], "text": final.args["text"], "blocks": blocks}
    return message, buttons(blocks)


async def test_double_clicked_confirm_files_one_ticket(bot, assistant):
    message, btns = await ticket_message(bot, "D0TICKET1")
    assert set(btns) >= {render.CONFIRM, render.CANCEL}
    action_id = json.loads(btns[render.CONFIRM]["value"])["a"]
    assert action_id
    before = assistant.desk.count()

    # bob cannot confirm alice's ticket
    status, _ = await bot.send.action(
        block_action("U0BOB0001", "D0TICKET1", message, btns[render.CONFIRM])
    )
    assert status == 200
    await bot.slack.wait_for(lambda calls: bot.slack.of("chat.postEphemeral", "D0TICKET1"))
    assert "Only Alice Moreau" in bot.slack.of("chat.postEphemeral", "D0TICKET1")[0].args["text"]

    click = block_action("U0ALICE01", "D0TICKET1", message, btns[render.CONFIRM])
    results = await asyncio.gather(
        bot.send.action(click), bot.send.action(dict(click, trigger_id="2"))
    )
    assert [r[0] for r in results] == [200, 200]
    await bot.slack.wait_for(
        lambda calls: len(bot.slack.of("chat.postEphemeral", "D0TICKET1")) >= 2
    )
    updated = await bot.slack.wait_for(
        lambda calls: [
            c
            for c in bot.slack.of("chat.update", "D0TICKET1")
            if "Ticket" in blocks_text(c.args["blocks"]) and c.args["ts"] == message["ts"]
        ]
    )
    assert assistant.desk.count() == before + 1
    assert len(updated) == 1
    done = blocks_text(updated[0].args["blocks"])
    assert re.search(r"🎫 Ticket <https://desk\.example/tickets/HELP-\d+\|HELP-\d+> filed", done)
    assert render.CONFIRM not in buttons(updated[0].args["blocks"])  # the buttons are gone
    assert "already handled" in bot.slack.of("chat.postEphemeral", "D0TICKET1")[1].args["text"]


async def test_cancel_files_nothing(bot, assistant):
    message, btns = await ticket_message(bot, "D0TICKET2")
    before = assistant.desk.count()
    assert (
        await bot.send.action(block_action("U0ALICE01", "D0TICKET2", message, btns[render.CANCEL]))
    )[0] == 200
    updated = await bot.slack.wait_for(
        lambda calls: [
            c
            for c in bot.slack.of("chat.update", "D0TICKET2")
            if "no ticket" in blocks_text(c.args["blocks"])
        ]
    )
    assert render.CANCEL not in buttons(updated[0].args["blocks"])
    assert assistant.desk.count() == before


async def test_i_dont_know_shows_what_was_searched_and_offers_the_ticket(bot):
    final = await ask_dm(bot, "How do I bake a chocolate cake?", channel="D0UNKNOW1")
    text = blocks_text(final.args["blocks"])
    assert "I searched for" in text and "chocolate cake" in text
    btns = buttons(final.args["blocks"])
    assert render.CONFIRM in btns and json.loads(btns[render.CONFIRM]["value"])["u"] == "alice"
    assert "Open a ticket?" in text


async def test_feedback_is_recorded_and_the_reasons_go_to_the_asker_alone(bot):
    final = await ask_dm(bot, CARRY_OVER, channel="D0FEEDBK1")
    message = {"ts": final.args["ts"], "blocks": final.args["blocks"]}
    down = buttons(final.args["blocks"])[render.FEEDBACK_DOWN]
    turn_id = json.loads(down["value"])["t"]
    assert (await bot.send.action(block_action("U0ALICE01", "D0FEEDBK1", message, down)))[0] == 200
    (reasons,) = await bot.slack.wait_for(
        lambda calls: bot.slack.of("chat.postEphemeral", "D0FEEDBK1")
    )
    assert reasons.args["user"] == "U0ALICE01"
    assert [b["type"] for b in reasons.args["blocks"]] == ["section", "actions", "input"]
    store = FeedbackStore.open(bot.settings.database, bot.settings.data_dir)
    (record,) = store.feedback(turn_id)
    assert (record.vote, record.user_id, record.reason) == ("down", "alice", "")
    store.close()


async def test_malformed_bodies_get_4xx_or_a_polite_reply_never_a_crash(bot):
    status, _ = await bot.send.post("{not json")
    assert 400 <= status < 500
    status, _ = await bot.send.post("payload=%7Bbroken", "application/x-www-form-urlencoded")
    assert 400 <= status < 500
    no_event = dm_event("x")
    no_event.pop("event")
    assert (await bot.send.event(no_event))[0] in (200, 400, 404)
    no_text = dm_event("", channel="D0MALFRM1")
    no_text["event"].pop("text")
    assert (await bot.send.event(no_text))[0] == 200
    reply = await bot.slack.posted("D0MALFRM1")
    assert reply.args["text"] == say("en", "empty_question")
    weird = dm_event(CARRY_OVER, channel="D0MALFRM2")
    weird["event"]["text"] = {"not": "a string"}
    weird["event"]["user"] = ["U0ALICE01"]
    assert (await bot.send.event(weird))[0] in (200, 400)
    action = block_action(
        "U0ALICE01",
        "D0MALFRM3",
        {"ts": "1.1", "blocks": []},
        {
            "action_id": render.CONFIRM,
            "text": {"type": "plain_text", "text": "x"},
            "value": "{{nope",
        },
    )
    assert (await bot.send.action(action))[0] == 200
    # still serving
    final = await ask_dm(bot, CARRY_OVER, channel="D0MALFRM4")
    assert "Sources" in blocks_text(final.args["blocks"])


async def test_rate_limit_answers_with_a_friendly_message(handbook, assistant, redis_prefix):
    async with running_bot(handbook, assistant, redis_prefix, rate_per_minute=2) as bot:
        for i in range(2):
            await ask_dm(bot, CARRY_OVER, user="U0BOB0001", channel="D0RATE001", count=i + 1)
        assert (await bot.send.event(dm_event(CARRY_OVER, user="U0BOB0001", channel="D0RATE001")))[
            0
        ] == 200
        reply = await bot.slack.posted("D0RATE001", 3)
        assert reply.args["text"] == RATE_LIMITED


async def test_socket_mode_receives_events_over_the_websocket(bot):
    """`footnote serve --socket-mode`: the same app, events over a WebSocket instead of HTTP."""
    from bot.web.server import SLACK_KEY

    handler = bot.app[SLACK_KEY].socket_mode_handler("xapp-1-test")
    await handler.connect_async()
    try:
        opened = bot.slack.of("apps.connections.open")
        assert opened
        envelope = await bot.slack.push(dm_event(CARRY_OVER, channel="D0SOCKET1"))
        ack = await bot.slack.wait_for(
            lambda calls: [
                c
                for c in calls
                if c.method == "socket.ack" and c.args.get("envelope_id") == envelope
            ]
        )
        assert ack
        final = await bot.slack.final_answer("D0SOCKET1")
        assert "leave-policy-2026" in blocks_text(final.args["blocks"])
    finally:
        await handler.close_async()


async def test_ask_a_person_button_turns_the_question_into_a_ticket_proposal(bot):
    offer = {
        "action_id": render.TICKET_OFFER,
        "text": {"type": "plain_text", "text": "Ask a person"},
        "value": "Why is the staging VPN so slow?",
    }
    payload = block_action(
        "U0ALICE01", "D0OFFER01", {"ts": "1700000000.000100", "blocks": []}, offer
    )
    assert (await bot.send.action(payload))[0] == 200
    final = await bot.slack.final_answer("D0OFFER01")
    btns = buttons(final.args["blocks"])
    assert render.CONFIRM in btns and json.loads(btns[render.CONFIRM]["value"])["u"] == "alice"
    assert "staging VPN" in blocks_text(final.args["blocks"])


async def test_the_placeholder_shows_progress_before_the_answer(bot):
    from bot.web.server import SLACK_KEY

    bot.app[SLACK_KEY].progress_interval_s = 0  # every progress line becomes an edit
    final = await ask_dm(bot, CARRY_OVER, channel="D0PROGRS1")
    updates = bot.slack.of("chat.update", "D0PROGRS1")
    progress = [c for c in updates if not bot.slack.is_final(c)]
    assert progress and all(c.args["ts"] == final.args["ts"] for c in updates)
    assert any("passages" in c.args["text"] or "searching" in c.args["text"] for c in progress)
    assert updates[-1] is final


# ---------------------------------------------------------------- the assistant side panel


async def test_an_assistant_thread_greets_and_suggests_prompts(bot):
    from bot.web.server import SLACK_KEY

    thread = "1764500000.000100"
    status, _ = await bot.send.event(
        assistant_thread_started_event(channel="D0PANEL01", thread_ts=thread)
    )
    assert status == 200

    greeting = await bot.slack.posted("D0PANEL01")
    assert greeting.args["thread_ts"] == thread
    assert "Ask me anything" in greeting.args["text"]
    [prompts] = await bot.slack.wait_for(
        lambda _: bot.slack.of("assistant.threads.setSuggestedPrompts")
    )
    assert prompts.args["channel_id"] == "D0PANEL01" and prompts.args["thread_ts"] == thread
    offered = bot.app[SLACK_KEY].suggested_prompts
    assert [p["message"] for p in prompts.args["prompts"]] == offered[:4]
    assert bot.slack.of("chat.update", "D0PANEL01") == []  # nothing answered yet


async def test_a_question_in_an_assistant_thread_shows_status_then_the_answer_as_reply(bot):
    from bot.web.server import SLACK_KEY

    bot.app[SLACK_KEY].progress_interval_s = 0  # every progress line becomes a status
    thread = "1764500000.000200"
    await bot.send.event(dm_event(CARRY_OVER, channel="D0PANEL02", thread_ts=thread))

    answer = await bot.slack.posted("D0PANEL02")
    statuses = [
        c.args
        for c in bot.slack.of("assistant.threads.setStatus")
        if c.args["channel_id"] == "D0PANEL02"
    ]
    assert statuses and statuses[0]["status"] == render.PLACEHOLDER
    assert all(s["thread_ts"] == thread for s in statuses)
    assert len({s["status"] for s in statuses}) > 1  # the loop's steps, on the status line
    assert answer.args["thread_ts"] == thread
    assert "10" in flat(answer.args["blocks"][0])  # the answer itself, with its citations
    assert re.search(r"\|\[1\]>", blocks_text(answer.args["blocks"]))
    assert len(bot.slack.of("chat.postMessage", "D0PANEL02")) == 1  # no placeholder message
    assert bot.slack.of("chat.update", "D0PANEL02") == []


async def test_a_dm_thread_that_refuses_a_status_gets_the_placeholder(bot):
    bot.slack.fail["assistant.threads.setStatus"] = "thread_not_found"
    thread = "1764500000.000300"
    final = await ask_dm(bot, CARRY_OVER, channel="D0PANEL03", thread_ts=thread)

    placeholder = bot.slack.of("chat.postMessage", "D0PANEL03")[0]
    assert placeholder.args["text"] == render.PLACEHOLDER
    assert placeholder.args["thread_ts"] == thread
    assert final.args["ts"] == placeholder.args.get("ts", final.args["ts"])
    assert "10" in flat(final.args["blocks"][0])


RELOCATION = "How much housing allowance does the Lisbon relocation package pay?"


@pytest.fixture
def shared_with_alice(handbook, tmp_path):
    """A page shared with Alice alone, by e-mail (as a source grants it), in the bot's index."""
    folder = tmp_path / "shared-with-one"
    folder.mkdir()
    (folder / "relocation.md").write_text(
        "---\nacl: ['user:Alice@Northwind.example']\n---\n# Relocation to Lisbon\n\n"
        "The Lisbon relocation package pays a housing allowance of 2,400 euros a month for the "
        "first year.\n"
    )
    report = handbook.ingester.ingest(folder)
    assert report.added == ["shared-with-one/relocation.md"]
    yield
    handbook.index.delete_document("shared-with-one/relocation.md")


async def test_a_page_shared_with_one_person_by_email_answers_her_alone(bot, shared_with_alice):
    dm = await ask_dm(bot, RELOCATION, channel="D0ALICE09")
    assert "2,400" in flat(dm.args["blocks"][0]), flat(dm.args["blocks"][0])
    (link,) = {u for u in signed_links(blocks_text(dm.args["blocks"])) if "shared-with-one" in u}
    status, page = await bot.get(link)  # her citation opens for her
    assert status == 200 and "2,400" in page
    # carol shares alice's managers group; bob shares nothing: neither reads it
    for user, channel in (("U0CAROL01", "D0CAROL09"), ("U0BOB0001", "D0BOB0009")):
        other = await ask_dm(bot, RELOCATION, user=user, channel=channel)
        assert "2,400" not in blocks_text(other.args["blocks"]), user
    # a channel answers only from what every member may read: alice alone, yes; with bob, no
    assert (await bot.send.event(mention_event(RELOCATION, channel="C0HRONLY1")))[0] == 200
    alone = await bot.slack.final_answer("C0HRONLY1")
    assert "2,400" in blocks_text(alone.args["blocks"])
    assert (await bot.send.event(mention_event(RELOCATION, channel="C0HRENG01")))[0] == 200
    mixed = await bot.slack.final_answer("C0HRENG01")
    assert "2,400" not in blocks_text(mixed.args["blocks"])
