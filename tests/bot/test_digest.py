"""The weekly digest: rendered inert, posted once per period however many replicas race for it
(real SQLite and real PostgreSQL), to the loopback Slack Web API and Bot Framework connector."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import threading

import pytest
from pydantic import SecretStr

from bot.identity.directory import FileDirectory
from bot.reports.digest import current_period, post_digest, scheduled, slack_digest, teams_digest
from bot.reports.feedback import DigestRoute, FeedbackStore
from bot.reports.gaps import (
    DocRef,
    DocumentConflict,
    GapReport,
    OutdatedAnswer,
    StaleDocument,
    Topic,
)
from bot.settings import HANDBOOK_DIRECTORY, DigestSettings, Settings, SlackSettings, TeamsSettings
from ingest.settings import DatabaseSettings
from testing.idp import LoopbackIdP
from testing.slack import FakeSlackAPI, blocks_text, flat
from testing.teams import FakeConnector

DIRECTORY = FileDirectory.load(HANDBOOK_DIRECTORY)
OPEN = ("*",)  # documents everyone may read: the digests here go to channels of an admin
# Every channel the digests here go to: sam (admins) and the bot, looked up like any channel.
SAM = {"U0SAM0001": {"email": "sam@northwind.example"}, "U0FOOTNOTE": {"is_bot": True}}
CHANNELS = {c: ["U0SAM0001"] for c in ("COWNERS", "CHR", "CIT")}
SAM_IN_TEAMS = [{"id": "29:sam", "aadObjectId": "sam-aad", "email": "sam@northwind.example"}]
TEAMS_CHANNELS = {c: SAM_IN_TEAMS for c in ("19:owners@thread.tacv2", "19:it-ops@thread.tacv2")}
HOSTILE = "<!channel> *now* <https://evil.example|click> @here {{DATE(2026-01-01T00:00:00Z)}}"
APP_ID, APP_PASSWORD = "00000000-0000-0000-0000-00000000d16e", "digest-secret"


def report(question: str = "How many vacation days carry over?") -> GapReport:
    leave = DocRef(
        "handbook/hr/leave.md", "Leave policy", "2026-01-10", "hr@northwind.example", OPEN
    )
    faq = DocRef("handbook/hr/faq.html", "HR FAQ " + HOSTILE, "2024-03-01", acl=OPEN)
    return GapReport(
        since="2026-11-23T08:00:00.000+00:00",
        until="2026-11-30T08:00:00.000+00:00",
        turns=42,
        unanswered=7,
        topics=[
            Topic(
                "carry · vacation · days",
                ["carry", "vacation", "days"],
                5,
                4,
                [question, "Wie viele Urlaubstage kann ich übertragen?", HOSTILE],
                [leave, faq],
            )
        ],
        outdated=[OutdatedAnswer("What is the mileage rate?", "2026-11-25", [faq])],
        stale=[StaleDocument(faq, 6)],
        conflicts=[
            DocumentConflict(faq, leave, 3, "Note: HR FAQ (updated 2024-03-01) gives 5 days")
        ],
    )


def test_slack_digest_is_block_kit_with_every_text_inert():
    text, blocks = slack_digest(report())
    shown = blocks_text(blocks)
    assert "carry · vacation · days — 5 questions, 4 people" in shown
    assert "Closest: Leave policy; HR FAQ" in shown
    assert "Leave policy (2026-01-10) vs" not in shown and "HR FAQ" in shown
    # a question or a title is text: no mention, no link, no broadcast, no markup
    elements = [
        e for b in blocks if b["type"] == "rich_text" for s in b["elements"] for e in s["elements"]
    ]
    assert {e["type"] for e in elements} == {"text"}
    assert HOSTILE.split(" <https")[0] in flat(blocks)  # shown as typed
    assert any(e.get("style", {}).get("code") for e in elements if "evil" in e["text"])
    assert "<!channel>" not in text and "&lt;!channel&gt;" not in text  # not in the summary
    assert "<" not in text and "*" not in text
    assert len(blocks) <= 50 and blocks[0]["type"] == "header"


def test_teams_digest_is_an_adaptive_card_of_text_runs():
    card = teams_digest(report())
    runs = [r for b in card["body"] for r in b["inlines"]]
    assert {b["type"] for b in card["body"]} == {"RichTextBlock"}
    assert all("selectAction" not in r for r in runs)  # no links
    text = "\n".join(r["text"] for r in runs)
    assert "{{DATE(" not in text and "{\u200b{DATE(" in text
    assert "carry · vacation · days — 5 questions, 4 people" in text


@pytest.mark.parametrize(
    ("now", "start"),
    [
        ("2026-12-01T07:00:00+00:00", "2026-11-30T08:00Z"),  # Tuesday: Monday's period
        ("2026-11-30T07:59:00+00:00", "2026-11-23T08:00Z"),  # Monday before 08:00: last week's
        ("2026-11-30T08:00:00+00:00", "2026-11-30T08:00Z"),
    ],
)
def test_a_period_starts_each_week_on_the_set_day_and_hour(now, start):
    period = current_period(dt.datetime.fromisoformat(now), DigestSettings())
    assert period.key == start
    assert period.since.startswith(
        (
            dt.datetime.fromisoformat(start.rstrip("Z") + "+00:00") - dt.timedelta(days=7)
        ).isoformat()[:16]
    )


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> DatabaseSettings:
    if request.param == "sqlite":
        return DatabaseSettings(url=SecretStr(f"sqlite:///{tmp_path / 'shared.db'}"))
    return DatabaseSettings(url=SecretStr(request.getfixturevalue("postgres_url")))


@pytest.fixture
async def slack():
    api = await FakeSlackAPI(SAM, CHANNELS).start()
    yield api
    await api.close()


def settings_for(database, tmp_path, slack_api: FakeSlackAPI | None = None, **digest) -> Settings:
    return Settings(
        data_dir=tmp_path,
        database=database,
        slack=SlackSettings(
            bot_token=SecretStr("xoxb-digest"),
            signing_secret=SecretStr("s" * 32),
            api_url=slack_api.api_url if slack_api else None,
        )
        if slack_api
        else None,
        digest=DigestSettings(**digest),
    )


def racing_builder(report_: GapReport):
    """A report builder slow enough that two replicas overlap, counting its calls."""
    calls: list[tuple[str, str | None]] = []
    lock = threading.Lock()

    def build(since: str, until: str | None) -> GapReport:
        with lock:
            calls.append((since, until))
        return report_

    return build, calls


async def test_two_replicas_racing_post_the_digest_once(database, tmp_path, slack):
    settings = settings_for(database, tmp_path, slack, slack_channel="COWNERS")
    FeedbackStore.open(database, tmp_path).close()  # migrate once, as the first serve does
    build, calls = racing_builder(report())
    now = dt.datetime(2026, 12, 1, 7, 0, tzinfo=dt.UTC)

    def replica(name: str):
        # each replica its own connection, as two processes have
        return post_digest(
            settings,
            lambda: FeedbackStore.open(database, tmp_path),
            build,
            now=now,
            by=name,
            directory=DIRECTORY,
        )

    outcomes = await asyncio.gather(*(replica(f"replica-{i}") for i in range(4)))
    assert sorted(o.posted for o in outcomes) == [False, False, False, True]
    posts = slack.of("chat.postMessage", "COWNERS")
    assert len(posts) == 1 and len(calls) == 1
    assert posts[0].args["unfurl_links"] in (False, "false", "0", 0)
    assert calls[0] == ("2026-11-23T08:00:00.000+00:00", "2026-11-30T08:00:00.000+00:00")
    # the next week is a new period; the same week again is not
    again = await post_digest(
        settings,
        lambda: FeedbackStore.open(database, tmp_path),
        build,
        now=now,
        by="late",
        directory=DIRECTORY,
    )
    later = await post_digest(
        settings,
        lambda: FeedbackStore.open(database, tmp_path),
        build,
        now=now + dt.timedelta(days=7),
        by="late",
        directory=DIRECTORY,
    )
    assert (again.posted, later.posted) == (False, True)
    assert len(slack.of("chat.postMessage", "COWNERS")) == 2
    store = FeedbackStore.open(database, tmp_path)
    assert [(p, bool(at)) for p, _, at in store.digests()] == [
        ("2026-11-30T08:00Z", True),
        ("2026-12-07T08:00Z", True),
    ]
    store.close()


async def test_a_failed_post_gives_the_period_back(database, tmp_path, slack):
    settings = settings_for(database, tmp_path, slack, slack_channel="COWNERS")
    build, _ = racing_builder(report())
    now = dt.datetime(2026, 12, 1, 7, 0, tzinfo=dt.UTC)
    slack.fail["chat.postMessage"] = "not_in_channel"
    with pytest.raises(Exception, match="not_in_channel"):
        await post_digest(
            settings,
            lambda: FeedbackStore.open(database, tmp_path),
            build,
            now=now,
            by="a",
            directory=DIRECTORY,
        )
    del slack.fail["chat.postMessage"]
    outcome = await post_digest(
        settings,
        lambda: FeedbackStore.open(database, tmp_path),
        build,
        now=now,
        by="b",
        directory=DIRECTORY,
    )
    assert outcome.posted
    assert len([c for c in slack.of("chat.postMessage") if c.result["ok"]]) == 1


async def test_serve_replicas_post_on_schedule_once(database, tmp_path, slack):
    """Two ``serve`` processes' schedulers over one database: one digest per period."""
    settings = settings_for(database, tmp_path, slack, slack_channel="COWNERS")
    build, calls = racing_builder(report())
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(2):
            ctx = scheduled(settings, build, DIRECTORY, check_every_s=0.05)(None)
            await ctx.__anext__()
            stack.push_async_callback(_finish, ctx)
        await slack.wait_for(lambda calls: slack.of("chat.postMessage"), timeout=10)
        await asyncio.sleep(0.5)  # many more checks on both
    assert len(slack.of("chat.postMessage", "COWNERS")) == 1 and len(calls) == 1


