"""Teams authentication cannot switch off (issue 11, holes 1 and 8).

Hole 1: any FOOTNOTE_TEAMS__* variable turned Teams on, and with an empty app id botbuilder took
every activity without a token and replied to the activity's own ``serviceUrl``: a forged
activity "from" alice with the attacker's ``serviceUrl`` got alice's HR-only answer posted to the
attacker. A garbage token gave 500. Hole 8: malformed bodies gave 500.

The bot here runs with real Bot Framework token checks against a loopback IdP
(``testing/idp.py``); the attacker's server is a second ``FakeConnector``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import logging
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import aiohttp
import pytest
from cryptography.hazmat.primitives import serialization
from pydantic import SecretStr

from bot.settings import RedisSettings, ServerSettings, Settings, TeamsSettings
from bot.web.server import serve
from ingest.errors import ConfigError
from testing.idp import KEY_ID, rsa_key
from testing.teams import FakeConnector, teams_activity
from tests.e2e.conftest import (
    LINK_SECRET,
    REDIS_URL,
    TEAMS_APP_ID,
    TEAMS_APP_PASSWORD,
    free_port,
    running_bot,
)

ROOT = Path(__file__).resolve().parents[2]
SALARY = "What are the salary bands for engineers?"  # HR-only: alice may read it, nobody else


@pytest.fixture
async def attacker():
    """The attacker's server, named as ``serviceUrl`` in forged activities."""
    server = await FakeConnector().start()
    yield server
    await server.close()


def forged(service_url: str, **changes) -> dict:
    """An activity "from" alice (who may read the salary bands) asking for them."""
    return {**teams_activity(SALARY, service_url=service_url), **changes}


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned_jwt(header: dict, claims: dict, signature: bytes = b"") -> str:
    head, body = _b64(json.dumps(header).encode()), _b64(json.dumps(claims).encode())
    return f"{head}.{body}.{_b64(signature)}"


def good_claims(service_url: str) -> dict:
    now = int(time.time())
    return {
        "serviceurl": service_url,
        "nbf": now - 5,
        "exp": now + 3600,
        "iss": "https://api.botframework.com",
        "aud": TEAMS_APP_ID,
    }


def hs256_with_the_public_key(idp, service_url: str) -> str:
    """The classic algorithm confusion: HMAC keyed with the published RSA public key."""
    secret = idp.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = {"alg": "HS256", "typ": "JWT", "kid": KEY_ID}
    claims = good_claims(service_url)
    signing_input = unsigned_jwt(header, claims).rsplit(".", 1)[0]
    return unsigned_jwt(
        header, claims, hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    )


# Each case: the Authorization header for a forged activity whose serviceUrl is `url`.
BAD_TOKENS = {
    "no header": lambda idp, url: {},
    "empty bearer": lambda idp, url: {"Authorization": "Bearer "},
    "garbage": lambda idp, url: bearer("not-a-token"),
    "garbage with dots": lambda idp, url: bearer("a.b.c"),
    "basic auth with the app password": lambda idp, url: {
        "Authorization": "Basic "
        + base64.b64encode(f"{TEAMS_APP_ID}:{TEAMS_APP_PASSWORD}".encode()).decode()
    },
    "wrong audience": lambda idp, url: bearer(idp.mint(service_url=url, app_id="another-app")),
    "wrong issuer": lambda idp, url: bearer(
        idp.mint(service_url=url, claims={"iss": "https://evil.example"})
    ),
    "expired": lambda idp, url: bearer(
        idp.mint(
            service_url=url,
            claims={"nbf": int(time.time()) - 7200, "exp": int(time.time()) - 3600},
        )
    ),
    "not yet valid": lambda idp, url: bearer(
        idp.mint(service_url=url, claims={"nbf": int(time.time()) + 3600})
    ),
    "signed by another key": lambda idp, url: bearer(
        idp.mint(service_url=url, key=rsa_key("attacker"))
    ),
    "unknown key id": lambda idp, url: bearer(
        idp.mint(service_url=url, headers={"kid": "attacker-key"})
    ),
    "alg none": lambda idp, url: bearer(
        unsigned_jwt({"alg": "none", "typ": "JWT", "kid": KEY_ID}, good_claims(url))
    ),
    "HS256 keyed with the public key": lambda idp, url: bearer(hs256_with_the_public_key(idp, url)),
    "no serviceurl claim": lambda idp, url: bearer(idp.mint(service_url=url, drop=("serviceurl",))),
    # issue 23, item 7: PyJWT checks exp only when there is one, so this token never expired
    "no exp claim": lambda idp, url: bearer(idp.mint(service_url=url, drop=("exp",))),
    "exp is a string": lambda idp, url: bearer(
        idp.mint(service_url=url, claims={"exp": str(int(time.time()) + 3600)})
    ),
}


