"""Signed ``/docs`` links (holes 2, 8 and 9), attacked over real HTTP on loopback.

2. The link secret defaulted to ``change-me``: anyone could sign ``/docs/<id>?u=<anyone>`` and
   read an admin-only draft. Now there is no default: ``footnote serve`` refuses a missing, short
   or placeholder secret, and local runs sign with a generated one.
8. ``sig=%ff`` reached ``hmac.compare_digest`` as a non-ASCII string: 500. Now any junk is a 4xx.
9. A link worked for whoever held it. With OpenID Connect configured, the person who signs in is
   the reader: alice's link forwarded to bob shows bob nothing he may not see.

The provider is a loopback OIDC server (``oidc_provider.py``); the browser is an aiohttp client
with a cookie jar following redirects. Names new with the fix are imported inside the tests that
need them, so the hole tests also run (and fail, for the reason they name) on the code before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import stat
import time
import uuid
from collections.abc import AsyncIterator
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlsplit

import aiohttp
import jwt
import pytest
import yarl
from aiohttp import web

from agent.assistant import build_assistant
from bot.chat.conversation_state import ConversationState
from bot.settings import RedisSettings, ServerSettings, Settings
from bot.web.links import LinkSigner
from bot.web.server import build_app, serve
from ingest.errors import ConfigError
from tests.e2e.conftest import REDIS_URL, free_port
from tests.security.oidc_provider import CLIENT_ID, CLIENT_SECRET, OIDCProvider, new_rsa_key

SECRET = "security-suite-link-secret-6f1c0b9a2e7d4835"
DRAFT = "handbook/drafts/reorg-plan-draft.md"  # no access rule: admins only
SALARY = "handbook/hr/salary-bands.pdf"  # hr only
LEAVE = "handbook/hr/leave-policy-2026.md"  # everyone


@pytest.fixture(scope="module")
def assistant(handbook_deps):
    return build_assistant(handbook_deps)


def settings_for(tmp_path, **server) -> Settings:
    port = free_port()
    return Settings(
        data_dir=tmp_path,
        redis=RedisSettings(url=REDIS_URL),
        server=ServerSettings(
            host="127.0.0.1", port=port, public_url=f"http://127.0.0.1:{port}", **server
        ),
    )


@contextlib.asynccontextmanager
async def serving(settings: Settings, deps, assistant) -> AsyncIterator[str]:
    """The bot's web app (as ``footnote serve`` builds it) on loopback; yields its base URL."""
    state = ConversationState.from_settings(
        settings.redis, prefix=f"footnote-test-links-{uuid.uuid4().hex[:8]}:"
    )
    runner = web.AppRunner(build_app(settings, deps, assistant, state), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", settings.server.port).start()
    try:
        yield settings.server.public_url
    finally:
        await runner.cleanup()
        await state.close()


def browser() -> aiohttp.ClientSession:
    # unsafe=True: keep cookies set by an IP-address host (127.0.0.1), as a browser does
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def fetch(session: aiohttp.ClientSession, url: str | yarl.URL, **kw) -> tuple[int, str]:
    async with session.get(url, **kw) as resp:
        return resp.status, await resp.text()


def raw(url: str) -> yarl.URL:
    """The URL exactly as written (no re-encoding), as an attacker would send it."""
    return yarl.URL(url, encoded=True)


# ── hole 2: no default secret ────────────────────────────────────────────────────────────────


async def serve_outcome(settings: Settings) -> BaseException | None:
    """What ``footnote serve`` does with these settings: the exception it stops with, or None if it
    started serving (then it is stopped again)."""
    ready = asyncio.Event()
    task = asyncio.ensure_future(serve(settings, ready=ready))
    started = asyncio.ensure_future(ready.wait())
    await asyncio.wait({task, started}, timeout=180, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        started.cancel()
        return task.exception()
    task.cancel()
    started.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    return None


@pytest.mark.parametrize(
    "secret",
    [
        None,  # not set (the old default was "change-me")
        "change-me",
        "replace-with-openssl-rand-hex-32",  # deploy/.env.example, 32 bytes long
        "a" * 64,
        "0123456789abcdef",  # random-looking but 16 bytes
    ],
)
async def test_serve_refuses_to_start_without_a_strong_link_secret(tmp_path, secret):
    server = {} if secret is None else {"link_secret": secret}
    settings = settings_for(tmp_path, **server)
    started = time.monotonic()
    outcome = await serve_outcome(settings)
    assert outcome is not None, f"serve started with link secret {secret!r}"
    assert isinstance(outcome, ConfigError)
    message = str(outcome)
    assert "FOOTNOTE_SERVER__LINK_SECRET" in message and "openssl rand -hex 32" in message
    assert secret is None or secret not in message  # the error never repeats the secret
    assert time.monotonic() - started < 5  # refused before loading models or opening the port


def forger(key: bytes) -> LinkSigner:
    """The product's own signing code keyed as an attacker keys it: with a secret they know
    (built around ``__init__``, which now refuses such a key)."""
    signer = object.__new__(LinkSigner)
    signer.public_url, signer._key, signer.ttl_s, signer.clock = "", key, 900, time.time
    return signer


async def test_a_link_signed_with_the_old_default_secret_opens_nothing(
    tmp_path, handbook_deps, assistant
):
    """The hole as found: sign an admin-only draft for the admin with ``change-me``."""
    forged_by = forger(b"change-me")
    settings = settings_for(tmp_path)  # no secret configured, as a quick start would run
    async with serving(settings, handbook_deps, assistant) as url, browser() as session:
        forged_by.public_url = url
        status, page = await fetch(session, forged_by.sign(DRAFT, "sam"))
        assert status == 403, "a link signed with 'change-me' opened the admins' draft"
        assert "reorganisation" not in page.lower()
    strong = settings_for(tmp_path / "configured", link_secret=SECRET)
    async with serving(strong, handbook_deps, assistant) as url, browser() as session:
        forged_by.public_url = url
        status, page = await fetch(session, forged_by.sign(DRAFT, "sam"))
        assert status == 403 and "reorganisation" not in page.lower()
        # while a link signed with the configured secret opens it for the admin
        genuine = LinkSigner(url, SECRET, 900)
        status, page = await fetch(session, genuine.sign(DRAFT, "sam"))
        assert status == 200 and "reorganisation" in page.lower()


def test_local_runs_generate_a_secret_once_owner_only_and_reuse_it(tmp_path):
    from bot.web.links import link_secret

    settings = Settings(data_dir=tmp_path / "data")
    first = link_secret(settings, generate=True).get_secret_value()
    path = tmp_path / "data" / "link-secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert re.fullmatch(r"[0-9a-f]{64}", first)  # 32 random bytes
    assert link_secret(settings, generate=True).get_secret_value() == first  # reused
    other = link_secret(Settings(data_dir=tmp_path / "elsewhere"), generate=True)
    assert other.get_secret_value() != first
    path.chmod(0o644)  # loosened by hand: tightened again, same secret
    assert link_secret(settings, generate=True).get_secret_value() == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # serve never falls back to the file: every replica must share one configured secret
    with pytest.raises(ConfigError, match="FOOTNOTE_SERVER__LINK_SECRET"):
        link_secret(settings, generate=False)
    path.write_text("change-me\n")
    with pytest.raises(ConfigError, match="link-secret"):
        link_secret(settings, generate=True)


def test_posture_says_where_the_secret_comes_from_but_never_the_secret():
    from bot.web.links import links_posture

    configured = Settings(server=ServerSettings(link_secret=SECRET))
    line = links_posture(configured)
    assert line == (
        "links: secret from FOOTNOTE_SERVER__LINK_SECRET, ttl 900s, "
        "sign-in off (a link opens for whoever holds it until it expires)"
    )
    oidc = Settings(
        server=ServerSettings(
            link_secret=SECRET,
            oidc={"issuer": "https://slack.com", "client_id": "1.2", "client_secret": SECRET},
        )
    )
    line = links_posture(oidc)
    assert "sign-in oidc (https://slack.com)" in line and SECRET not in line
    assert "generated" in links_posture(Settings())


def test_listens_on_loopback_and_links_live_15_minutes_by_default(tmp_path):
    server = ServerSettings()
    assert server.host == "127.0.0.1"  # was 0.0.0.0, silently
    assert server.link_ttl_s == 900  # was an hour
    signer = LinkSigner("https://bot.example", SECRET, server.link_ttl_s, clock=lambda: 1000.0)
    exp = parse_qs(urlsplit(signer.sign(LEAVE, "alice")).query)["exp"][0]
    assert int(exp) == 1900
    # a link minted under a longer TTL than the one now configured is no longer honoured
    long_lived = LinkSigner("https://bot.example", SECRET, 3600, clock=lambda: 1000.0)
    q = {k: v[0] for k, v in parse_qs(urlsplit(long_lived.sign(LEAVE, "alice")).query).items()}
    assert signer.verify(LEAVE, "alice", q["exp"], q["sig"]) == "expired"


# ── hole 8: junk in a link is a 4xx, never a 500 ─────────────────────────────────────────────


@pytest.fixture
async def docs_site(tmp_path, handbook_deps, assistant) -> AsyncIterator[tuple[str, LinkSigner]]:
    settings = settings_for(tmp_path, link_secret=SECRET)
    async with serving(settings, handbook_deps, assistant) as url:
        yield url, LinkSigner(url, SECRET, 900)


async def test_a_non_ascii_signature_is_refused_not_a_500(docs_site):
    url, signer = docs_site
    good = signer.sign(LEAVE, "alice")
    base, query = good.split("?")
    exp = parse_qs(query)["exp"][0]
    async with browser() as session:
        status, page = await fetch(session, raw(f"{base}?u=alice&exp={exp}&sig=%ff"))
        assert 400 <= status < 500, f"sig=%ff gave {status}"
        assert "Leave Policy" not in page


# Values as they would appear in a URL (percent-encoded where that is the attack).
NASTY = [
    "",
    "%20",
    "%00",
    "%ff",
    "%ff%fe",
    "%c0%af",  # overlong "/"
    "%ed%a0%80",  # an encoded lone surrogate
    "%e2%80%ae",  # right-to-left override
    "%0d%0aSet-Cookie:%20x=1",
    "%0a",
    "..%2f..%2f..%2fetc%2fpasswd",
    "%25",
    "%",
    "%zz",
    "=",
    "&",
    "-1",
    "%2b5",
    "1e9",
    "0x10",
    "1_700_000_000",
    "%d9%a1%d9%a2%d9%a3",  # Arabic-Indic digits: int() would accept them
    "9" * 5000,
    "nan",
    "inf",
    "null",
    "%5b%5d",
    "%7b%7d",
    "%3cscript%3ealert(1)%3c%2fscript%3e",
    "A" * 24,  # a signature of the right shape
    "A" * 23 + "=",
    "+" * 24,
    "%e2%82%ac" * 8,
    "x" * 3000,
]


async def test_junk_in_any_part_of_a_link_is_a_4xx(docs_site):
    """Fuzz: each part of a genuine link replaced by each nasty value, and signed junk doc ids."""
    url, signer = docs_site
    good = signer.sign(LEAVE, "alice")
    q = {k: v[0] for k, v in parse_qs(urlsplit(good).query).items()}
    base = f"{url}/docs/{LEAVE}"
    attempts = []
    for junk in NASTY:
        attempts += [
            f"{base}?u={junk}&exp={q['exp']}&sig={q['sig']}",
            f"{base}?u=alice&exp={junk}&sig={q['sig']}",
            f"{base}?u=alice&exp={q['exp']}&sig={junk}",
            f"{url}/docs/{junk}?u=alice&exp={q['exp']}&sig={q['sig']}",
            f"{url}/docs/{junk or 'x'}?{junk}",
        ]
    async with browser() as session:
        seen = {}
        for attempt in attempts:
            status, page = await fetch(session, raw(attempt))
            seen[attempt[:120]] = status
            assert "<script>" not in page
        bad = {a: s for a, s in seen.items() if not 400 <= s < 500}
        assert not bad, bad
        # genuinely signed links to documents that do not exist: refused, not crashed
        for doc_id in ("\x00", "a\nb", "../../etc/passwd", "é" * 500, " ", "%ff"):
            status, _ = await fetch(session, signer.sign(doc_id, "alice"))
            assert 400 <= status < 500, (doc_id, status)


async def test_repeated_or_missing_parameters_are_refused(docs_site):
    url, signer = docs_site
    good = signer.sign(LEAVE, "alice")
    base, query = good.split("?")
    q = {k: v[0] for k, v in parse_qs(query).items()}
    u, exp, sig = f"u={q['u']}", f"exp={q['exp']}", f"sig={q['sig']}"
    async with browser() as session:
        assert (await fetch(session, good))[0] == 200
        for query in (
            f"{u}&{u}&{exp}&{sig}",
            f"u=bob&{u}&{exp}&{sig}",  # a second reader smuggled in front
            f"{u}&{exp}&exp=9999999999&{sig}",
            f"{u}&{exp}&{sig}&{sig}",
        ):
            status, page = await fetch(session, raw(f"{base}?{query}"))
            assert status == 400 and "Leave Policy" not in page, query
        for query in (f"{exp}&{sig}", f"{u}&{sig}", f"{u}&{exp}", ""):
            status, page = await fetch(session, raw(f"{base}?{query}"))
            assert status == 403 and "Leave Policy" not in page, query


# ── hole 9: with sign-in, the person who signs in is the reader ───────────────────────────────


@pytest.fixture
async def provider() -> AsyncIterator[OIDCProvider]:
    p = await OIDCProvider().start()
    yield p
    await p.close()


def oidc_settings(tmp_path, provider: OIDCProvider, **oidc) -> Settings:
    return settings_for(
        tmp_path,
        link_secret=SECRET,
        oidc={
            "issuer": provider.issuer,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            **oidc,
        },
    )


@pytest.fixture
async def oidc_site(tmp_path, provider, handbook_deps, assistant):
    settings = oidc_settings(tmp_path, provider)
    async with serving(settings, handbook_deps, assistant) as url:
        yield url, LinkSigner(url, SECRET, 900)


async def test_a_forwarded_link_opens_only_for_someone_who_may_read_it(oidc_site, provider):
    url, signer = oidc_site
    alices_link = signer.sign(SALARY, "alice", "page=1")  # hr only; alice is in hr, bob is not
    async with browser() as bob:
        provider.sign_in_as("bob@northwind.example")
        status, page = await fetch(bob, alices_link)
        assert status == 403, "bob opened alice's HR link as alice"
        assert "band" not in page.lower()
        # bob's session is his own: an open document opens for him without signing in again
        provider.sign_in_as("")  # the provider would fail any new sign-in
        status, _ = await fetch(bob, signer.sign(LEAVE, "alice"))
        assert status == 200
    async with browser() as alice:
        provider.sign_in_as("alice@northwind.example")
        status, page = await fetch(alice, alices_link)
        assert status == 200 and "band" in page.lower()
    async with browser() as stranger:
        provider.sign_in_as("mallory@elsewhere.example")  # signs in fine, not in the directory
        status, page = await fetch(stranger, alices_link)
        assert status == 403 and "band" not in page.lower()


async def test_sign_in_uses_state_nonce_pkce_and_the_client_secret(oidc_site, provider):
    url, signer = oidc_site
    async with browser() as session:
        async with session.get(signer.sign(LEAVE, "alice"), allow_redirects=False) as resp:
            assert resp.status == 302
            authorize = yarl.URL(resp.headers["Location"])
        assert str(authorize.with_query(None)) == provider.issuer + "/authorize"
        q = authorize.query
        assert q["redirect_uri"] == url + "/auth/callback" and q["client_id"] == CLIENT_ID
        assert q["code_challenge_method"] == "S256" and len(q["state"]) >= 32 and q["nonce"]
        provider.sign_in_as("alice@northwind.example")
        status, _ = await fetch(session, authorize)  # through the provider and back
        assert status == 200
    (form,) = provider.token_requests
    assert form["redirect_uri"] == url + "/auth/callback" and form["code_verifier"]
    assert "client_secret" not in form  # sent as HTTP Basic, as discovery asked


async def start_sign_in(session, signer, doc=LEAVE) -> tuple[str, yarl.URL]:
    """Open a link and let the provider answer; returns (the link, the callback URL it sent)."""
    link = signer.sign(doc, "alice")
    async with session.get(link, allow_redirects=False) as resp:
        authorize = resp.headers["Location"]
    async with session.get(authorize, allow_redirects=False) as resp:
        return link, yarl.URL(resp.headers["Location"])


async def test_a_tampered_sign_in_is_refused(oidc_site, provider):
    url, signer = oidc_site
    provider.sign_in_as("alice@northwind.example")
    async with browser() as session:
        _, callback = await start_sign_in(session, signer)
        status, _ = await fetch(session, callback.update_query(state="A" * 32))
        assert status == 400  # a state this browser never started
        status, _ = await fetch(session, callback.update_query(code="forged-code"))
        assert status == 403  # the provider does not know the code
    async with browser() as session:
        _, callback = await start_sign_in(session, signer)
        session.cookie_jar.clear()
        status, _ = await fetch(session, callback)
        assert status == 400  # the callback in another browser (a login-CSRF attempt)

    wrong_key = new_rsa_key()
    for tamper in (
        {"key": wrong_key},  # signed by someone else under the provider's key id
        {"aud": "someone-elses-client"},
        {"iss": "https://evil.example"},
        {"exp": int(time.time()) - 3600, "iat": int(time.time()) - 7200},  # expired
        {"nonce": "a-nonce-from-another-sign-in"},
        {"nonce": None},  # no nonce at all
        {"email_verified": False},
        {"email": None},
    ):
        provider.tamper = tamper
        async with browser() as session:
            link, callback = await start_sign_in(session, signer)
            status, page = await fetch(session, callback)
            assert status == 403, (tamper, status)
            assert "Leave Policy" not in page
            status, _ = await fetch(session, link, allow_redirects=False)
            assert status == 302, tamper  # no session was started: sign in again
    provider.tamper = {}

    async with browser() as session:
        _, callback = await start_sign_in(session, signer)
        assert (await fetch(session, callback))[0] == 200
        status, _ = await fetch(session, callback)  # replayed: state used, code spent
        assert 400 <= status < 500


async def test_junk_at_the_callback_is_a_4xx(oidc_site):
    url, _ = oidc_site
    async with browser() as session:
        for query in (
            "",
            "code=x",
            "state=" + "A" * 32,
            "code=x&state=short",
            "code=x&state=" + "A" * 32 + "&state=" + "B" * 32,
            "error=access_denied&state=" + "A" * 32,
            "code=%ff&state=%ff",
            "code=" + "x" * 5000 + "&state=" + "A" * 32,
        ) + tuple(f"code={j}&state={j}" for j in NASTY):
            status, _ = await fetch(session, raw(f"{url}/auth/callback?{query}"))
            assert 400 <= status < 500, (query[:80], status)
        # a flow cookie that is not ours
        state = "C" * 32
        forged = jwt.encode({"state": state}, "not-our-key-0123456789abcdef01234", "HS256")
        status, _ = await fetch(
            session,
            f"{url}/auth/callback?code=x&state={state}",
            headers={"Cookie": f"footnote_signin_{state}={forged}"},
        )
        assert status == 400


def set_cookies(resp: aiohttp.ClientResponse) -> SimpleCookie:
    jar: SimpleCookie = SimpleCookie()
    for header in resp.headers.getall("Set-Cookie", []):
        jar.load(header)
    return jar


async def test_the_session_cookie_is_locked_down_and_expires(
    tmp_path, provider, handbook_deps, assistant
):
    settings = oidc_settings(tmp_path, provider, session_ttl_s=120)
    provider.sign_in_as("alice@northwind.example")
    async with serving(settings, handbook_deps, assistant) as url, browser() as session:
        signer = LinkSigner(url, SECRET, 900)
        link, callback = await start_sign_in(session, signer)
        async with session.get(callback, allow_redirects=False) as resp:
            assert resp.status == 302 and resp.headers["Location"] == link[len(url) :]
            c = set_cookies(resp)["footnote_session"]
        assert c["httponly"] and c["samesite"] == "Lax" and c["path"] == "/docs"
        assert c["max-age"] == "120" and not c["secure"]  # http public URL: no Secure flag
        status, _ = await fetch(session, link)
        assert status == 200
        # the same session once its time is up, made so rather than waited for: a wait as long
        # as a short TTL races a loaded machine
        key = signer.derive("cookies")
        claims = jwt.decode(c.value, key, algorithms=["HS256"], options={"verify_aud": False})
        assert claims["exp"] == claims["iat"] + 120
        expired = jwt.encode({**claims, "exp": int(time.time()) - 1}, key, "HS256")
        session.cookie_jar.clear()  # the browser would drop it; the server must refuse it too
        status, _ = await fetch(
            session, link, allow_redirects=False, headers={"Cookie": f"footnote_session={expired}"}
        )
        assert status == 302  # signed out: back to the provider
        # a session cookie signed with another key is not a session either
        fake = jwt.encode(
            {"email": "sam@northwind.example", "aud": "footnote-session", "exp": 2**40},
            "guessed-key-0123456789abcdef0123",
            "HS256",
        )
        status, _ = await fetch(
            session, link, allow_redirects=False, headers={"Cookie": f"footnote_session={fake}"}
        )
        assert status == 302

    https = settings.model_copy(
        update={"server": settings.server.model_copy(update={"public_url": "https://docs.example"})}
    )
    async with serving(https, handbook_deps, assistant), browser() as session:
        signer = LinkSigner(f"http://127.0.0.1:{https.server.port}", SECRET, 900)
        async with session.get(signer.sign(LEAVE, "alice"), allow_redirects=False) as resp:
            assert resp.status == 302
            flow = next(v for k, v in set_cookies(resp).items() if k.startswith("footnote_signin_"))
        assert flow["secure"] and flow["httponly"] and flow["path"] == "/auth/callback"


async def test_an_unreachable_provider_is_a_502_not_a_500(tmp_path, handbook_deps, assistant):
    settings = settings_for(
        tmp_path,
        link_secret=SECRET,
        oidc={
            "issuer": f"http://127.0.0.1:{free_port()}",
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
        },
    )
    async with serving(settings, handbook_deps, assistant) as url, browser() as session:
        status, page = await fetch(session, LinkSigner(url, SECRET, 900).sign(LEAVE, "alice"))
        assert status == 502 and "Leave Policy" not in page