async def _finish(ctx) -> None:
    with contextlib.suppress(StopAsyncIteration):
        await ctx.__anext__()


async def test_teams_digest_is_a_proactive_message_with_the_bots_token(tmp_path):
    idp = LoopbackIdP({APP_ID: APP_PASSWORD}).start()
    connector = await FakeConnector(authorize=idp.accepts, members=TEAMS_CHANNELS).start()
    try:
        with idp.trusted():
            settings = Settings(
                data_dir=tmp_path,
                teams=TeamsSettings(
                    app_id=APP_ID,
                    app_password=SecretStr(APP_PASSWORD),
                    openid_metadata_url=idp.openid_metadata_url,
                    login_url=idp.login_url,
                ),
                digest=DigestSettings(
                    teams_conversation="19:owners@thread.tacv2",
                    teams_service_url=connector.url + "/",
                ),
            )
            build, _ = racing_builder(report())
            outcome = await post_digest(
                settings,
                lambda: FeedbackStore.open(settings.database, tmp_path),
                build,
                now=dt.datetime(2026, 12, 1, 7, 0, tzinfo=dt.UTC),
                directory=DIRECTORY,
            )
    finally:
        await connector.close()
        idp.close()
    assert outcome.posted and outcome.where == ["teams"]
    assert not [c for c in connector.calls if c.method == "401"]
    [message] = connector.messages("19:owners@thread.tacv2")
    card = message["attachments"][0]["content"]
    text = FakeConnector.card_text(card)
    assert "carry · vacation · days — 5 questions, 4 people" in text
    assert "](" not in text  # no link run


