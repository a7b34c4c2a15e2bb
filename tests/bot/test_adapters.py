"""The adapters' text translation: Slack mrkdwn and Teams mentions → the plain question."""

from __future__ import annotations

from botbuilder.schema import Activity

from bot.chat.slack import question_text as slack_question
from bot.chat.teams import mentions_of
from bot.chat.teams import question_text as teams_question
from bot.chat.teams_auth import authority
from bot.settings import TeamsSettings


def test_slack_question_drops_the_bot_mention_and_unwraps_markup():
    names = {"U0BOB0001": "Bob Okafor"}.get
    text = "<@UBOT> ask <@U0BOB0001> about <https://wiki.example/a|the wiki> in <#C123|general> &amp; <!here> &lt;3"
    assert (
        slack_question(text, "UBOT", lambda u: names(u) or u)
        == "ask @Bob Okafor about the wiki in #general & @here <3"
    )
    assert slack_question("<@UBOT>", "UBOT") == ""


def test_teams_mentions_read_the_entity_and_only_the_bot_is_removed():
    bot = {"id": "28:bot", "name": "Footnote"}
    activity = Activity().deserialize(
        {
            "type": "message",
            "recipient": bot,
            "from": {"id": "29:alice"},
            "text": "<at>Footnote</at> what does <at>Bob</at> own?",
            "entities": [
                {"type": "mention", "mentioned": bot, "text": "<at>Footnote</at>"},
                {
                    "type": "mention",
                    "mentioned": {"id": "29:bob", "name": "Bob"},
                    "text": "<at>Bob</at>",
                },
            ],
        }
    )
    assert mentions_of(activity, "28:bot") == ["<at>Footnote</at>"]
    assert teams_question(activity) == "what does Bob own?"


def test_teams_reply_tokens_come_from_the_tenant_or_from_botframework_com():
    multi = TeamsSettings(app_id="id", app_password="pw")
    assert authority(multi) == "https://login.microsoftonline.com/botframework.com"
    single = TeamsSettings(
        app_id="id", app_password="pw", tenant_id="t-1", login_url="https://login.example/"
    )
    assert authority(single) == "https://login.example/t-1"
