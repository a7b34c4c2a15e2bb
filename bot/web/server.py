"""The bot's web server: one aiohttp application, each adapter mounted only when configured.

Routes: ``POST /slack/events`` (Slack, signature-checked by Bolt), ``POST /api/messages``
(Teams / Bot Framework), ``GET /docs/{doc_id}`` (signed citation links), ``GET /auth/callback``
(sign-in for those links, when OpenID Connect is configured), ``/admin`` (``bot/web/admin.py``: turns,
their traces, feedback, sources, charts; admins only, signed in through a link the bot sends them
in a DM), ``GET /healthz``.
The app records answered turns and feedback (``bot/reports/feedback.py``) and, while it runs, deletes
those older than ``FOOTNOTE_PRIVACY__RETENTION_DAYS``: at start, then every hour.
``serve(settings, socket_mode)`` builds everything from settings and runs until cancelled;
``run(settings, socket_mode)`` is the blocking form ``footnote serve`` calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from aiohttp import web
from redis.exceptions import RedisError

from bot.chat.conversation import Agent, Conversation
from bot.chat.conversation_state import ConversationState, redis_pool_kwargs
from bot.chat.teams_auth import check_teams, teams_posture
from bot.identity.admin_access import AdminAccess
from bot.identity.signin import CALLBACK_PATH, SignIn
from bot.logs import configure_logging, install_redaction, secret_values
from bot.reports.feedback import TurnLog
from bot.settings import Settings
from bot.web.admin import AdminData, admin_routes
from bot.web.links import LinkSigner, docs_route, link_secret, links_posture
from ingest.errors import ConfigError
from ingest.sources.state import SourceRecord, SyncState

if TYPE_CHECKING:
    from agent.drafts import Drafting
    from agent.loop import Progress
    from agent.traces import TraceStore
    from agent.turns import Answer, Turn
    from bot.app import Deps
    from ingest.documents import ChunkPayload

T = TypeVar("T")

log = logging.getLogger(__name__)

SLACK_KEY = web.AppKey("slack", object)
TEAMS_KEY = web.AppKey("teams", object)
STATE_KEY = web.AppKey("state", ConversationState)
RECORDS_KEY = web.AppKey("records", TurnLog)
PURGE_EVERY_S = 3600.0


class AgentThread:
    """Runs the assistant on its own event loop in a worker thread, so its CPU-bound steps never
    hold up the web loop that must acknowledge Slack within 3 s. Same interface as the assistant;
    ``progress`` callbacks are sent back to the caller's loop."""

    def __init__(self, assistant: Agent, name: str = "footnote-agent"):
        self.assistant = assistant
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    async def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    @property
    def streams(self) -> bool:
        return self.assistant.streams

    async def answer(
        self, turn: Turn, progress: Progress | None = None, draft: Drafting | None = None
    ) -> Answer:
        caller = asyncio.get_running_loop()

        def relay(callback: Progress | None) -> Progress | None:
            if callback is None:
                return None
            send = callback

            async def forward(text: str) -> None:
                await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(send(text), caller))

            return forward

        return await self._run(self.assistant.answer(turn, relay(progress), relay(draft)))

    def refusal(self, text: str) -> Answer | None:
        return self.assistant.refusal(text)

    async def confirm(self, action_id: str, user_id: str, approve: bool) -> Answer:
        return await self._run(self.assistant.confirm(action_id, user_id, approve))

    def document(self, doc_id: str, groups: Sequence[str]) -> list[ChunkPayload]:
        return self.assistant.document(doc_id, groups)

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self.loop.close()