# --- per-owner digests ------------------------------------------------------------------------

HR, IT = "hr@northwind.example", "it-ops@northwind.example"


def owned_report() -> GapReport:
    """A report whose items belong to HR, to IT, to an owner with no route, and to nobody."""
    leave = DocRef("hr/leave.md", "Leave policy", "2026-01-10", "HR@Northwind.example ", OPEN)
    vpn = DocRef("it/vpn.md", "VPN guide", "2024-02-01", IT, OPEN)
    travel = DocRef(
        "finance/travel.md", "Travel " + HOSTILE, "2025-05-01", "finance@northwind.example", OPEN
    )
    orphan = DocRef("misc/notes.md", "Notes", "2025-01-01", acl=OPEN)

    def topic(name: str, count: int, *closest: DocRef) -> Topic:
        return Topic(name, name.split(" · "), count, count, [f"about {name}?"], list(closest))

    return GapReport(
        since="2026-11-23T08:00:00.000+00:00",
        until="2026-11-30T08:00:00.000+00:00",
        turns=40,
        unanswered=12,
        topics=[
            topic("carry · vacation", 4, leave),
            topic("vpn · token", 3, vpn),
            topic("per diem · travel", 2, travel),
            topic("parking", 2),  # no closest document: nobody's, so the default channel's
            topic("vpn · leave · remote", 1, vpn, leave),  # both owners see it
        ],
        outdated=[OutdatedAnswer("What is the VPN host?", "2026-11-25", [vpn])],
        stale=[StaleDocument(orphan, 5)],
        conflicts=[DocumentConflict(travel, leave, 2, "Travel vs Leave disagree on days")],
    )


