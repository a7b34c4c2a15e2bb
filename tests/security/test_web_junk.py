"""The second attack's web findings (issue 23, items 8, 11 and 14), on the bot's real aiohttp app
on loopback with real Redis and SQLite, and no model (the admin pages' document library stands
in for the index).

- Item 8: junk got 500 — a 5,000-deep JSON body on ``/slack/events`` (RecursionError), and a
  multipart body without its boundary or a urlencoded body that is not UTF-8 on
  ``/admin/signin`` and ``/admin/signout``.
- Item 11: with the database away, a turn's x-ray said "Turn not found" (404) instead of 503.
- Item 14: ``/admin/signin`` took a cross-site POST (login CSRF: an attacker's page signs the
  victim's browser in to the attacker's admin session).
"""

from __future__ import annotations

import copy
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
from aiohttp.test_utils import TestClient, TestServer
from aiohttp.web import Application
from pydantic import SecretStr

from agent.traces import SqliteTraceStore
from bot.chat.conversation_state import ConversationState
from bot.identity.admin_access import SESSION_COOKIE, AdminAccess
from bot.identity.directory import FileDirectory
from bot.settings import (
    HANDBOOK_DIRECTORY,
    RedisSettings,
    ServerSettings,
    Settings,
    SlackSettings,
)
from bot.web.links import LinkSigner
from bot.web.server import build_app
from ingest.settings import DatabaseSettings
from testing.admin_data import Library
from testing.slack import SlackSender
from tests.e2e.conftest import free_port

SECRET = "second-attack-web-link-secret-9a4c2e71b05d"
SIGNING_SECRET = "second-attack-signing-secret"
PUBLIC = "http://127.0.0.1:3999"  # the URL admins' sign-in links name
REDIS_URL = "redis://127.0.0.1:6379/0"


@dataclass
class Site:
    client: TestClient
    access: AdminAccess
    slack: SlackSender
    app: Application

    def token(self, user: str = "sam") -> str:
        return urlsplit(self.access.link(user)).query.split("t=", 1)[1]

    async def post(self, path: str, body: bytes, content_type: str, **headers: str) -> int:
        r = await self.client.post(
            path,
            data=body,
            headers={"Content-Type": content_type, **headers},
            allow_redirects=False,
        )
        await r.read()
        return r.status

    async def sign_in(self) -> None:
        r = await self.client.post(
            "/admin/signin",
            data={"t": self.token()},
            headers={"Origin": PUBLIC},
            allow_redirects=False,
        )
        assert r.status == 303, await r.text()


async def site(
    tmp_path, database: DatabaseSettings | None = None, slack_api: str | None = None
) -> AsyncIterator[Site]:
    """The bot's app with Slack on (its Web API at ``slack_api``), admin pages, no model."""
    settings = Settings(
        data_dir=tmp_path,
        database=database or DatabaseSettings(),
        redis=RedisSettings(
            url=REDIS_URL, key_prefix=f"footnote-test-junk-{uuid.uuid4().hex[:8]}:"
        ),
        server=ServerSettings(public_url=PUBLIC, link_secret=SecretStr(SECRET)),
        slack=SlackSettings(
            bot_token=SecretStr("xoxb-test"),
            signing_secret=SecretStr(SIGNING_SECRET),
            # by default nothing is there: no listener runs
            api_url=slack_api or f"http://127.0.0.1:{free_port()}/api/",
        ),
    )
    directory = copy.deepcopy(FileDirectory.load(HANDBOOK_DIRECTORY))
    state = ConversationState.from_settings(settings.redis)
    app = build_app(
        settings,
        SimpleNamespace(directory=directory),  # type: ignore[arg-type]
        Library(),
        state,
        SqliteTraceStore(tmp_path / "traces.sqlite"),
    )
    client = TestClient(TestServer(app))
    await client.start_server()
    access = AdminAccess(
        key=LinkSigner.from_settings(settings).derive("admin"),
        public_url=PUBLIC,
        directory=directory,
        admin_groups=settings.admin_groups,
        redis=state.client,
        redis_prefix=settings.redis.key_prefix,
    )
    slack = SlackSender(client.session, str(client.make_url("/slack/events")), SIGNING_SECRET)
    try:
        yield Site(client, access, slack, app)
    finally:
        await client.close()
        await state.close()


@pytest.fixture
async def web(tmp_path) -> AsyncIterator[Site]:
    async for s in site(tmp_path):
        yield s


# -- item 8: junk is a 4xx --------------------------------------------------------------------

DEEP = 5000
DEEP_JSON = '{"type": "event_callback", "event": ' + "[" * DEEP + "]" * DEEP + "}"
DEEP_OBJECT = '{"a": ' * DEEP + "1" + "}" * DEEP


@pytest.mark.parametrize("body", [DEEP_JSON, DEEP_OBJECT], ids=["deep list", "deep object"])
@pytest.mark.parametrize("signed", [True, False], ids=["signed", "unsigned"])
async def test_deeply_nested_json_on_slack_events_is_a_400(web, body, signed):
    """It was a RecursionError inside the shape check: HTTP 500. A nested interactivity
    ``payload`` goes the same way."""
    if signed:
        status, _ = await web.slack.post(body)
    else:
        status = await web.post("/slack/events", body.encode(), "application/json")
    assert status == 400
    form = "payload=" + "%5B" * DEEP + "%5D" * DEEP
    status, _ = await web.slack.post(form, "application/x-www-form-urlencoded")
    assert status == 400