def build_app(
    settings: Settings,
    deps: Deps,
    assistant: Agent,
    state: ConversationState,
    traces: TraceStore | None = None,
) -> web.Application:
    """The aiohttp application. ``deps`` gives the directory; ``assistant`` answers; ``state``
    remembers; ``traces`` is where the assistant keeps each turn's trace (the admin page reads
    it; by default the local SQLite file the assistant writes without one)."""
    # serve() has already refused a missing or weak secret; tests and local runs get a generated one
    links = LinkSigner.from_settings(settings, generate=True)
    signin: SignIn | None = None
    app = web.Application(client_max_size=1024 * 1024)
    app[STATE_KEY] = state
    records = TurnLog.from_settings(
        settings.database, settings.data_dir, settings.privacy.retention_days
    )
    app[RECORDS_KEY] = records
    app.cleanup_ctx.append(_purging(records))
    app[SLACK_KEY] = None
    app[TEAMS_KEY] = None
    admin = AdminAccess(
        key=links.derive("admin"),
        public_url=settings.server.public_url,
        directory=deps.directory,
        admin_groups=settings.admin_groups,
        redis=state.client,
        redis_prefix=settings.redis.key_prefix,
        link_ttl_s=settings.server.admin_link_ttl_s,
        session_ttl_s=settings.server.admin_session_ttl_s,
    )
    if traces is None:
        from agent.traces import SqliteTraceStore

        traces = SqliteTraceStore(settings.data_dir / "traces.sqlite")

    def sources() -> list[SourceRecord]:
        state_db = SyncState.open(settings.database, settings.data_dir, connect_timeout=3)
        try:
            return state_db.sources()
        finally:
            state_db.close()

    admin_routes(
        app,
        admin,
        AdminData(
            records=records,
            traces=traces,
            documents=assistant,
            sources=sources,
            retention_days=settings.privacy.retention_days,
        ),
    )

    def conversation(platform: str, private_chat: str) -> Conversation:
        return Conversation(
            assistant,
            state,
            deps.directory,
            links,
            platform=platform,
            private_chat=private_chat,
            unknown_members=settings.channels.unknown_members,
            records=records,
            admin=admin,
        )

    if settings.slack is not None:
        from bot.chat.slack import SlackAdapter

        slack = SlackAdapter(settings.slack, conversation("slack", "direct message"))
        app[SLACK_KEY] = slack
        app.router.add_post("/slack/events", slack.handle)
    if settings.teams is not None:
        from bot.chat.teams import TeamsAdapter

        teams = TeamsAdapter(settings.teams, conversation("teams", "personal chat"))
        app[TEAMS_KEY] = teams
        app.router.add_post("/api/messages", teams.handle)
    if settings.server.oidc is not None:
        oidc = SignIn(settings.server.oidc, settings.server.public_url, links.derive("cookies"))
        app.router.add_get(CALLBACK_PATH, oidc.callback)

        async def close_signin(_: web.Application) -> None:
            await oidc.close()

        app.on_cleanup.append(close_signin)
        signin = oidc
    app.router.add_get("/docs/{doc_id:.+}", docs_route(links, deps.directory, assistant, signin))
    if settings.scim is not None:
        from bot.identity.scim import ScimDirectory, scim_routes

        assert isinstance(deps.directory, ScimDirectory)  # Deps builds it from the same setting
        scim_routes(app, deps.directory.store, settings.scim.token.get_secret_value())

    async def healthz(request: web.Request) -> web.Response:
        try:
            redis_ok = bool(await asyncio.wait_for(state.client.ping(), 1.0))
        except (RedisError, OSError, TimeoutError):
            redis_ok = False
        return web.json_response(
            {
                "status": "ok",
                "slack": app[SLACK_KEY] is not None,
                "teams": app[TEAMS_KEY] is not None,
                "redis": redis_ok,
            }
        )

    app.router.add_get("/healthz", healthz)
    return app


def _purging(records: TurnLog):
    """While the app runs: delete turns past the retention period, at start and every hour."""

    async def purge_loop() -> None:
        while True:
            turns, feedback = await records.purge()
            if turns or feedback:
                log.info(
                    "deleted %d turns and %d feedback records older than %d days",
                    turns,
                    feedback,
                    records.retention_days,
                )
            await asyncio.sleep(PURGE_EVERY_S)

    async def context(_: web.Application):
        task = asyncio.ensure_future(purge_loop())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        records.close()

    return context