def posted_text(slack: FakeSlackAPI, channel: str) -> str:
    [post] = slack.of("chat.postMessage", channel)
    return blocks_text(post.args["blocks"])


def route(database, tmp_path, owner: str, channel: str) -> None:
    store = FeedbackStore.open(database, tmp_path)
    try:
        store.set_route(DigestRoute(owner, "slack", channel))
    finally:
        store.close()


async def test_two_owners_get_disjoint_digests_and_the_rest_goes_to_the_default(
    database, tmp_path, slack
):
    settings = settings_for(database, tmp_path, slack, slack_channel="COWNERS")
    route(database, tmp_path, HR, "CHR")
    route(database, tmp_path, IT.upper(), "CIT")  # owners match without case
    build, calls = racing_builder(owned_report())
    outcome = await post_digest(
        settings,
        lambda: FeedbackStore.open(database, tmp_path),
        build,
        now=dt.datetime(2026, 12, 1, 7, 0, tzinfo=dt.UTC),
        by="r1",
        directory=DIRECTORY,
    )
    assert outcome.posted and len(calls) == 1
    assert sorted(outcome.where) == sorted(
        ["slack COWNERS", f"slack CHR for {HR}", f"slack CIT for {IT}"]
    )
    hr, it, rest = (posted_text(slack, c) for c in ("CHR", "CIT", "COWNERS"))
    [hr_post], [it_post] = slack.of("chat.postMessage", "CHR"), slack.of("chat.postMessage", "CIT")
    assert hr_post.args["blocks"][0]["text"]["text"].startswith(f"Footnote digest for {HR}")
    assert it_post.args["blocks"][0]["text"]["text"].startswith(f"Footnote digest for {IT}")
    # the notification is mrkdwn, where Slack would turn the address into a mailto link
    assert it_post.args["text"].startswith("Footnote digest for your documents ·")
    assert "@" not in hr_post.args["text"] and "@" not in it_post.args["text"]
    assert "carry · vacation" in hr and "vpn · token" not in hr
    assert "vpn · token" in it and "carry · vacation" not in it
    assert "vpn · leave · remote" in hr and "vpn · leave · remote" in it  # a topic of both
    assert "What is the VPN host?" in it and "What is the VPN host?" not in hr
    assert "5 of the 40 questions asked" in hr  # 4 + 1 of HR's topics
    # HR's side of a conflict with an unrouted owner: both HR and the default channel hear it
    assert "Travel vs Leave disagree" in hr and "Travel vs Leave disagree" in rest
    # the default digest: what no routed owner holds, as it was before routes
    assert "per diem · travel" in rest and "parking" in rest and "Notes — cited 5" in rest
    assert "carry · vacation" not in rest and "vpn · token" not in rest
    assert "12 the documents could not answer" in rest
    # a title stays data in an owner's digest too: every element plain text, no link
    elements = [
        e
        for b in hr_post.args["blocks"]
        if b["type"] == "rich_text"
        for s in b["elements"]
        for e in s["elements"]
    ]
    assert {e["type"] for e in elements} == {"text"} and HOSTILE.split(" <https")[0] in hr


