"""End-to-end fixtures: the sample handbook (ingested once per session in ``tests/conftest.py``),
the real assistant over it, real Redis (a key prefix per run), and the bot's aiohttp app on
loopback talking to fakes of Slack's Web API, the Bot Framework connector and Microsoft's identity
services (``testing/idp.py``): Teams runs with real token checks, both ways."""

from __future__ import annotations

import contextlib
import copy
import json
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import aiohttp
import pytest
import redis

from agent.actions import RedisPendingActions
from agent.assistant import build_assistant
from bot.chat.conversation_state import ConversationState
from bot.settings import (
    ChannelSettings,
    RedisSettings,
    ScimSettings,
    ServerSettings,
    Settings,
    SlackSettings,
    TeamsSettings,
)
from bot.web.server import AgentThread, build_app
from testing.idp import LoopbackIdP
from testing.recorder import start_app
from testing.slack import BOT_USER_ID, FakeSlackAPI, SlackSender
from testing.teams import FakeConnector

REDIS_URL = "redis://127.0.0.1:6379/0"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
LINK_SECRET = "e2e-link-secret-0123456789abcdefghijklmnop"  # >= 32 bytes
TEAMS_APP_ID = "5e0c5e7a-3c1d-4f43-9a63-0f00f00f00f0"  # the Azure Bot's Microsoft App ID
TEAMS_APP_PASSWORD = "client-secret-for-tests"

# Slack users and channels the fake Web API knows (ids match examples/directory.yaml).
SLACK_USERS = {
    "U0ALICE01": {"email": "alice@northwind.example"},
    "U0BOB0001": {"email": "bob@northwind.example"},
    # alice under an id the directory does not know: found by her e-mail
    "U0NEWALIC": {"email": "Alice@Northwind.example"},
    "U0STRANGR": {"email": "stranger@elsewhere.example"},
    "U0OTHRBOT": {"email": "", "is_bot": True},
    BOT_USER_ID: {"email": "", "is_bot": True},
}
SLACK_CHANNELS = {
    "C0HRENG01": ["U0ALICE01", "U0BOB0001", BOT_USER_ID, "U0OTHRBOT"],  # hr + engineering
    "C0HRONLY1": ["U0ALICE01", BOT_USER_ID],
}


@pytest.fixture(scope="session")
def redis_prefix() -> str:
    prefix = f"footnote-test-{uuid.uuid4().hex[:8]}:"
    yield prefix
    client = redis.Redis.from_url(REDIS_URL)
    keys = list(client.scan_iter(match=prefix + "*", count=1000))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture(scope="session")
def handbook(handbook_deps):
    """The sample handbook, ingested once for the whole session (``tests/conftest.py``)."""
    return handbook_deps


@pytest.fixture(scope="session")
def assistant(handbook, redis_prefix):
    """The real assistant over the handbook; pending tickets in real Redis."""
    pending = RedisPendingActions(redis.Redis.from_url(REDIS_URL), prefix=redis_prefix + "pending:")
    return build_assistant(handbook, pending=pending)