async def serve(
    settings: Settings, socket_mode: bool = False, *, ready: asyncio.Event | None = None
) -> None:
    """Build deps, assistant and state from settings; serve HTTP (and Slack Socket Mode) until cancelled."""
    import redis

    from agent.actions import RedisPendingActions
    from agent.assistant import build_assistant
    from agent.traces import RedisTraceStore
    from bot.app import build_deps
    from bot.web.ops import add_ops_routes

    install_redaction(secret_values(settings))  # before anything can log a secret
    check_teams(settings.teams, settings.server.host)
    if socket_mode and (settings.slack is None or settings.slack.app_token is None):
        raise ConfigError(
            "Socket Mode needs a Slack app-level token: set FOOTNOTE_SLACK__APP_TOKEN (xapp-…)"
        )
    link_secret(settings, generate=False)  # refuse a missing, short or placeholder secret
    log.info(security_posture(settings))
    if settings.slack is None and settings.teams is None:
        log.warning(
            "neither Slack nor Teams is configured (FOOTNOTE_SLACK__* / FOOTNOTE_TEAMS__*); serving /docs and /healthz only"
        )
    deps = build_deps(settings)
    await asyncio.to_thread(
        lambda: (deps.directory, deps.index, deps.embedders)
    )  # the directory first (a missing Graph credential stops here at once), then the models
    # loaded and warm before the server says it serves: the first question waits for no model
    started = time.perf_counter()
    await asyncio.gather(*(asyncio.to_thread(warm) for warm in deps.warmers()))
    log.info("models loaded and warm in %.1f s", time.perf_counter() - started)
    pool = redis.BlockingConnectionPool.from_url(
        settings.redis.url, **redis_pool_kwargs(settings.redis)
    )
    pending = RedisPendingActions(
        redis.Redis(connection_pool=pool), prefix=settings.redis.key_prefix + "pending:"
    )
    traces = RedisTraceStore(pending.client, key=settings.redis.key_prefix + "traces")
    assistant = AgentThread(
        build_assistant(
            deps, pending=pending, traces=traces, pending_ttl_s=settings.redis.pending_ttl_s
        )
    )
    state = ConversationState.from_settings(settings.redis)
    app = build_app(settings, deps, assistant, state, traces)
    if settings.digest.enabled or settings.slack or settings.teams:
        # with no default channel, owners' routes (footnote digest route) may still want theirs
        from bot.reports.digest import report_builder, scheduled

        app.cleanup_ctx.append(scheduled(settings, report_builder(settings, deps), deps.directory))
    add_ops_routes(app, deps, deps.telemetry.metrics, state.client)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, settings.server.host, settings.server.port)
    await site.start()
    socket_handler = None
    try:
        if socket_mode:
            assert settings.slack is not None and settings.slack.app_token is not None
            from bot.chat.slack import SlackAdapter

            slack = app[SLACK_KEY]
            assert isinstance(slack, SlackAdapter)
            socket_handler = slack.socket_mode_handler(settings.slack.app_token.get_secret_value())
            await socket_handler.connect_async()
            log.info("Slack Socket Mode connected")
        log.info(
            "serving on http://%s:%s (public URL %s)",
            settings.server.host,
            settings.server.port,
            settings.server.public_url,
        )
        if ready is not None:
            ready.set()
        await asyncio.Event().wait()
    finally:
        if socket_handler is not None:
            await socket_handler.close_async()
        await runner.cleanup()
        await state.close()
        assistant.close()
        deps.close()


def security_posture(settings: Settings) -> str:
    """One line that says how this server is protected (logged at start, never a secret)."""
    s = settings
    parts = [
        f"bind {s.server.host}:{s.server.port}",
        (
            "slack: signed requests only"
            + (
                ", thread follow-ups on (every channel message received)"
                if s.slack.thread_followups
                else ""
            )
            if s.slack
            else "slack: off"
        ),
        teams_posture(s.teams),
        links_posture(s),
        f"rate {s.redis.rate_per_minute}/min per person"
        if s.redis.rate_per_minute
        else "rate: UNLIMITED",
        f"channels with strangers: {s.channels.unknown_members}",
        f"crm readers: {','.join(s.crm.reader_groups) or 'nobody'}",
    ]
    return "security posture: " + " · ".join(parts)


def run(settings: Settings, socket_mode: bool = False) -> int:
    """Blocking entry point for ``footnote serve [--socket-mode]``; returns an exit code on Ctrl-C / SIGTERM."""
    configure_logging(settings)

    async def main() -> None:
        task = asyncio.ensure_future(serve(settings, socket_mode))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(main())
    return 0