# -- start-up: Teams never runs without credentials by accident ---------------------------------


@pytest.mark.parametrize(
    "teams",
    [
        TeamsSettings(tenant_id="t-northwind"),  # any one variable turns Teams on
        TeamsSettings(app_password="a-secret"),  # the app id forgotten
        TeamsSettings(app_id=TEAMS_APP_ID),  # the password forgotten
        TeamsSettings(app_id="  ", app_password="a-secret"),
    ],
    ids=["tenant only", "password only", "app id only", "blank app id"],
)
async def test_serve_refuses_teams_without_app_id_and_password(tmp_path, teams):
    settings = Settings(
        data_dir=tmp_path,
        teams=teams,
        server=ServerSettings(host="127.0.0.1", port=free_port(), link_secret=LINK_SECRET),
    )
    with pytest.raises(ConfigError) as refused:
        await asyncio.wait_for(serve(settings), 60)
    assert "FOOTNOTE_TEAMS__APP_ID" in str(refused.value)
    assert "FOOTNOTE_TEAMS__APP_PASSWORD" in str(refused.value)
    assert "a-secret" not in str(refused.value)


def test_footnote_serve_with_one_teams_variable_exits_naming_both(tmp_path):
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "300",
        "FOOTNOTE_DATA_DIR": str(tmp_path),
        "FOOTNOTE_SERVER__HOST": "127.0.0.1",
        "FOOTNOTE_SERVER__PORT": str(free_port()),
        "FOOTNOTE_REDIS__URL": REDIS_URL,
        "FOOTNOTE_TEAMS__APP_PASSWORD": "a-secret",
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bot.cli", "serve"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            encoding="utf-8",
            timeout=90,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("`footnote serve` started Teams with an app password and no app id")
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "FOOTNOTE_TEAMS__APP_ID" in out and "FOOTNOTE_TEAMS__APP_PASSWORD" in out
    assert "a-secret" not in out


@pytest.mark.parametrize("teams", [TeamsSettings(), TeamsSettings(app_password="a-secret")])
async def test_a_bot_without_credentials_is_never_built_so_forgeries_reach_nobody(
    handbook, assistant, redis_prefix, attacker, teams
):
    """Hole 1 as found: the adapter itself refuses, whoever builds it (not only `serve`)."""
    with pytest.raises(ConfigError, match="FOOTNOTE_TEAMS__APP_ID"):
        async with running_bot(handbook, assistant, redis_prefix, teams=teams) as bot:
            status, _ = await bot.teams_raw(json.dumps(forged(attacker.url)))
            pytest.fail(
                f"Teams ran without credentials: the forged activity got HTTP {status} and "
                f"the attacker's server received {len(attacker.messages())} message(s)"
            )
    assert attacker.calls == []


# -- the unauthenticated mode: explicit, loopback only, loud ------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.0.2.10", "footnote.example.com"])
async def test_unauthenticated_mode_is_refused_off_loopback(tmp_path, host):
    settings = Settings(
        data_dir=tmp_path,
        teams=TeamsSettings(allow_unauthenticated=True),
        server=ServerSettings(host=host, port=free_port(), link_secret=LINK_SECRET),
    )
    with pytest.raises(ConfigError) as refused:
        await asyncio.wait_for(serve(settings), 60)
    assert "FOOTNOTE_TEAMS__ALLOW_UNAUTHENTICATED" in str(refused.value)
    assert "FOOTNOTE_SERVER__HOST" in str(refused.value)


async def test_unauthenticated_mode_with_credentials_too_is_refused(tmp_path):
    settings = Settings(
        data_dir=tmp_path,
        teams=TeamsSettings(
            allow_unauthenticated=True, app_id=TEAMS_APP_ID, app_password=TEAMS_APP_PASSWORD
        ),
        server=ServerSettings(host="127.0.0.1", port=free_port(), link_secret=LINK_SECRET),
    )
    with pytest.raises(ConfigError, match="FOOTNOTE_TEAMS__ALLOW_UNAUTHENTICATED"):
        await asyncio.wait_for(serve(settings), 60)


@pytest.mark.models  # serve loads and warms every model before it listens
async def test_unauthenticated_mode_on_loopback_starts_with_a_loud_warning(
    tmp_path, redis_prefix, caplog
):
    port = free_port()
    settings = Settings(
        data_dir=tmp_path,
        teams=TeamsSettings(allow_unauthenticated=True),
        redis=RedisSettings(url=REDIS_URL, key_prefix=redis_prefix + "unauth:"),
        server=ServerSettings(host="127.0.0.1", port=port, link_secret=LINK_SECRET),
    )
    ready = asyncio.Event()
    caplog.set_level(logging.WARNING)
    task = asyncio.ensure_future(serve(settings, ready=ready))
    try:
        await asyncio.wait_for(ready.wait(), 120)
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/healthz") as resp,
        ):
            assert (await resp.json())["teams"] is True
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("UNAUTHENTICATED" in r.getMessage() for r in warnings), caplog.text