async def test_owner_digests_are_posted_once_however_many_replicas_race(database, tmp_path, slack):
    settings = settings_for(database, tmp_path, slack, slack_channel="COWNERS")
    FeedbackStore.open(database, tmp_path).close()
    route(database, tmp_path, HR, "CHR")
    route(database, tmp_path, IT, "CIT")
    build, calls = racing_builder(owned_report())
    now = dt.datetime(2026, 12, 1, 7, 0, tzinfo=dt.UTC)
    outcomes = await asyncio.gather(
        *(
            post_digest(
                settings,
                lambda: FeedbackStore.open(database, tmp_path),
                build,
                now=now,
                by=f"r{i}",
                directory=DIRECTORY,
            )
            for i in range(4)
        )
    )
    assert sum(len(o.where) for o in outcomes) == 3  # three targets, each posted by one replica
    for channel in ("COWNERS", "CHR", "CIT"):
        assert len(slack.of("chat.postMessage", channel)) == 1, channel
    assert 1 <= len(calls) <= 3  # built only by replicas that won a claim
    store = FeedbackStore.open(database, tmp_path)
    try:
        assert [(p, bool(at)) for p, _, at in store.digests(f"owner:{HR}")] == [
            ("2026-11-30T08:00Z", True)
        ]
    finally:
        store.close()


async def test_a_removed_route_sends_the_owners_items_back_to_the_default(
    database, tmp_path, slack
):
    settings = settings_for(database, tmp_path, slack, slack_channel="COWNERS")
    route(database, tmp_path, HR, "CHR")
    build, _ = racing_builder(owned_report())
    week = dt.datetime(2026, 12, 1, 7, 0, tzinfo=dt.UTC)
    opener = lambda: FeedbackStore.open(database, tmp_path)  # noqa: E731
    await post_digest(settings, opener, build, now=week, by="r", directory=DIRECTORY)
    assert "carry · vacation" not in posted_text(slack, "COWNERS")
    store = opener()
    try:
        assert store.remove_route(" hr@NORTHWIND.example") is True
        assert store.remove_route(HR) is False
        assert store.routes() == []
    finally:
        store.close()
    slack.calls.clear()
    outcome = await post_digest(
        settings, opener, build, now=week + dt.timedelta(days=7), by="r", directory=DIRECTORY
    )
    assert outcome.where == ["slack COWNERS"]
    assert not slack.of("chat.postMessage", "CHR")
    assert "carry · vacation" in posted_text(slack, "COWNERS")


async def test_an_owners_failed_post_is_retried_without_posting_the_others_again(
    database, tmp_path, slack
):
    settings = settings_for(database, tmp_path, slack, slack_channel="COWNERS")
    route(database, tmp_path, HR, "CHR")
    build, _ = racing_builder(owned_report())
    now = dt.datetime(2026, 12, 1, 7, 0, tzinfo=dt.UTC)
    opener = lambda: FeedbackStore.open(database, tmp_path)  # noqa: E731
    slack.fail_in["CHR"] = "not_in_channel"
    with pytest.raises(Exception, match="not_in_channel"):
        await post_digest(settings, opener, build, now=now, by="a", directory=DIRECTORY)
    del slack.fail_in["CHR"]
    outcome = await post_digest(settings, opener, build, now=now, by="b", directory=DIRECTORY)
    assert outcome.where == [f"slack CHR for {HR}"]
    assert len(slack.of("chat.postMessage", "COWNERS")) == 1
    assert len([c for c in slack.of("chat.postMessage", "CHR") if c.result["ok"]]) == 1


