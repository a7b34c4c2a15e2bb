"""Teams end to end: Bot Framework activities POSTed to /api/messages; the replies land on a local
connector (the activity's serviceUrl). Real botbuilder CloudAdapter, real assistant, real Redis."""

from __future__ import annotations

import re

from botbuilder.schema import Activity

from bot.chat import render
from bot.chat.teams import question_text
from bot.reports.feedback import FeedbackStore
from testing.teams import FakeConnector, teams_activity, teams_channel_activity
from tests.e2e.conftest import running_bot

CARRY_OVER = "How many vacation days can I carry over?"
TEAM = "19:northwind-team@thread.tacv2"
CHANNEL = "19:general@thread.tacv2"
BOT = {"id": "28:footnote-bot", "name": "Footnote"}


def channel_activity(
    bot, text: str, *, mention: bool = True, user: str = "29:alice", thread: str = "1700000000001"
):
    return teams_channel_activity(
        text,
        service_url=bot.connector.url,
        team=TEAM,
        channel=CHANNEL,
        message_id=thread,
        user=user,
        mention=mention,
    )


def card_text(card: dict) -> str:
    return FakeConnector.card_text(card)


def sent_messages(bot, conversation: str) -> list[tuple[str, dict]]:
    """(method, activity) of every message sent into ``conversation``: "POST " for a new one,
    "PUT <id>" for one that replaces an earlier message."""
    return [
        (c.method, c.args["activity"])
        for c in bot.connector.calls
        if "activity" in c.args
        and c.args["activity"].get("type") == "message"
        and c.args["conversation"] == conversation
    ]


async def test_personal_chat_replies_with_an_adaptive_card(bot):
    status, _ = await bot.teams(teams_activity(CARRY_OVER, service_url=bot.connector.url))
    assert status in (200, 201)
    sent = [c.args["activity"] for c in bot.connector.calls if "activity" in c.args]
    assert sent[0]["type"] == "typing"
    (first, informative), *edits = sent_messages(bot, "a:personal-29:alice")
    assert first.startswith("POST ") and informative["text"] == f"⏳ {render.PLACEHOLDER}"
    # the informative message is replaced: by progress lines, then by the answer card
    assert edits and all(method.startswith("PUT ") for method, _ in edits)
    assert len({method for method, _ in edits}) == 1  # always the same message
    reply = edits[-1][1]
    card = FakeConnector.card(reply)
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    assert card["body"][0]["type"] == "RichTextBlock" and "[1]" in card_text(card).splitlines()[0]
    text = card_text(card)
    assert "Sources" in text
    assert re.search(
        r"\[\[1\] Leave Policy[^\]]*\]\(http://127\.0\.0\.1:\d+/docs/handbook/hr/leave-policy-2026\.md\?u=alice&[^)]+\) · updated 2026-01-15",
        text,
    )
    votes = [a["data"] for a in card["actions"] if a["data"]["action"] == "feedback"]
    assert {v["value"] for v in votes} == {"up", "down"}
    assert reply["replyToId"] and reply["recipient"]["id"] == "29:alice"


async def test_channel_mention_is_answered_without_the_mention_text(bot):
    bot.connector.members[TEAM] = [
        {"id": "29:alice", "name": "Alice Moreau", "aadObjectId": "aad-29:alice"},
        {"id": "29:bob", "name": "Bob Okafor", "aadObjectId": "aad-29:bob"},
        {"id": "28:footnote-bot", "name": "Footnote"},
    ]
    status, _ = await bot.teams(channel_activity(bot, "What are the salary bands for engineers?"))
    assert status in (200, 201)
    (reply,) = bot.connector.messages(f"{CHANNEL};messageid=1700000000001")
    text = card_text(FakeConnector.card(reply))
    assert "salary-bands" not in text  # bob may not read the HR-only salary document
    # the hint that alice alone could read more goes to her in a 1:1 chat, not into the channel
    assert "direct message" not in text
    (hint,) = bot.connector.private_messages("29:alice")
    assert "direct message" in hint["text"] and hint["textFormat"] == "plain"
    assert [c for c in bot.connector.calls if c.method == "pagedmembers"]
    history = await bot.state.history(f"teams:{CHANNEL};messageid=1700000000001")
    assert history.messages[0].text == "What are the salary bands for engineers?"