async def test_unauthenticated_mode_replies_to_loopback_service_urls_only(
    handbook, assistant, redis_prefix
):
    """The Emulator's mode: no token needed, but no answer can leave the machine either."""
    teams = TeamsSettings(allow_unauthenticated=True)
    async with running_bot(handbook, assistant, redis_prefix, teams=teams) as bot:
        emulator = json.dumps(teams_activity("hello", service_url=bot.connector.url))
        assert (await bot.teams_raw(emulator))[0] == 201
        assert bot.connector.messages()  # answered, without any token
        remote = json.dumps(forged("http://192.0.2.7:8080"))
        assert (await bot.teams_raw(remote))[0] == 401


def test_posture_names_the_mode_and_never_the_password():
    from bot.chat.teams import teams_posture

    jwt_mode = TeamsSettings(app_id=TEAMS_APP_ID, app_password=TEAMS_APP_PASSWORD)
    assert teams_posture(jwt_mode) == f"teams: jwt (app id {TEAMS_APP_ID[:4]}…)"
    assert teams_posture(TeamsSettings(allow_unauthenticated=True)).startswith(
        "teams: UNAUTHENTICATED"
    )
    assert teams_posture(None) == "teams: off"
    elsewhere = TeamsSettings(
        app_id=TEAMS_APP_ID,
        app_password=TEAMS_APP_PASSWORD,
        openid_metadata_url="https://idp.example/keys",
    )
    assert "keys from https://idp.example/keys" in teams_posture(elsewhere)
    assert TEAMS_APP_PASSWORD not in teams_posture(elsewhere)


# -- tokens: every bad one is a 401, never a 500, and nothing is posted --------------------------


async def test_forged_activity_without_a_token_gets_401_and_reaches_nobody(bot, attacker):
    status, _ = await bot.teams_raw(json.dumps(forged(attacker.url)))
    assert status == 401
    assert attacker.calls == [] and bot.connector.calls == []


@pytest.mark.parametrize("case", list(BAD_TOKENS), ids=list(BAD_TOKENS))
async def test_bad_tokens_get_401(bot, attacker, case):
    headers = BAD_TOKENS[case](bot.idp, attacker.url)
    status, _ = await bot.teams_raw(json.dumps(forged(attacker.url)), headers=headers)
    assert status == 401
    assert attacker.calls == [] and bot.connector.calls == []


async def test_a_genuine_token_for_another_service_url_gets_401(bot, attacker):
    """A real token (say, replayed from a logged request) cannot redirect the answer."""
    token = bot.idp.mint(service_url=bot.connector.url)
    status, _ = await bot.teams_raw(json.dumps(forged(attacker.url)), headers=bearer(token))
    assert status == 401
    assert attacker.calls == [] and bot.connector.calls == []


async def test_a_key_not_endorsed_for_the_channel_gets_401(bot):
    activity = forged(bot.connector.url, channelId="slack")
    token = bot.idp.mint(service_url=bot.connector.url)
    assert (await bot.teams_raw(json.dumps(activity), headers=bearer(token)))[0] == 401
    assert bot.connector.calls == []


async def test_a_genuine_token_is_answered_with_a_signed_reply(bot):
    """The control: the same request, rightly signed, is answered, and the reply carries the
    token the bot got from the (loopback) Entra ID with its app id and secret."""
    activity = forged(bot.connector.url)
    token = bot.idp.mint(service_url=bot.connector.url)
    assert (await bot.teams_raw(json.dumps(activity), headers=bearer(token)))[0] == 201
    assert bot.connector.messages()
    assert [c for c in bot.connector.calls if c.method == "401"] == []
    (request,) = bot.idp.token_requests
    assert request["client_id"] == TEAMS_APP_ID and request["tenant"] == "botframework.com"


async def test_unreachable_signing_keys_give_503_and_name_the_setting(
    handbook, assistant, redis_prefix, caplog
):
    # A path no IdP of this run served: botframework-connector keeps each metadata URL's keys
    # for the process, and a port freed by an earlier test's IdP (same path, same session key)
    # would still validate the token (CI once got 201)
    closed = f"https://127.0.0.1:{free_port()}/closed-{uuid.uuid4().hex}/.well-known/openid"
    changes = {"openid_metadata_url": closed}
    async with running_bot(handbook, assistant, redis_prefix, teams_changes=changes) as bot:
        token = bot.idp.mint(service_url=bot.connector.url)
        activity = json.dumps(forged(bot.connector.url))
        assert (await bot.teams_raw(activity, headers=bearer(token)))[0] == 503
        assert bot.connector.calls == []
    assert "FOOTNOTE_TEAMS__OPENID_METADATA_URL" in caplog.text


