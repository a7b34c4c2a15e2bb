"""What a digest tells a channel (hole 1 of the second attack): the weekly digest posted to a
channel of bob (engineering) and erin (contractors) said "Cited: Salary Bands 2026", "Closest:
Performance Review Guide for Managers" and an admin's question about the reorganisation draft —
``bot/reports/digest.py`` never looked at who is in the channel. Now each post holds only what every
member may read, members looked up as for an answer in a channel, and says how many items it
left out. The command as an operator runs it, over real documents in Qdrant Edge, posting to the
loopback Slack Web API; a Teams conversation through the loopback Bot Framework connector."""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import shutil

from pydantic import SecretStr

from bot.identity.directory import FileDirectory
from bot.reports.digest import current_period
from bot.reports.feedback import (
    CitedDocument,
    DigestRoute,
    FeedbackRecord,
    FeedbackStore,
    TurnRecord,
)
from bot.settings import DigestSettings, Settings, TeamsSettings
from ingest.settings import DatabaseSettings
from testing.idp import LoopbackIdP
from testing.slack import BOT_USER_ID, FakeSlackAPI, blocks_text
from testing.teams import FakeConnector
from tests.bot.test_cli import footnote
from tests.security.conftest import DIRECTORY

SALARY = CitedDocument("handbook/hr/salary-bands.pdf", "Salary Bands 2026")
DRAFT = CitedDocument("handbook/drafts/reorg-plan-draft.md", "DRAFT: Customer Operations …")
FAQ = CitedDocument("handbook/hr/faq-2024.html", "HR FAQ (2024)")
ALICE_ASKS = "What is the salary band for a senior engineer in Berlin?"
ALICE_ASKS_2 = "How are performance review calibrations run for managers?"
SAM_ASKS = "When will the Customer Operations reorganisation be announced?"
BOB_ASKS = "How many vacation days can I carry over to next year?"
ERIN_ASKS = "Is the parental leave still 12 weeks?"
SECRETS = [
    "Salary Bands", "salary-bands", "salary band", "Performance Review", "calibrations",
    "reorganisation", "Reorganisation", "reorg-plan", "DRAFT",
]  # fmt: skip
PEOPLE = {
    "U0BOB0001": {"email": "bob@northwind.example"},
    "U0ERIN001": {"email": "erin@northwind.example"},
    "U0ALICE01": {"email": "alice@northwind.example"},
    "U0GUEST01": {"email": "guest@elsewhere.example"},
    BOT_USER_ID: {"is_bot": True},
}


def last_week() -> str:
    period = current_period(dt.datetime.now(dt.UTC), DigestSettings())
    return (period.start - dt.timedelta(days=1)).isoformat(timespec="milliseconds")


def seed(data_dir, routes: list[DigestRoute] = ()) -> None:  # type: ignore[assignment]
    at = last_week()
    store = FeedbackStore.open(DatabaseSettings(), data_dir)
    rows = [
        ("t1", "alice", ("hr", "managers"), ALICE_ASKS, "partial", (SALARY,), ""),
        ("t2", "alice", ("hr", "managers"), ALICE_ASKS_2, "unknown", (), ""),
        ("t3", "sam", ("admins",), SAM_ASKS, "answered", (DRAFT,), "outdated"),
        ("t4", "bob", ("engineering",), BOB_ASKS, "unknown", (), ""),
        ("t5", "erin", ("contractors",), ERIN_ASKS, "answered", (FAQ,), "outdated"),
    ]
    try:
        for turn_id, user, groups, question, status, cited, outdated in rows:
            store.record_turn(
                TurnRecord(turn_id, "slack", f"slack:T:D{turn_id}", user, groups, "dm", question,
                           status, "an answer", cited, at=at)
            )  # fmt: skip
            if outdated:
                store.record_feedback(FeedbackRecord(turn_id, user, "down", "outdated", at=at))
        for r in routes:
            store.set_route(r)
    finally:
        store.close()