async def test_channel_message_without_a_mention_gets_no_reply(bot):
    status, _ = await bot.teams(
        channel_activity(bot, CARRY_OVER, mention=False, thread="1700000000002")
    )
    assert status in (200, 201)
    assert bot.connector.calls == []


async def test_mention_text_removal_reads_the_entity_like_botbuilder():
    activity = Activity().deserialize(
        {
            "type": "message",
            "text": "<at>Footnote</at> How many <b>vacation</b> days?",
            "recipient": BOT,
            "from": {"id": "29:alice"},
            "entities": [{"type": "mention", "mentioned": BOT, "text": "<at>Footnote</at>"}],
        }
    )
    assert question_text(activity) == "How many vacation days?"


async def test_action_submit_confirms_the_ticket_once(bot, assistant):
    await bot.teams(
        teams_activity(
            "Please open a ticket: the printer on floor 3 jams", service_url=bot.connector.url
        )
    )
    card = FakeConnector.card(bot.connector.messages()[-1])
    confirm = next(a for a in card["actions"] if a["data"]["action"] == "confirm")
    assert confirm["type"] == "Action.Submit" and confirm["data"]["action_id"]
    before = assistant.desk.count()

    submit = teams_activity("", service_url=bot.connector.url, value=confirm["data"])
    assert (await bot.teams(submit))[0] in (200, 201)
    done = card_text(FakeConnector.card(bot.connector.messages()[-1]))
    assert re.search(
        r"🎫 Ticket \[HELP-\d+\]\(https://desk\.example/tickets/HELP-\d+\) filed", done
    )
    again = teams_activity("", service_url=bot.connector.url, value=confirm["data"])
    assert (await bot.teams(again))[0] in (200, 201)
    assert "already handled" in card_text(FakeConnector.card(bot.connector.messages()[-1]))
    assert assistant.desk.count() == before + 1


async def test_someone_else_cannot_confirm(bot, assistant):
    await bot.teams(
        teams_activity("Please open a ticket: badge reader broken", service_url=bot.connector.url)
    )
    card = FakeConnector.card(bot.connector.messages()[-1])
    confirm = next(a for a in card["actions"] if a["data"]["action"] == "confirm")
    before = assistant.desk.count()
    await bot.teams(
        teams_activity(
            "", service_url=bot.connector.url, user="29:bob", name="Bob", value=confirm["data"]
        )
    )
    assert "Only Alice Moreau" in bot.connector.messages()[-1]["text"]
    assert assistant.desk.count() == before


async def test_unknown_user_and_bad_requests(bot):
    await bot.teams(
        teams_activity(CARRY_OVER, service_url=bot.connector.url, user="29:nobody", name="Nobody")
    )
    assert "directory" in bot.connector.messages()[-1]["text"]
    async with bot.session.post(
        bot.url + "/api/messages", data="{nope", headers={"Content-Type": "application/json"}
    ) as r:
        assert r.status == 400
    async with bot.session.post(
        bot.url + "/api/messages", data="hello", headers={"Content-Type": "text/plain"}
    ) as r:
        assert r.status == 415


async def test_feedback_submit_is_recorded_and_answered_with_the_reasons_card(bot):
    await bot.teams(teams_activity(CARRY_OVER, service_url=bot.connector.url))
    card = FakeConnector.card(bot.connector.messages()[-1])
    down = next(a for a in card["actions"] if a["data"].get("value") == "down")
    assert down["data"]["asker"] == "alice"
    await bot.teams(teams_activity("", service_url=bot.connector.url, value=down["data"]))
    reasons = FakeConnector.card(bot.connector.messages()[-1])
    assert reasons is not None and [a["data"]["reason"] for a in reasons["actions"]][-1] == "other"
    store = FeedbackStore.open(bot.settings.database, bot.settings.data_dir)
    (record,) = store.feedback(down["data"]["turn_id"])
    assert (record.vote, record.user_id) == ("down", "alice")
    wrong = next(a for a in reasons["actions"] if a["data"]["reason"] == "wrong")
    await bot.teams(teams_activity("", service_url=bot.connector.url, value=wrong["data"]))
    assert bot.connector.messages()[-1]["text"] == "Thanks for the feedback!"
    assert store.feedback(down["data"]["turn_id"])[0].reason == "wrong"
    store.close()