async def test_a_wrong_app_password_is_named_in_the_log_and_never_logged(
    handbook, assistant, redis_prefix, caplog
):
    wrong = SecretStr("s3cr3t-but-not-the-right-one")
    caplog.set_level(logging.DEBUG)
    changes = {"app_password": wrong}
    async with running_bot(handbook, assistant, redis_prefix, teams_changes=changes) as bot:
        token = bot.idp.mint(service_url=bot.connector.url)
        activity = json.dumps(forged(bot.connector.url))
        assert (await bot.teams_raw(activity, headers=bearer(token)))[0] == 201
        assert bot.connector.messages() == []  # Entra ID gave no token: no reply went out
        assert {r["client_id"] for r in bot.idp.token_requests} == {TEAMS_APP_ID}
    assert "FOOTNOTE_TEAMS__APP_PASSWORD" in caplog.text
    assert wrong.get_secret_value() not in caplog.text


async def test_the_app_password_never_reaches_the_log(bot, attacker, caplog):
    caplog.set_level(logging.DEBUG)
    token = bot.idp.mint(service_url=bot.connector.url)
    assert (await bot.teams(teams_activity(SALARY, service_url=bot.connector.url)))[0] == 201
    assert (await bot.teams_raw(json.dumps(forged(attacker.url)), headers=bearer(token)))[0] == 401
    assert bot.connector.messages()
    assert TEAMS_APP_PASSWORD not in caplog.text


# -- malformed bodies: 4xx before anything else looks at them -----------------------------------

NESTED = '{"type": "message", "value": ' + "[" * 100_000 + "]" * 100_000 + "}"

MALFORMED = {
    "not JSON": ("{nope", "application/json", 400),
    "invalid UTF-8": (b'{"type": "\xc3\x28"}', "application/json", 400),
    "JSON array": ("[]", "application/json", 400),
    "JSON string": ('"message"', "application/json", 400),
    "JSON null": ("null", "application/json", 400),
    "nested 100k deep": (NESTED, "application/json", 400),
    "text/plain": ("hello", "text/plain", 415),
    "form-encoded": ("type=message", "application/x-www-form-urlencoded", 415),
    "json hidden in another type": ("{}", "text/plain; application/json", 415),
    "oversized": ('{"text": "' + "x" * (1024 * 1024) + '"}', "application/json", 413),
}

# Each case: (field, value) set on a well-formed activity; None removes the field.
BAD_FIELDS = {
    "missing type": ("type", None),
    "type is a number": ("type", 5),
    "type is a list": ("type", ["message"]),
    "type is empty": ("type", ""),
    "from is a string": ("from", "x"),
    "from is missing": ("from", None),
    "from id is a number": ("from", {"id": 5}),
    "recipient is a list": ("recipient", [1]),
    "conversation is a number": ("conversation", 5),
    "conversation without id": ("conversation", {"conversationType": "personal"}),
    "missing serviceUrl": ("serviceUrl", None),
    "serviceUrl is a number": ("serviceUrl", 5),
    "serviceUrl is not http": ("serviceUrl", "javascript:alert(1)"),
    "serviceUrl is broken": ("serviceUrl", "http://[::1"),
    "missing channelId": ("channelId", None),
    "entities is a string": ("entities", "x"),
    "timestamp is garbage": ("timestamp", "yesterday-ish"),
    "attachments is an object": ("attachments", {}),
}


@pytest.mark.parametrize("case", list(MALFORMED), ids=list(MALFORMED))
async def test_malformed_bodies_get_4xx(bot, case):
    body, content_type, expected = MALFORMED[case]
    token = bot.idp.mint(service_url=bot.connector.url)
    status, _ = await bot.teams_raw(body, headers=bearer(token), content_type=content_type)
    assert status == expected
    assert bot.connector.calls == []


@pytest.mark.parametrize("case", list(BAD_FIELDS), ids=list(BAD_FIELDS))
async def test_activities_of_the_wrong_shape_get_400(bot, case):
    field, value = BAD_FIELDS[case]
    activity = teams_activity(SALARY, service_url=bot.connector.url)
    if value is None:
        del activity[field]
    else:
        activity[field] = value
    token = bot.idp.mint(service_url=bot.connector.url)
    status, _ = await bot.teams_raw(json.dumps(activity), headers=bearer(token))
    assert status == 400
    assert bot.connector.calls == []