async def post(data_dir, slack: FakeSlackAPI, channel: str):
    env = {
        "FOOTNOTE_SLACK__BOT_TOKEN": "xoxb-digest",
        "FOOTNOTE_SLACK__SIGNING_SECRET": "s" * 32,
        "FOOTNOTE_SLACK__API_URL": slack.api_url,
        "FOOTNOTE_DIGEST__SLACK_CHANNEL": channel,
    }
    done = await asyncio.to_thread(
        footnote, "report", "digest", "--post", data_dir=data_dir, timeout=300, **env
    )
    assert done.returncode == 0, done.stderr
    return done


def posted(slack: FakeSlackAPI, channel: str) -> str:
    [call] = slack.of("chat.postMessage", channel)
    return call.args["text"] + "\n" + blocks_text(call.args["blocks"])


async def test_a_digest_to_bob_and_erin_names_nothing_they_may_not_read(few_documents, tmp_path):
    data_dir = tmp_path / "data"
    shutil.copytree(few_documents, data_dir)
    seed(data_dir)
    slack = await FakeSlackAPI(
        PEOPLE, {"CMIXED01": [BOT_USER_ID, "U0BOB0001", "U0ERIN001"]}
    ).start()
    try:
        await post(data_dir, slack, "CMIXED01")
    finally:
        await slack.close()
    shown = posted(slack, "CMIXED01")
    for secret in SECRETS:
        assert secret not in shown, (secret, shown)  # was: "Cited: Salary Bands 2026", …
    assert ALICE_ASKS not in shown and SAM_ASKS not in shown
    assert BOB_ASKS in shown and ERIN_ASKS in shown  # what both of them may read stays
    m = re.search(r"(\d+) items left out: not everyone in this conversation may read", shown)
    assert m and int(m.group(1)) >= 2, shown  # alice's topic(s) and sam's outdated answer
    assert slack.of("conversations.members", "CMIXED01")  # as for an answer in the channel
    print("\n" + shown)  # `pytest -s`: the digest as bob and erin read it


async def test_owners_routes_get_what_their_channels_members_may_read(few_documents, tmp_path):
    data_dir = tmp_path / "data"
    shutil.copytree(few_documents, data_dir)
    seed(
        data_dir,
        [
            DigestRoute("alice@northwind.example", "slack", "CALICE01"),
            DigestRoute("m.lindqvist@northwind.example", "slack", "CREORG01"),  # the draft's
        ],
    )
    channels = {
        "CDEFAULT": [BOT_USER_ID, "U0ALICE01"],
        "CALICE01": [BOT_USER_ID, "U0ALICE01"],  # the owner alone: what alice may read
        "CREORG01": [BOT_USER_ID, "U0ALICE01", "U0BOB0001"],  # not the leadership
    }
    slack = await FakeSlackAPI(PEOPLE, channels).start()
    try:
        await post(data_dir, slack, "CDEFAULT")
    finally:
        await slack.close()
    alice = posted(slack, "CALICE01")
    assert "Salary Bands 2026" in alice and "left out" not in alice
    reorg = posted(slack, "CREORG01")
    assert SAM_ASKS not in reorg and "reorganisation" not in reorg and "DRAFT" not in reorg
    assert "1 item left out" in reorg


# --- the rule itself, and members who cannot be told ------------------------------------------

BOB = ("engineering", "user:bob@northwind.example")
ERIN = ("contractors", "user:erin@northwind.example")


def docs():
    """(open, HR only, gone from the index) as a report names them."""
    from bot.reports.gaps import DocRef

    return (
        DocRef("handbook/hr/leave-policy-2026.md", "Leave Policy 2026", acl=("*",)),
        DocRef("handbook/hr/salary-bands.pdf", "Salary Bands 2026", acl=("admins", "hr")),
        DocRef("handbook/hr/old.md", "Old memo"),  # no longer in the index: nobody's
    )