async def test_replies_are_signed_with_one_cached_token(bot):
    """Every reply carries the token the bot got from Entra ID (the connector refuses any other),
    and MSAL's cache spares a token request per reply."""
    for _ in range(2):
        assert (await bot.teams(teams_activity(CARRY_OVER, service_url=bot.connector.url)))[
            0
        ] == 201
    assert len([c for c in bot.connector.calls if c.method.startswith("POST ")]) >= 2
    assert len([c for c in bot.connector.calls if c.method.startswith("PUT ")]) >= 2  # answers
    assert [c for c in bot.connector.calls if c.method == "401"] == []
    (request,) = bot.idp.token_requests
    assert request["grant_type"] == "client_credentials"
    assert request["scope"] == "https://api.botframework.com/.default"
    assert request["client_id"] == bot.settings.teams.app_id
    assert request["tenant"] == "botframework.com"


async def test_a_single_tenant_bot_gets_its_token_from_its_tenant(
    handbook, assistant, redis_prefix
):
    changes = {"tenant_id": "t-northwind"}
    async with running_bot(handbook, assistant, redis_prefix, teams_changes=changes) as bot:
        assert (await bot.teams(teams_activity(CARRY_OVER, service_url=bot.connector.url)))[
            0
        ] == 201
        assert bot.connector.messages()
        assert [r["tenant"] for r in bot.idp.token_requests] == ["t-northwind"]


PROG = {"id": "a:personal-alice-2", "conversationType": "personal", "tenantId": "t-northwind"}
GREET = {"id": "a:personal-alice-3", "conversationType": "personal", "tenantId": "t-northwind"}


async def test_personal_chat_progress_edits_the_informative_message(bot, monkeypatch):
    monkeypatch.setattr("bot.chat.teams.PROGRESS_INTERVAL_S", 0.0)  # every progress line is an edit
    await bot.teams(teams_activity(CARRY_OVER, service_url=bot.connector.url, conversation=PROG))
    (_, informative), *edits = sent_messages(bot, PROG["id"])
    lines = [a["text"] for _, a in edits if a.get("text")]
    assert lines and all(line.startswith("⏳ ") for line in lines)  # the loop's steps, in place
    assert FakeConnector.card(edits[-1][1])  # and the answer last, in the same message


async def test_added_to_a_personal_chat_greets_with_suggested_actions(bot):
    update = {
        "type": "conversationUpdate",
        "id": "f:added-1",
        "serviceUrl": bot.connector.url,
        "channelId": "msteams",
        "from": {"id": "29:alice", "aadObjectId": "aad-29:alice"},
        "recipient": BOT,
        "conversation": {"id": "a:personal-29:alice", "conversationType": "personal"},
        "membersAdded": [BOT],
        "channelData": {"tenant": {"id": "t-northwind"}},
    }
    assert (await bot.teams(update))[0] in (200, 201)

    (_, greeting), *_ = sent_messages(bot, "a:personal-29:alice")
    assert "Ask me anything" in greeting["text"] and greeting["textFormat"] == "plain"
    actions = greeting["suggestedActions"]["actions"]
    prompts = bot.settings.teams.suggested_prompts
    assert [(a["type"], a["value"]) for a in actions] == [("imBack", p) for p in prompts[:4]]


async def test_a_greeting_in_personal_chat_offers_the_suggested_actions(bot):
    await bot.teams(teams_activity("hi", service_url=bot.connector.url, conversation=GREET))

    *_, (_, reply) = sent_messages(bot, GREET["id"])
    actions = reply["suggestedActions"]["actions"]
    assert [a["value"] for a in actions] == bot.settings.teams.suggested_prompts[:4]
