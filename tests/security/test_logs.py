"""Secrets never reach logs, and ``serve`` says in one line how it is protected."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging

import pytest

from bot.logs import MASK, install_redaction, secret_values
from bot.settings import RedisSettings, ServerSettings, Settings, SlackSettings
from bot.web.server import security_posture, serve
from testing.slack import FakeSlackAPI, SlackSender, dm_event
from tests.e2e.conftest import REDIS_URL, free_port

TOKEN = "xoxb-1111-2222-very-secret-token"
SIGNING = "5f3c0ffee5f3c0ffee5f3c0ffee5f3c0"
LINK = "0123456789abcdef0123456789abcdef0123456789abcdef"


def settings_with_secrets(tmp_path, slack_url: str, port: int) -> Settings:
    return Settings(
        data_dir=tmp_path,
        slack=SlackSettings(bot_token=TOKEN, signing_secret=SIGNING, api_url=slack_url),
        redis=RedisSettings(url="redis://:hunter2hunter2@127.0.0.1:1/0"),
        server=ServerSettings(
            host="127.0.0.1", port=port, public_url=f"http://127.0.0.1:{port}", link_secret=LINK
        ),
    )


def test_every_secret_of_the_settings_is_found(tmp_path):
    found = secret_values(settings_with_secrets(tmp_path, "http://x", 1))
    assert {TOKEN, SIGNING, LINK, "hunter2hunter2"} <= set(found)


def test_a_secret_is_masked_in_messages_arguments_and_tracebacks():
    install_redaction([TOKEN])
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("footnote.test.redaction")
    logger.addHandler(handler)
    try:
        logger.warning("token %s in an argument", TOKEN)
        logger.warning(f"token {TOKEN} in the message")
        try:
            raise RuntimeError(f"the SDK said: bad token {TOKEN}")
        except RuntimeError:
            logger.exception("a failure")
    finally:
        logger.removeHandler(handler)
    out = stream.getvalue()
    assert TOKEN not in out and out.count(MASK) == 3, out


@pytest.mark.models  # serve loads and warms every model before it listens
async def test_serve_logs_its_posture_and_no_secret(tmp_path, caplog):
    slack = await FakeSlackAPI().start()
    port = free_port()
    settings = settings_with_secrets(tmp_path, slack.api_url, port)
    ready = asyncio.Event()
    with caplog.at_level(logging.DEBUG):
        task = asyncio.ensure_future(serve(settings, ready=ready))
        try:
            await asyncio.wait_for(ready.wait(), 120)
            import aiohttp

            async with aiohttp.ClientSession() as session:
                sender = SlackSender(session, f"http://127.0.0.1:{port}/slack/events", SIGNING)
                await sender.event(dm_event("How many vacation days?", channel="D0LOGS001"))
                await sender.post("{}", signature="v0=" + "0" * 64)  # forged: logged as refused
                await slack.final_answer("D0LOGS001")
                async with session.get(f"http://127.0.0.1:{port}/docs/x?u=alice&exp=1&sig=zz"):
                    pass
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await slack.close()
    records = [(r.getMessage(), r.exc_text or "") for r in caplog.records]
    posture = [m for m, _ in records if m.startswith("security posture:")]
    assert posture == [security_posture(settings)]
    assert "bind 127.0.0.1" in posture[0] and "slack: signed requests only" in posture[0]
    for secret in (TOKEN, SIGNING, LINK, "hunter2hunter2"):
        for message, trace in records:
            assert secret not in message and secret not in trace, message


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_the_posture_line_names_the_bind_address_and_never_a_secret(tmp_path, host):
    settings = settings_with_secrets(tmp_path, "http://x", 3000)
    settings.server.host = host
    line = security_posture(settings)
    assert f"bind {host}:3000" in line and TOKEN not in line and LINK not in line
    assert REDIS_URL not in line