# Bodies no browser form sends; each was HTTP 500 (ValueError, InvalidHeader, UnicodeDecodeError,
# LookupError out of ``request.post()``).
JUNK_FORMS = {
    "multipart, junk body": (b"junk", "multipart/form-data; boundary=x"),
    "multipart, junk part": (b"--x\r\njunk\r\n", "multipart/form-data; boundary=x"),
    "multipart, no boundary": (b"--x\r\n", "multipart/form-data"),
    "urlencoded, not UTF-8": (b"t=\xff\xfe", "application/x-www-form-urlencoded"),
    "urlencoded, unknown charset": (b"t=a", "application/x-www-form-urlencoded; charset=nope"),
}


@pytest.mark.parametrize("case", list(JUNK_FORMS), ids=list(JUNK_FORMS))
async def test_junk_forms_on_signin_and_signout_are_a_400(web, case):
    body, content_type = JUNK_FORMS[case]
    assert await web.post("/admin/signin", body, content_type, Origin=PUBLIC) == 400
    await web.sign_in()
    assert await web.post("/admin/signout", body, content_type, Origin=PUBLIC) == 400
    page = await web.client.get("/admin", allow_redirects=False)
    assert page.status == 200  # the junk signed nobody out


# -- item 14: only our own pages may POST ----------------------------------------------------

CROSS_SITE = {
    "another site": {"Origin": "https://evil.example"},
    "another port": {"Origin": "http://127.0.0.1:4000"},
    "another scheme": {"Origin": "https://127.0.0.1:3999"},
    "a look-alike host": {"Origin": "http://127.0.0.1.evil.example:3999"},
    "an opaque origin": {"Origin": "null"},
    "junk": {"Origin": "http://[::1"},
    "referer of another site": {"Referer": "https://evil.example/footnote-admin"},
    "neither header": {},
}


@pytest.mark.parametrize("case", list(CROSS_SITE), ids=list(CROSS_SITE))
async def test_a_cross_site_signin_is_refused_and_leaves_the_link_unspent(web, case):
    token = web.token()
    r = await web.client.post(
        "/admin/signin", data={"t": token}, headers=CROSS_SITE[case], allow_redirects=False
    )
    assert r.status == 403, await r.text()
    assert SESSION_COOKIE not in r.cookies and "Set-Cookie" not in r.headers
    assert "not sent from the Footnote admin page" in await r.text()
    # the link is not spent: its owner can still use it from our own page
    ok = await web.client.post(
        "/admin/signin", data={"t": token}, headers={"Origin": PUBLIC}, allow_redirects=False
    )
    assert ok.status == 303 and SESSION_COOKIE in ok.cookies


@pytest.mark.parametrize(
    "headers",
    [{"Origin": PUBLIC}, {"Origin": "HTTP://127.0.0.1:3999"}, {"Referer": PUBLIC + "/admin/x"}],
    ids=["origin", "origin in capitals", "referer only"],
)
async def test_a_signin_from_our_own_page_works(web, headers):
    r = await web.client.post(
        "/admin/signin", data={"t": web.token()}, headers=headers, allow_redirects=False
    )
    assert r.status == 303 and r.headers["Location"] == "/admin"


async def test_signout_from_another_site_is_refused(web):
    await web.sign_in()
    page = await web.client.get("/admin")
    csrf = (await page.text()).split('name="csrf" value="', 1)[1].split('"', 1)[0]
    r = await web.client.post(
        "/admin/signout", data={"csrf": csrf}, headers={"Origin": "https://evil.example"}
    )
    assert r.status == 403
    assert (await web.client.get("/admin", allow_redirects=False)).status == 200


async def test_pages_send_a_referrer_policy_under_which_our_own_posts_carry_their_origin(web):
    """Under ``no-referrer`` a browser sends ``Origin: null`` with a same-origin form POST
    (Fetch, "append a request Origin header"), which the check above must refuse; ``same-origin``
    sends the real origin to us and no Referer (with the link's token) to anyone else."""
    r = await web.client.get(f"/admin/signin?t={web.token()}")
    assert r.status == 200
    assert r.headers["Referrer-Policy"] == "same-origin"


# -- item 11: the database away is a 503 -----------------------------------------------------


async def test_a_turn_xray_with_the_database_away_is_a_503_not_a_404(tmp_path):
    closed = f"postgresql://postgres@127.0.0.1:{free_port()}/test"
    async for web in site(tmp_path, DatabaseSettings(url=SecretStr(closed))):
        await web.sign_in()
        started = time.monotonic()
        r = await web.client.get("/admin/turns/t-0123456789", allow_redirects=False)
        text = await r.text()
        assert r.status == 503, text
        assert "The database is not answering" in text and "Turn not found" not in text
        assert time.monotonic() - started < 15
        for path in ("/admin/turns", "/admin/feedback"):
            assert (await web.client.get(path, allow_redirects=False)).status == 503


async def test_an_unknown_turn_with_the_database_up_is_still_a_404(web):
    await web.sign_in()
    r = await web.client.get("/admin/turns/t-unknown", allow_redirects=False)
    assert r.status == 404 and "Turn not found" in await r.text()


def test_deep_bodies_are_what_they_claim():
    with pytest.raises(RecursionError):
        json.loads(DEEP_JSON)