async def test_an_owner_routed_to_teams_gets_their_share_as_a_proactive_message(tmp_path):
    idp = LoopbackIdP({APP_ID: APP_PASSWORD}).start()
    connector = await FakeConnector(authorize=idp.accepts, members=TEAMS_CHANNELS).start()
    try:
        with idp.trusted():
            settings = Settings(
                data_dir=tmp_path,
                teams=TeamsSettings(
                    app_id=APP_ID,
                    app_password=SecretStr(APP_PASSWORD),
                    openid_metadata_url=idp.openid_metadata_url,
                    login_url=idp.login_url,
                ),
                digest=DigestSettings(
                    teams_conversation="19:owners@thread.tacv2",
                    teams_service_url=connector.url + "/",
                ),
            )
            opener = lambda: FeedbackStore.open(settings.database, tmp_path)  # noqa: E731
            store = opener()
            store.set_route(DigestRoute(IT, "teams", "19:it-ops@thread.tacv2"))
            store.close()
            build, _ = racing_builder(owned_report())
            outcome = await post_digest(
                settings,
                opener,
                build,
                now=dt.datetime(2026, 12, 1, 7, 0, tzinfo=dt.UTC),
                directory=DIRECTORY,
            )
    finally:
        await connector.close()
        idp.close()
    assert sorted(outcome.where) == sorted(["teams", f"teams 19:it-ops@thread.tacv2 for {IT}"])
    [mine] = connector.messages("19:it-ops@thread.tacv2")
    [rest] = connector.messages("19:owners@thread.tacv2")
    it = FakeConnector.card_text(mine["attachments"][0]["content"])
    others = FakeConnector.card_text(rest["attachments"][0]["content"])
    assert f"Footnote digest for {IT}" in it and "vpn · token" in it and "carry" not in it
    assert "vpn · token" not in others and "carry · vacation" in others


def test_a_claim_made_before_routes_existed_survives_the_upgrade(database, tmp_path):
    """Schema 2 claimed periods with no route; after migration 3 that claim is the default's."""

    class StoreAtSchema2(FeedbackStore):
        MIGRATIONS = FeedbackStore.MIGRATIONS[:2]

    old = StoreAtSchema2.open(database, tmp_path)
    old._rows(
        "INSERT INTO digests (period, claimed_at, claimed_by, posted_at) VALUES (?, ?, ?, ?)",
        ("2026-11-30T08:00Z", "2026-11-30T08:00:01", "old-replica", "2026-11-30T08:00:02"),
    )
    old.close()
    store = FeedbackStore.open(database, tmp_path)
    try:
        assert store.schema_version() == 3
        assert store.digests() == [("2026-11-30T08:00Z", "old-replica", "2026-11-30T08:00:02")]
        assert not store.claim_digest("2026-11-30T08:00Z", "new")  # still posted: not again
        assert store.claim_digest("2026-11-30T08:00Z", "new", route=f"owner:{HR}")
    finally:
        store.close()


async def test_serve_posts_routed_owners_digests_with_no_default_channel(database, tmp_path, slack):
    """No FOOTNOTE_DIGEST__SLACK_CHANNEL: the schedulers still post each route's share, once."""
    settings = settings_for(database, tmp_path, slack)
    assert not settings.digest.enabled
    route(database, tmp_path, HR, "CHR")
    build, _ = racing_builder(owned_report())
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(2):
            ctx = scheduled(settings, build, DIRECTORY, check_every_s=0.05)(None)
            await ctx.__anext__()
            stack.push_async_callback(_finish, ctx)
        await slack.wait_for(lambda calls: slack.of("chat.postMessage"), timeout=10)
        await asyncio.sleep(0.5)
    assert [c.args["channel"] for c in slack.of("chat.postMessage")] == ["CHR"]
    assert "carry · vacation" in posted_text(slack, "CHR")