def report():
    from bot.reports.gaps import GapReport, OutdatedAnswer, StaleDocument, Topic

    OPEN, HR_ONLY, GONE = docs()

    def topic(name: str, closest, related=(), readers=(("engineering",),)) -> Topic:
        return Topic(name, [name], 1, 1, [f"about {name}?"], list(closest), list(readers),
                     list(related))  # fmt: skip

    return GapReport(
        "2026-11-23", "2026-11-30", 10, 5,
        topics=[
            topic("leave", [OPEN]),
            topic("bands", [OPEN], related=[HR_ONLY]),  # an asker alone was pointed to it
            topic("nothing found", [], readers=[("hr",)]),  # hr's words, no document
            topic("nothing found either", [], readers=[()]),
        ],
        outdated=[OutdatedAnswer("q?", "2026-11-25", [GONE], ("engineering",))],
        stale=[StaleDocument(OPEN, 4), StaleDocument(HR_ONLY, 5)],
    )  # fmt: skip


def test_an_item_stays_only_when_every_member_may_read_what_it_is_about():
    from bot.reports.digest import PUBLIC_ONLY, for_audience

    OPEN = docs()[0]
    mixed = for_audience(report(), (BOB, ERIN))
    assert [t.name for t in mixed.topics] == ["leave", "nothing found either"]
    assert mixed.outdated == [] and [s.doc for s in mixed.stale] == [OPEN]
    assert mixed.left_out == 4
    hr = for_audience(report(), (("hr", "user:alice@northwind.example"),))
    assert [t.name for t in hr.topics] == [
        "leave",
        "bands",
        "nothing found",
        "nothing found either",
    ]
    assert for_audience(report(), ()).left_out == for_audience(report(), PUBLIC_ONLY).left_out


async def test_a_stranger_or_an_unreadable_member_list_leaves_public_documents_only():
    from bot.reports.digest import PUBLIC_ONLY, audience_of, for_audience

    directory = FileDirectory.load(DIRECTORY)
    slack = await FakeSlackAPI(PEOPLE, {"CGUEST01": ["U0BOB0001", "U0GUEST01"]}).start()
    try:
        from slack_sdk.web.async_client import AsyncWebClient

        from bot.reports.digest import slack_members

        client = AsyncWebClient(token="xoxb-t", base_url=slack.api_url)
        with_guest = await audience_of(directory, slack_members(client, "CGUEST01"), "x")
        unreadable = await audience_of(directory, slack_members(client, "CNOSUCH1"), "x")
    finally:
        await slack.close()
    assert () in with_guest and BOB in with_guest
    assert unreadable == PUBLIC_ONLY
    public = for_audience(report(), with_guest)
    assert [t.name for t in public.topics] == ["leave", "nothing found either"]


async def test_a_teams_conversation_gets_what_all_its_members_may_read(tmp_path):
    from bot.reports.digest import post_digest

    app_id, password = "00000000-0000-0000-0000-00000000d16f", "digest-secret"
    members = {
        "19:mixed@thread.tacv2": [
            {"id": "29:bob", "aadObjectId": "bob-aad", "email": "bob@northwind.example"},
            {"id": "29:erin", "aadObjectId": "erin-aad", "email": "erin@northwind.example"},
        ]
    }
    idp = LoopbackIdP({app_id: password}).start()
    connector = await FakeConnector(authorize=idp.accepts, members=members).start()
    try:
        with idp.trusted():
            settings = Settings(
                data_dir=tmp_path,
                teams=TeamsSettings(
                    app_id=app_id,
                    app_password=SecretStr(password),
                    openid_metadata_url=idp.openid_metadata_url,
                    login_url=idp.login_url,
                ),
                digest=DigestSettings(
                    teams_conversation="19:mixed@thread.tacv2",
                    teams_service_url=connector.url + "/",
                ),
            )
            outcome = await post_digest(
                settings,
                lambda: FeedbackStore.open(settings.database, tmp_path),
                lambda since, until: report(),
                now=dt.datetime(2026, 12, 1, 7, 0, tzinfo=dt.UTC),
                directory=FileDirectory.load(DIRECTORY),
            )
    finally:
        await connector.close()
        idp.close()
    assert outcome.where == ["teams"]
    [message] = connector.messages("19:mixed@thread.tacv2")
    text = FakeConnector.card_text(message["attachments"][0]["content"])
    assert "Salary Bands" not in text and "about bands?" not in text
    assert "about leave?" in text and "4 items left out" in text