def free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def redis_server(*options: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """A redis-server of our own on a free port (the machine's Redis is left alone): the process
    and its URL. Extra ``options`` go on its command line (e.g. ``--maxclients 8``)."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            *options,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 10
    try:
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        client.close()
        yield proc, f"redis://127.0.0.1:{port}/0"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(5)


@pytest.fixture
def own_redis():
    with redis_server() as server:
        yield server


@dataclass
class Harness:
    url: str  # the bot's base URL
    settings: Settings
    state: ConversationState
    slack: FakeSlackAPI
    connector: FakeConnector
    send: SlackSender
    session: aiohttp.ClientSession
    app: aiohttp.web.Application
    idp: LoopbackIdP

    async def get(self, url: str) -> tuple[int, str]:
        async with self.session.get(url) as resp:
            return resp.status, await resp.text()

    async def teams(self, activity: dict) -> tuple[int, str]:
        """POST an activity as the Bot Framework does: with a token signed for its serviceUrl."""
        token = self.idp.mint(service_url=activity.get("serviceUrl"))
        return await self.teams_raw(
            json.dumps(activity), headers={"Authorization": f"Bearer {token}"}
        )

    async def teams_raw(
        self, body: str | bytes, *, headers: dict | None = None, content_type="application/json"
    ) -> tuple[int, str]:
        """POST any body to /api/messages, with only the headers given."""
        async with self.session.post(
            self.url + "/api/messages",
            data=body,
            headers={"Content-Type": content_type, **(headers or {})},
        ) as resp:
            return resp.status, await resp.text()


@contextlib.asynccontextmanager
async def running_bot(
    handbook,
    assistant,
    prefix: str,
    *,
    redis_url: str = REDIS_URL,
    rate_per_minute: int = 1000,
    unknown_members: str = "public",
    teams: TeamsSettings | None = None,
    teams_changes: dict | None = None,
    thread_followups: bool = False,
    scim: ScimSettings | None = None,
) -> AsyncIterator[Harness]:
    """The bot on loopback with its fakes. Teams checks tokens against ``harness.idp`` and the
    connector wants the IdP's tokens. ``teams_changes`` alters some of those Teams settings;
    ``teams`` replaces them all (then the connector takes any call). ``thread_followups`` turns
    on ``FOOTNOTE_SLACK__THREAD_FOLLOWUPS``. ``scim`` turns on ``/scim/v2``, and the directory
    is then what it was sent (in the handbook's data dir), not the directory file."""
    async with contextlib.AsyncExitStack() as stack:
        slack = await FakeSlackAPI(SLACK_USERS, SLACK_CHANNELS).start()
        stack.push_async_callback(slack.close)
        idp = LoopbackIdP({TEAMS_APP_ID: TEAMS_APP_PASSWORD}).start()
        stack.callback(idp.close)
        stack.enter_context(idp.trusted())
        connector = await FakeConnector(authorize=idp.accepts if teams is None else None).start()
        stack.push_async_callback(connector.close)
        port = free_port()
        settings = Settings(
            data_dir=handbook.settings.data_dir,
            slack=SlackSettings(
                bot_token="xoxb-test-token",
                signing_secret=SIGNING_SECRET,
                api_url=slack.api_url,
                thread_followups=thread_followups,
            ),
            teams=teams
            or TeamsSettings(
                app_id=TEAMS_APP_ID,
                app_password=TEAMS_APP_PASSWORD,
                openid_metadata_url=idp.openid_metadata_url,
                login_url=idp.login_url,
            ).model_copy(update=teams_changes or {}),
            channels=ChannelSettings(unknown_members=unknown_members),
            scim=scim,
            redis=RedisSettings(url=redis_url, rate_per_minute=rate_per_minute, history_turns=3),
            server=ServerSettings(
                host="127.0.0.1",
                port=port,
                public_url=f"http://127.0.0.1:{port}",
                link_secret=LINK_SECRET,
                link_ttl_s=600,
            ),
        )
        run_prefix = f"{prefix}{uuid.uuid4().hex[:6]}:"
        state = ConversationState.from_settings(settings.redis, prefix=run_prefix)
        stack.push_async_callback(state.close)
        agent = AgentThread(assistant)  # as `footnote serve` runs it: off the web loop
        stack.callback(agent.close)
        deps = handbook
        if scim is not None:  # the session's deps, with the directory SCIM fills
            from bot.identity.scim import ScimDirectory

            deps = copy.copy(handbook)
            scim_dir = ScimDirectory.open(settings.database, settings.data_dir)
            stack.callback(scim_dir.store.close)
            deps.__dict__["directory"] = scim_dir
        app = build_app(settings, deps, agent, state)
        runner = aiohttp.web.AppRunner(app, access_log=None)
        await runner.setup()
        stack.push_async_callback(runner.cleanup)
        await aiohttp.web.TCPSite(runner, "127.0.0.1", port).start()
        url = f"http://127.0.0.1:{port}"
        session = aiohttp.ClientSession()
        stack.push_async_callback(session.close)
        yield Harness(
            url,
            settings,
            state,
            slack,
            connector,
            SlackSender(session, url + "/slack/events", SIGNING_SECRET),
            session,
            app,
            idp,
        )


@pytest.fixture
async def bot(handbook, assistant, redis_prefix) -> AsyncIterator[Harness]:
    async with running_bot(handbook, assistant, redis_prefix) as harness:
        yield harness


__all__ = ["start_app", "running_bot", "Harness"]
