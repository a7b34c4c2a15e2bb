"""``serve(settings, socket_mode)`` — what ``footnote serve`` runs — starts, reports health, stops."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
import pytest

from bot.settings import (
    DigestSettings,
    RedisSettings,
    ServerSettings,
    Settings,
    SlackSettings,
    TeamsSettings,
)
from bot.web.server import serve
from ingest.errors import ConfigError
from testing.slack import FakeSlackAPI, SlackSender, dm_event
from tests.e2e.conftest import (
    REDIS_URL,
    SIGNING_SECRET,
    TEAMS_APP_ID,
    TEAMS_APP_PASSWORD,
    free_port,
)


@pytest.mark.models  # serve builds its own embedders from the settings, as in production
async def test_serve_builds_everything_from_settings_and_answers(tmp_path, redis_prefix, caplog):
    slack = await FakeSlackAPI().start()
    port = free_port()
    settings = Settings(
        data_dir=tmp_path,  # an empty index: every answer is an honest "I don't know"
        slack=SlackSettings(
            bot_token="xoxb-t", signing_secret=SIGNING_SECRET, api_url=slack.api_url
        ),
        teams=TeamsSettings(app_id=TEAMS_APP_ID, app_password=TEAMS_APP_PASSWORD),
        redis=RedisSettings(url=REDIS_URL, key_prefix=redis_prefix + "serve:"),
        server=ServerSettings(
            host="127.0.0.1",
            port=port,
            public_url=f"http://127.0.0.1:{port}",
            link_secret="serve-test-link-secret-0123456789abcdef",
        ),
        digest=DigestSettings(slack_channel="COWNERS"),
    )
    ready = asyncio.Event()
    task = asyncio.ensure_future(serve(settings, socket_mode=False, ready=ready))
    try:
        with caplog.at_level("INFO", logger="bot.web.server"):
            await asyncio.wait_for(ready.wait(), 120)
        said = [r.getMessage() for r in caplog.records if r.name == "bot.web.server"]
        warm = next(i for i, m in enumerate(said) if m.startswith("models loaded and warm"))
        assert warm < next(i for i, m in enumerate(said) if m.startswith("serving on"))
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/healthz") as resp:
                assert resp.status == 200
                assert await resp.json() == {
                    "status": "ok",
                    "slack": True,
                    "teams": True,
                    "redis": True,
                }
            sender = SlackSender(session, f"http://127.0.0.1:{port}/slack/events", SIGNING_SECRET)
            assert (
                await sender.event(
                    dm_event("How many vacation days can I carry over?", channel="D0SERVE01")
                )
            )[0] == 200
            final = await slack.final_answer("D0SERVE01")
            assert final.args["text"].startswith("I don't know")
            # the period's digest is due at start: posted once to the owners' channel
            digest = await slack.posted("COWNERS")
            assert "Footnote digest" in digest.args["text"]
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await slack.close()


async def test_socket_mode_without_an_app_token_names_the_variable(tmp_path):
    settings = Settings(
        data_dir=tmp_path, slack=SlackSettings(bot_token="xoxb-t", signing_secret="s")
    )
    with pytest.raises(ConfigError, match="FOOTNOTE_SLACK__APP_TOKEN"):
        await serve(settings, socket_mode=True)
