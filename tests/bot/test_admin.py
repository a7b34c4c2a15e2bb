"""``/admin`` over HTTP on loopback: who gets in (signed link → session cookie), and what each page
shows, escaped, on a real SQLite record and real Redis."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import re
import time
import uuid
from collections.abc import AsyncIterator
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
import redis
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from agent.traces import RedisTraceStore, SqliteTraceStore
from agent.turns import Answer, Turn
from bot.chat.conversation import Conversation, Member, Question
from bot.chat.conversation_state import ConversationState
from bot.identity.admin_access import (
    ADMIN_REFUSED,
    SESSION_COOKIE,
    AdminAccess,
    is_admin_request,
)
from bot.identity.directory import FileDirectory
from bot.reports.feedback import CitedDocument, FeedbackRecord, FeedbackStore, TurnRecord
from bot.settings import HANDBOOK_DIRECTORY, RedisSettings, ServerSettings, Settings
from bot.web.links import LinkSigner
from bot.web.server import build_app
from ingest.settings import DatabaseSettings
from ingest.sources.state import SyncState
from testing.admin_data import DRAFT, LEAVE, SALARY, Library, put_trace, seed, steps
from tests.bot.test_cases import Shown

SECRET = "admin-page-test-link-secret-5b7e1d93c0a84f26"
REDIS_URL = "redis://127.0.0.1:6379/0"


def make_settings(tmp_path, public_url: str = "http://127.0.0.1:3999") -> Settings:
    return Settings(
        data_dir=tmp_path,
        redis=RedisSettings(
            url=REDIS_URL, key_prefix=f"footnote-test-admin-{uuid.uuid4().hex[:8]}:"
        ),
        server=ServerSettings(public_url=public_url, link_secret=SecretStr(SECRET)),
    )


@dataclasses.dataclass
class Admin:
    client: TestClient
    settings: Settings
    store: FeedbackStore
    traces: SqliteTraceStore
    directory: FileDirectory
    access: AdminAccess  # the same keys as the server's: mints links as the bot would

    def link(self, user: str) -> str:
        url = urlsplit(self.access.link(user))
        return f"{url.path}?{url.query}"

    async def sign_in(self, user: str = "sam") -> None:
        token = self.link(user).split("t=", 1)[1]
        r = await self.client.post("/admin/signin", data={"t": token}, allow_redirects=False)
        assert r.status == 303, await r.text()

    async def page(self, path: str, status: int = 200) -> str:
        r = await self.client.get(path, allow_redirects=False)
        text = await r.text()
        assert r.status == status, text
        return text


async def start(tmp_path, public_url: str = "http://127.0.0.1:3999") -> AsyncIterator[Admin]:
    settings = make_settings(tmp_path, public_url)
    directory = copy.deepcopy(FileDirectory.load(HANDBOOK_DIRECTORY))
    state = ConversationState.from_settings(settings.redis)
    traces = SqliteTraceStore(tmp_path / "traces.sqlite")
    app = build_app(
        settings,
        SimpleNamespace(directory=directory),  # type: ignore[arg-type]
        Library(),
        state,
        traces,
    )
    store = FeedbackStore.open(DatabaseSettings(), tmp_path)  # migrated before the app starts
    # as a browser on our own pages: every form POST carries the page's origin
    client = TestClient(TestServer(app), headers={"Origin": public_url})
    await client.start_server()
    access = AdminAccess(
        key=LinkSigner.from_settings(settings).derive("admin"),
        public_url=public_url,
        directory=directory,
        admin_groups=settings.admin_groups,
        redis=state.client,
        redis_prefix=settings.redis.key_prefix,
    )
    try:
        yield Admin(client, settings, store, traces, directory, access)
    finally:
        await client.close()
        store.close()
        await state.close()


@pytest.fixture
async def admin(tmp_path) -> AsyncIterator[Admin]:
    async for a in start(tmp_path):
        yield a


# ── access ───────────────────────────────────────────────────────────────────────────────────

PAGES = ["/admin", "/admin/turns", "/admin/turns/x", "/admin/feedback", "/admin/sources"]


@pytest.mark.parametrize("path", PAGES)
async def test_without_a_session_every_page_is_the_sign_in_page(admin, path):
    text = await admin.page(path, 401)
    assert "Sign in" in text and "direct message" in text
    assert "<table" not in text and "Overview</a>" not in text


async def test_an_admins_link_opens_a_session_once(admin):
    path = admin.link("sam")
    landing = await admin.page(path)  # a link preview fetching the URL does not spend it
    assert "Continue as <strong>Sam Admin</strong>" in landing
    token = path.split("t=", 1)[1]
    r = await admin.client.post("/admin/signin", data={"t": token}, allow_redirects=False)
    assert r.status == 303 and r.headers["Location"] == "/admin"
    cookie = r.cookies[SESSION_COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Strict" and cookie["path"] == "/admin"
    assert not cookie["secure"]  # the public URL is http here
    assert int(cookie["max-age"]) == 8 * 3600
    assert "Overview" in await admin.page("/admin")
    again = await admin.client.post("/admin/signin", data={"t": token}, allow_redirects=False)
    assert again.status == 410 and "used already" in await again.text()


async def test_the_session_cookie_is_secure_when_the_public_url_is_https(tmp_path):
    async for a in start(tmp_path, "https://footnote.example"):
        token = a.link("sam").split("t=", 1)[1]
        r = await a.client.post("/admin/signin", data={"t": token}, allow_redirects=False)
        assert r.status == 303 and r.cookies[SESSION_COOKIE]["secure"]


async def test_a_non_admins_link_is_refused(admin):
    path = admin.link("alice")  # in the directory, not in an admin group
    assert "admin group" in await admin.page(path, 403)
    r = await admin.client.post(
        "/admin/signin", data={"t": path.split("t=", 1)[1]}, allow_redirects=False
    )
    assert r.status == 403 and SESSION_COOKIE not in r.cookies
    await admin.page("/admin", 401)


async def test_expired_forged_and_junk_links_are_4xx_with_a_page(admin):
    old = admin.access
    stale = AdminAccess(
        key=old._key,
        public_url=old.public_url,
        directory=admin.directory,
        admin_groups=["admins"],
        redis=old.redis,
        clock=lambda: time.time() - 3600,
    )
    expired = urlsplit(stale.link("sam"))
    assert "expired" in await admin.page(f"{expired.path}?{expired.query}", 410)
    other = AdminAccess(
        key=b"x" * 32,
        public_url=old.public_url,
        directory=admin.directory,
        admin_groups=["admins"],
        redis=old.redis,
    )
    forged = urlsplit(other.link("sam"))
    assert "not valid" in await admin.page(f"{forged.path}?{forged.query}", 400)
    good = admin.link("sam")
    tampered = good[:-3] + ("AAA" if not good.endswith("AAA") else "BBB")
    await admin.page(tampered, 400)
    for junk in ["/admin/signin", "/admin/signin?t=", "/admin/signin?t=%ff%00", good + "&t=x"]:
        text = await admin.page(junk, 400)
        assert "<h1>Link not valid</h1>" in text
    r = await admin.client.post("/admin/signin", data={"t": "junk"}, allow_redirects=False)
    assert r.status == 400
    # a session cookie is no sign-in link, nor the other way round
    cookie = admin.access.session_cookie("sam")
    await admin.page(f"/admin/signin?t={cookie}", 400)
    admin.client.session.cookie_jar.update_cookies({SESSION_COOKIE: good.split("t=", 1)[1]})
    await admin.page("/admin", 401)


async def test_an_expired_session_cookie_is_a_sign_in_page(admin):
    stale = AdminAccess(
        key=admin.access._key,
        public_url=admin.access.public_url,
        directory=admin.directory,
        admin_groups=["admins"],
        redis=admin.access.redis,
        clock=lambda: time.time() - 8 * 3600 - 60,
    )
    admin.client.session.cookie_jar.update_cookies({SESSION_COOKIE: stale.session_cookie("sam")})
    await admin.page("/admin", 401)
    fresh = admin.access.session_cookie("sam")
    admin.client.session.cookie_jar.update_cookies({SESSION_COOKIE: fresh})
    await admin.page("/admin", 200)


async def test_leaving_the_admin_group_ends_the_session_at_the_next_click(admin):
    await admin.sign_in("sam")
    await admin.page("/admin/turns")
    sam = admin.directory.people["sam"]
    admin.directory.people["sam"] = dataclasses.replace(sam, groups=("engineering",))
    assert "not in an admin group" in await admin.page("/admin/turns", 403)


async def test_sign_out_needs_the_csrf_token(admin):
    await admin.sign_in()
    r = await admin.client.post("/admin/signout", data={}, allow_redirects=False)
    assert r.status == 403
    r = await admin.client.post("/admin/signout", data={"csrf": "0" * 32}, allow_redirects=False)
    assert r.status == 403
    await admin.page("/admin")  # still signed in
    token = re.search(r'name="csrf" value="([0-9a-f]{32})"', await admin.page("/admin"))
    assert token
    copied = admin.client.session.cookie_jar.filter_cookies(admin.client.make_url("/admin"))
    r = await admin.client.post("/admin/signout", data={"csrf": token[1]}, allow_redirects=False)
    assert r.status == 200 and r.cookies[SESSION_COOKIE].value == ""
    await admin.page("/admin", 401)
    # the cookie copied before signing out is dead too
    admin.client.session.cookie_jar.update_cookies(
        {SESSION_COOKIE: copied[SESSION_COOKIE].value}, admin.client.make_url("/admin")
    )
    assert "session has ended" in await admin.page("/admin", 401)


async def test_pages_forbid_framing_scripts_from_elsewhere_and_referrers(admin):
    await admin.sign_in()
    r = await admin.client.get("/admin/turns")
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert (
        r.headers["Referrer-Policy"] == "same-origin" and r.headers["Cache-Control"] == "no-store"
    )
    css = await admin.client.get("/admin/static/admin.css")
    assert css.status == 200 and "font" in await css.text()
    assert (await admin.client.get("/admin/static/..%2Fadmin.py")).status == 404


# ── the DM that asks for a link ──────────────────────────────────────────────────────────────


@pytest.mark.parametrize("text", ["admin", " Admin ", "/footnote admin"])
def test_what_asks_for_the_admin_link(text):
    assert is_admin_request(text)


@pytest.mark.parametrize("text", ["admin rights for bob?", "who is the admin", ""])
def test_what_does_not(text):
    assert not is_admin_request(text)


async def test_admin_in_a_dm_gets_a_working_link_and_others_a_refusal(admin):
    settings = admin.settings
    state = ConversationState.from_settings(settings.redis)
    chat = Conversation(
        Library(),  # type: ignore[arg-type]
        state,
        admin.directory,
        LinkSigner.from_settings(settings),
        platform="slack",
        private_chat="direct message",
        admin=admin.access,
    )
    try:
        shown = Shown()
        await chat.ask(Question(Member(("U0SAM0001",)), "admin", "slack:T:D1", "dm"), shown)
        (said,) = shown.said
        link = re.search(r"https?://\S+", said)
        assert link and "10 minutes" in said
        url = urlsplit(link[0])
        assert "Continue as" in await admin.page(f"{url.path}?{url.query}")
        refused = Shown()
        await chat.ask(Question(Member(("U0ALICE01",)), "admin", "slack:T:D2", "dm"), refused)
        assert refused.said == [ADMIN_REFUSED] and not refused.answers
        in_channel = Shown()
        await chat.ask(
            Question(Member(("U0SAM0001",)), "admin", "slack:T:C1", "channel"), in_channel
        )
        assert "http" not in " ".join(in_channel.said) and not in_channel.answers
    finally:
        await state.close()


# ── pages ────────────────────────────────────────────────────────────────────────────────────

EVIL = "<script>alert('x')</script> & <b>bold</b>"


def turn(store, question, status="answered", cited=(LEAVE,), user="alice", at=None, **kw):
    t = TurnRecord(
        turn_id=kw.pop("turn_id", uuid.uuid4().hex[:12]),
        platform="slack",
        conversation="slack:T:D1",
        user_id=user,
        groups=("hr",),
        channel_kind="dm",
        question=question,
        status=status,
        answer=kw.pop("answer", "Five days carry over [1]."),
        citations=tuple(CitedDocument(d, d.rsplit("/", 1)[-1]) for d in cited),
        **({"at": at} if at else {}),
    )
    store.record_turn(t)
    return t


async def test_empty_states(admin):
    await admin.sign_in()
    assert "No questions yet" in await admin.page("/admin")
    assert "No questions yet" in await admin.page("/admin/turns")
    assert "No feedback yet" in await admin.page("/admin/feedback")
    assert "No sources configured" in await admin.page("/admin/sources")
    assert "No record of this turn" in await admin.page("/admin/turns/nope", 404)


async def test_turns_list_escapes_filters_and_sorts(admin):
    await admin.sign_in()
    evil = turn(admin.store, EVIL, "unknown", cited=())
    turn(admin.store, "How many vacation days carry over?", "answered")
    put_trace(
        admin.traces,
        Turn("alice", EVIL, ("hr",), turn_id=evil.turn_id),
        Answer("x", "unknown", trace=steps(LEAVE)),
        1234.0,
        dt.datetime.now(dt.UTC),
    )
    text = await admin.page("/admin/turns")
    assert "<script>alert" not in text and "<b>bold" not in text
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in text
    assert f'href="/admin/turns/{evil.turn_id}"' in text and "1.2 s" in text
    only_unknown = await admin.page("/admin/turns?status=unknown")
    assert "alert" in only_unknown and "vacation" not in only_unknown
    by_text = await admin.page("/admin/turns?q=VACATION")
    assert "vacation" in by_text and "alert" not in by_text
    assert "No turns match" in await admin.page("/admin/turns?q=nothing-like-this")
    asc = await admin.page("/admin/turns?sort=question&dir=asc")
    assert asc.index("&lt;script") < asc.index("How many")  # "<" sorts before "h"
    desc = await admin.page("/admin/turns?sort=question&dir=desc")
    assert desc.index("How many") < desc.index("&lt;script")
    assert 'aria-sort="descending"' in desc
    # junk in the query is ignored, never reflected as markup
    junk = await admin.page("/admin/turns?status=<x>&sort=<y>&q=%22%3E%3Cimg")
    assert "<img" not in junk and "<x>" not in junk


async def test_the_xray_shows_rounds_queries_passages_reasons_timings_and_fallbacks(admin):
    await admin.sign_in()  # sam: admins → may read LEAVE (everyone) and DRAFT (admins)
    t = turn(admin.store, "How many days carry over?", cited=(LEAVE,))
    trace = steps(LEAVE, fallback="llm timeout after 20.0 s", rounds=2, dropped_sentence=EVIL)
    put_trace(
        admin.traces,
        Turn("alice", t.question, ("hr",), turn_id=t.turn_id),
        Answer(t.answer, "answered", trace=trace),
        250.0,
        dt.datetime.now(dt.UTC),
    )
    admin.store.record_feedback(FeedbackRecord(t.turn_id, "alice", "down", "outdated", EVIL))
    text = await admin.page(f"/admin/turns/{t.turn_id}")
    for expected in [
        "Five days carry over [1].",  # the answer: sam may read every cited document
        "leave carry over",
        "carry-over days expiry",  # round 2's rewritten query
        f"{LEAVE}#3",  # kept
        f"{DRAFT}#1: off-topic: covers 0/3 key terms",  # dropped, with its reason
        "llm timeout after 20.0 s",
        "22 ms",
        "250 ms",
        "Outdated",
        "&lt;script&gt;alert",  # the check step's dropped sentence and the comment, as text
    ]:
        assert expected in text, expected
    assert "<script>alert" not in text


async def test_the_xray_hides_what_the_admin_may_not_read(admin):
    await admin.sign_in()  # sam is not in hr: the salary bands are not theirs to read
    t = turn(admin.store, "What is the L4 band?", cited=(SALARY,), answer="L4 is 90-110k [1].")
    put_trace(
        admin.traces,
        Turn("alice", t.question, ("hr",), turn_id=t.turn_id),
        Answer(t.answer, "answered", trace=steps(SALARY, rounds=2, dropped_sentence="L5 is 120k.")),
        90.0,
        dt.datetime.now(dt.UTC),
    )
    text = await admin.page(f"/admin/turns/{t.turn_id}")
    assert "90-110k" not in text and "L5 is 120k" not in text and SALARY not in text
    assert "your groups may not read" in text
    assert "carry-over days expiry" not in text  # a rewrite may carry words from the passages
    assert "leave carry over" in text and "22 ms" in text  # the shape stays
    assert "a passage you may not read" in text


async def test_the_xray_without_a_trace_says_so(admin):
    await admin.sign_in()
    t = turn(admin.store, "Old question?")
    text = await admin.page(f"/admin/turns/{t.turn_id}")
    assert "No trace kept for this turn" in text and "Five days carry over" in text


async def test_traces_are_found_in_redis_too(admin):
    client = redis.Redis.from_url(REDIS_URL)
    key = admin.settings.redis.key_prefix + "traces"
    store = RedisTraceStore(client, key=key)
    try:
        turns = [Turn("alice", f"q{i}", ("hr",)) for i in range(7)]
        for t in turns:
            store.save(t, Answer("a", "answered", trace=steps(LEAVE)), 42.0)
        found = store.find(turns[1].turn_id, page=3)  # past the first page
        assert found and found["question"] == "q1" and found["ms"] == 42.0
        assert store.find("nope", page=3) is None
    finally:
        client.delete(key)
        client.close()


async def test_feedback_filters_by_vote_and_reason_and_escapes(admin):
    await admin.sign_in()
    a = turn(admin.store, "Question A?")
    b = turn(admin.store, "Question B?")
    c = turn(admin.store, "Question C?")
    admin.store.record_feedback(FeedbackRecord(a.turn_id, "alice", "down", "outdated", EVIL))
    admin.store.record_feedback(FeedbackRecord(b.turn_id, "alice", "down", "wrong", ""))
    admin.store.record_feedback(FeedbackRecord(c.turn_id, "alice", "up", "", ""))
    text = await admin.page("/admin/feedback")
    assert all(q in text for q in ("Question A?", "Question B?", "Question C?"))
    assert "<script>alert" not in text and "&lt;script&gt;" in text
    down = await admin.page("/admin/feedback?vote=down")
    assert "Question A?" in down and "Question B?" in down and "Question C?" not in down
    outdated = await admin.page("/admin/feedback?vote=down&reason=outdated")
    assert "Question A?" in outdated and "Question B?" not in outdated
    assert "No feedback matches" in await admin.page("/admin/feedback?reason=other")


async def test_sources_show_sync_state_and_errors(admin):
    await admin.sign_in()
    state = SyncState.open(admin.settings.database, admin.settings.data_dir)
    try:
        state.add_source("intranet", "web", {"url": "https://intranet.example"})
        state.record("intranet", "c1", {"a": ("v1", "doc-a"), "b": ("v1", "doc-b")}, [])
        state.finish("intranet", 1, EVIL)
    finally:
        state.close()
    text = await admin.page("/admin/sources")
    assert "intranet" in text and ">2<" in text and "just now" in text
    assert "&lt;script&gt;" in text and "<script>alert" not in text
    assert "No owner has a digest of their own" in text


async def test_sources_list_the_owners_digest_routes(admin):
    from bot.reports.feedback import DigestRoute

    await admin.sign_in()
    admin.store.set_route(DigestRoute("HR@Northwind.example", "slack", "C0HR12345"))
    admin.store.set_route(DigestRoute("<b>it</b>@northwind.example", "teams", "19:it@thread.tacv2"))
    text = await admin.page("/admin/sources")
    assert "Weekly digest routes" in text and "No owner has a digest" not in text
    assert "hr@northwind.example" in text and "<code>C0HR12345</code>" in text
    assert "&lt;b&gt;it&lt;/b&gt;@northwind.example" in text and "<b>it</b>" not in text


async def test_overview_draws_a_chart_per_measure(admin):
    await admin.sign_in()
    seed(admin.store, admin.traces, days=10)
    text = await admin.page("/admin")
    assert text.count("<svg") >= 4
    for caption in ("Questions per day", "Outcome", "Feedback", "Latency"):
        assert caption in text
    assert 'class="s-answered"' in text and 'class="s-down"' in text
    assert 'polyline class="s-p95"' in text
    assert "No questions yet" not in text
