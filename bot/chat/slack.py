"""The Slack adapter: Slack events → ``Question`` → the conversation core (``bot/chat/conversation.py``)
→ Block Kit. It only translates and renders; what a turn does is the core's, as for Teams.

Bolt (``AsyncApp``) verifies signatures, answers URL verification and acknowledges events at once;
the listeners then work in the background: post a placeholder, update it with progress, replace it
with the answer. DMs (``message.im``) and ``app_mention`` in channels are questions; the answer to
a mention goes in the thread, and follow-ups in a DM or thread carry the Redis history. In a
channel the agent gets every member's groups and shows only what all of them may read.

With ``thread_followups`` on, a reply by anyone in a channel thread where the bot has answered is
a follow-up without a new @mention (``message.channels`` / ``message.groups``). Slack then sends
every channel message; all but those replies are dropped unread: not stored, not logged.

Buttons: Confirm / Cancel a pending ticket (only the asker, filed once — ``assistant.confirm``
takes the action atomically), 👍 / 👎 feedback and then its reason (only the asker; the reasons
come to them alone, as an ephemeral message), and "open a ticket" after an
"I don't know". Retries and replays are answered once: by ``event_id``, or by a hash of the
signed body when an event has none.

Slack's assistant side panel (Bolt's ``AsyncAssistant``): a new assistant thread gets the greeting
and the suggested prompts (``FOOTNOTE_SLACK__SUGGESTED_PROMPTS``); a question in one shows the
native status line ("is searching the documents…", then each step's progress) instead of a
placeholder message, and the answer arrives as the thread's reply, which clears the status. A DM
thread that is no assistant thread (the status is refused) falls back to the placeholder.

With an LLM that streams, an assistant thread also shows the answer while it is written: the
first words start a streamed reply (``chat.startStream``), more follow at most once a second
(``chat.appendStream``, Tier 4), as inert Markdown in whole words (``render.draft_markdown``).
When the checked answer is ready the stream is stopped (``chat.stopStream``) and the message is
replaced by the answer as it is shown today (``chat.update``: citations, Sources, buttons); if
that is refused, the streamed message is deleted and the answer posted, so no unchecked draft
stays. A workspace that refuses streaming (an error from ``chat.startStream``) gets the answer
as before; channels and DMs without a thread never stream.

What only the asker may see (the hint that a private document may answer better) goes to them as
an ephemeral message, never into the channel. Every ``text`` sent is inert (``slack_blocks.slack_inert``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Literal
from urllib.parse import parse_qsl

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.adapter.socket_mode.async_internals import run_async_bolt_app, send_async_response
from slack_bolt.async_app import AsyncApp, AsyncAssistant
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from agent.drafts import Drafting
from agent.loop import Progress
from agent.messages import say as message
from agent.turns import Answer
from bot.chat import render, slack_blocks
from bot.chat.conversation import (
    MAX_MEMBERS,
    ChannelKind,
    Conversation,
    DraftWords,
    Member,
    Profile,
    Question,
    conversation_id,
    throttled,
)
from bot.settings import SlackSettings

log = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 0.5  # at most one progress edit per half second (chat.update is rate-limited)
# At most one chat.appendStream a second (Tier 4 allows 100+ a minute per workspace: room for
# several answers streaming at once).
DRAFT_INTERVAL_S = 1.0
USER_CACHE_S = 600.0
SLASH_COMMAND = "/footnote"  # deploy/slack-manifest.yaml declares it
COMMAND_USAGE = "Usage: /footnote admin — a sign-in link to the admin page, sent to you in a DM."
COMMAND_NO_DM = 'I could not open a direct message with you. Write "admin" to me in a DM instead.'

_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
_LINK = re.compile(r"<((?:https?|mailto):[^>|]+)(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<!(?:subteam\^[A-Z0-9]+\|)?([^>|]+)(?:\|[^>]*)?>")
_CHANNEL = re.compile(r"<#[A-Z0-9]+\|([^>]*)>")
_ALLOWED_SUBTYPES = {None, "file_share", "thread_broadcast"}
_CHANNEL_TYPES = {"channel", "group", "mpim"}  # message.channels / .groups / .mpim


def question_text(
    text: str, bot_user_id: str | None, names: Callable[[str], str] = lambda uid: uid
) -> str:
    """Slack mrkdwn as the plain question: the bot's mention removed, others as @name, links as text."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    text = _MENTION.sub(lambda m: "@" + names(m.group(1)), text)
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _CHANNEL.sub(lambda m: "#" + m.group(1), text)
    text = _SPECIAL.sub(lambda m: "@" + m.group(1), text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return re.sub(r"[ \t]+", " ", text).strip()


def _mentions(text: object, bot_user_id: str) -> bool:
    """Does this mrkdwn text @mention the bot (``<@U…>`` or ``<@U…|name>``)?"""
    return isinstance(text, str) and bool(
        re.search(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", text)
    )


# The parts of a body that Bolt and our listeners read, and the JSON type each must have.
_SHAPES = {"event": dict, "event_id": str, "type": str, "team_id": str, "authorizations": list}
_PAYLOAD_SHAPES = {
    "type": str,
    "user": dict,
    "actions": list,
    "channel": dict,
    "container": dict,
    "message": dict,
    "team": dict,
}
# Of the events we answer (message, app_mention); other event types have other shapes.
_EVENT_SHAPES = {"user": str, "channel": str, "text": str, "ts": str, "thread_ts": str}


def _typed(obj: dict[str, Any], shapes: Mapping[str, type]) -> bool:
    return all(k not in obj or obj[k] is None or isinstance(obj[k], t) for k, t in shapes.items())


def _event_body_shaped(body: object) -> bool:
    """An Events API body (HTTP, or a Socket Mode ``events_api`` payload) Bolt can read."""
    if not isinstance(body, dict) or not _typed(body, _SHAPES):
        return False
    event = body.get("event") or {}
    return event.get("type") not in ("message", "app_mention") or _typed(event, _EVENT_SHAPES)


def _action_payload_shaped(payload: object) -> bool:
    """An interactivity payload (a button, a text input) Bolt and the listeners can read."""
    return (
        isinstance(payload, dict)
        and _typed(payload, _PAYLOAD_SHAPES)
        and all(isinstance(a, dict) for a in payload.get("actions") or [])
    )


def _slack_shaped(raw: bytes, content_type: str) -> bool:
    """Is this body shaped like anything Slack sends: a JSON object (Events API), or a form with a
    JSON-object ``payload`` (interactivity) or with ``command`` (slash commands), with the fields
    Bolt and the listeners read of the JSON types Slack gives them?"""
    try:
        text = raw.decode("utf-8")
        if content_type == "application/x-www-form-urlencoded":
            form = dict(parse_qsl(text, keep_blank_values=True))
            if "payload" not in form:
                return "command" in form
            return _action_payload_shaped(json.loads(form["payload"]))
        return _event_body_shaped(json.loads(text))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested past the parser's depth
        return False


# Socket Mode envelopes (https://api.slack.com/apis/socket-mode): what each type's payload must be.
_PAYLOAD_CHECKS: dict[str, Callable[[object], bool]] = {
    "events_api": _event_body_shaped,
    "interactive": _action_payload_shaped,
    "slash_commands": lambda p: isinstance(p, dict) and isinstance(p.get("command"), str),
}
_ENVELOPE_ID = re.compile(r'"envelope_id"\s*:\s*"([\w-]{1,100})"')


def envelope_problem(raw: str) -> tuple[str | None, str | None]:
    """(envelope id, what is wrong) of a Socket Mode message; ``(id, None)`` when it is one Bolt
    can take. The id is read from the text even when the JSON is not, so the envelope can still
    be acknowledged (Slack would send it again and again)."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        found = _ENVELOPE_ID.search(raw)
        return (found.group(1) if found else None), f"not JSON ({type(exc).__name__})"
    if not isinstance(message, dict):
        return None, f"a JSON {type(message).__name__}, not an object"
    envelope_id = message.get("envelope_id")
    kind = message.get("type")
    if envelope_id is not None and not isinstance(envelope_id, str):
        return None, "envelope_id is not a string"
    if kind in ("hello", "disconnect") and envelope_id is None:
        return None, None  # the connection's own messages, for the Socket Mode client
    if envelope_id is None:
        return None, f"no envelope_id (type {str(kind)[:40]!r})"
    if not isinstance(kind, str) or kind not in _PAYLOAD_CHECKS:
        return envelope_id, f"type {str(kind)[:40]!r} is none Footnote answers"
    if not _PAYLOAD_CHECKS[kind](message.get("payload")):
        return envelope_id, f"its {kind} payload is missing or not shaped as Slack sends it"
    return envelope_id, None


class FootnoteSocketModeClient(SocketModeClient):
    """slack_sdk's aiohttp Socket Mode client that refuses junk before Bolt sees it: a malformed
    envelope is one log line naming what is wrong (slack_sdk logs a traceback, or nothing), and
    every envelope with an id is acknowledged, so Slack stops sending it."""

    async def process_message(self) -> None:
        raw = await self.message_queue.get()
        if raw is None:
            return
        envelope_id, problem = envelope_problem(raw)
        if problem is None:
            await super().run_message_listeners(json.loads(raw), raw)
            return
        log.warning(
            "slack socket mode: dropped an envelope%s: %s",
            f" {envelope_id}" if envelope_id else "",
            problem,
        )
        if envelope_id is not None:
            await self.send_socket_mode_response(SocketModeResponse(envelope_id=envelope_id))


class SocketModeHandler(AsyncSocketModeHandler):
    """Bolt's Socket Mode handler over ``FootnoteSocketModeClient``; it also acknowledges what
    Bolt leaves unacknowledged (an event no listener takes, a body Bolt trips over)."""

    def __init__(self, app: AsyncApp, app_token: str):  # Bolt's, with our client
        self.app, self.app_token = app, app_token
        self.client = FootnoteSocketModeClient(
            app_token=app_token, logger=app.logger, web_client=app.client
        )
        self.client.socket_mode_request_listeners.append(self.handle)  # type: ignore[arg-type]

    async def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        start = time.time()
        try:
            response = await run_async_bolt_app(self.app, req)
        except Exception as exc:  # junk Bolt cannot read, past the checks of envelope_problem
            log.warning(
                "slack socket mode: envelope %s (%s) could not be read: %r",
                req.envelope_id,
                req.type,
                exc,
            )
        else:
            if response.status == 200:
                await send_async_response(client, req, response, start)
                return
            log.info(
                "slack socket mode: envelope %s (%s) not taken: HTTP %s",
                req.envelope_id,
                req.type,
                response.status,
            )
        await client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))


class SlackAdapter:
    def __init__(
        self,
        settings: SlackSettings,
        conversation: Conversation,
        client: AsyncWebClient | None = None,
    ):
        self.conversation = conversation
        self.state = conversation.state
        self.thread_followups = settings.thread_followups
        self.client = client or AsyncWebClient(
            token=settings.bot_token.get_secret_value(),
            base_url=settings.api_url or AsyncWebClient.BASE_URL,
        )
        self.app = AsyncApp(
            signing_secret=settings.signing_secret.get_secret_value(),
            client=self.client,
            # Bolt would log a warning for every unhandled event type; we handle what we subscribe to.
            raise_error_for_unhandled_request=False,
        )
        self.suggested_prompts = settings.suggested_prompts
        self._emails: dict[str, tuple[float, str, bool]] = {}  # slack id → (when, email, is_bot)
        self.progress_interval_s = PROGRESS_INTERVAL_S
        self.draft_interval_s = DRAFT_INTERVAL_S
        self._register()

    # -- wiring ----------------------------------------------------------------------------

    def _register(self) -> None:
        app = self.app
        # First: it takes the side panel's events (and DM thread messages) before the listeners below.
        assistant = AsyncAssistant()
        assistant.thread_started(self._on_assistant_thread_started)
        assistant.thread_context_changed(self._on_assistant_context_changed)
        assistant.user_message(self._on_assistant_message)
        app.use(assistant)
        app.event("message")(self._on_message)
        app.event("app_mention")(self._on_mention)
        app.action(render.CONFIRM)(self._on_confirm)
        app.action(render.CANCEL)(self._on_cancel)
        app.action(re.compile(f"^({render.FEEDBACK_UP}|{render.FEEDBACK_DOWN})$"))(
            self._on_feedback
        )
        app.action(render.FEEDBACK_REASON)(self._on_feedback_reason)
        app.action(render.FEEDBACK_OTHER)(self._on_feedback_other)
        app.action(render.TICKET_OFFER)(self._on_ticket_offer)
        app.command(SLASH_COMMAND)(self._on_command)
        app.error(self._on_error)

    async def handle(self, request: web.Request) -> web.Response:
        """``POST /slack/events``: one dispatch through Bolt (signature checked there). A body
        that is not what Slack ever sends (a JSON object, or a form whose ``payload`` is one) is
        refused first: Bolt would trip over it before it even checks the signature."""
        raw = await request.read()
        if not _slack_shaped(raw, request.content_type):
            return web.Response(status=400, text="not a Slack request")
        try:
            # Bolt reads ids out of the body before it checks the signature, and trips over odd
            # types ("user": 5): such a body is junk, whoever sent it.
            bolt_request = await to_bolt_request(request)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            log.info("a Slack request Bolt cannot read: %r", exc)
            return web.Response(status=400, text="bad request")
        bolt_response = await self.app.async_dispatch(bolt_request)
        return await to_aiohttp_response(bolt_response)

    def socket_mode_handler(self, app_token: str) -> SocketModeHandler:
        return SocketModeHandler(self.app, app_token)

    async def _on_error(self, error: Exception, body: dict, logger) -> None:
        log.error("slack listener failed: %r", error, exc_info=error)

    # -- events → questions ----------------------------------------------------------------

    @staticmethod
    def _from_a_person(event: dict, context) -> bool:
        user = event.get("user")
        return (
            isinstance(user, str)
            and bool(user)
            and not event.get("bot_id")
            and user != context.bot_user_id
            and isinstance(event.get("channel"), str)
        )

    async def _on_message(self, event: dict, body: dict, context, request) -> None:
        if event.get("subtype") not in _ALLOWED_SUBTYPES or not self._from_a_person(event, context):
            return
        kind = event.get("channel_type")
        if kind in _CHANNEL_TYPES and self.thread_followups:
            await self._on_thread_reply(event, body, context, request)
            return
        if kind != "im":
            return
        if not await self._first_delivery(body, request):
            return
        await self._ask(event, body.get("team_id"), context, "dm", event.get("thread_ts"))

    async def _on_assistant_thread_started(self, event: dict, say, set_suggested_prompts) -> None:
        """The side panel opened a thread: the greeting and what to try (nothing is answered yet)."""
        await say(text=slack_blocks.slack_inert(message("en", "smalltalk")))
        if self.suggested_prompts:
            prompts = [{"title": p[:75], "message": p} for p in self.suggested_prompts[:4]]
            try:
                await set_suggested_prompts(prompts=prompts)
            except SlackApiError as exc:  # the greeting is out; prompts are a convenience
                log.info("suggested prompts refused: %s", exc.response.get("error"))

    async def _on_assistant_context_changed(self) -> None:
        """The channel the user is looking at changed. Answers never depend on it, so Bolt's
        default (storing it in message metadata, extra API calls) is not wanted."""

    async def _on_assistant_message(self, event: dict, body: dict, context, request) -> None:
        """A question in an assistant thread (or any DM thread): a DM question, shown natively."""
        if event.get("subtype") not in _ALLOWED_SUBTYPES or not self._from_a_person(event, context):
            return
        if not await self._first_delivery(body, request):
            return
        await self._ask(event, body.get("team_id"), context, "dm", event.get("thread_ts"), True)

    async def _on_mention(self, event: dict, body: dict, context, request) -> None:
        if not self._from_a_person(event, context):
            return
        if not await self._first_delivery(body, request):
            return
        thread_ts = event.get("thread_ts") or event.get("ts")
        await self._ask(event, body.get("team_id"), context, "channel", thread_ts)

    async def _on_thread_reply(self, event: dict, body: dict, context, request) -> None:
        """A channel message: answered as a mention in its thread would be, if it is a reply in a
        thread the bot answered in and does not mention the bot (``app_mention`` answers those).
        Nothing is written before that is known: no de-dupe marker for other messages."""
        thread_ts = event.get("thread_ts")
        if not thread_ts or thread_ts == event.get("ts"):
            return  # a top-level message
        text = event.get("text")
        if not context.bot_user_id or _mentions(text, context.bot_user_id):
            return  # (without the bot's own id a mention cannot be told apart: never answer twice)
        if not isinstance(text, str) or not question_text(text, None):
            return  # a file or a snippet with no words: not said to the bot, so no "ask me" nag
        if not await self.state.has_answered(
            self.conversation_key(body.get("team_id"), event["channel"], thread_ts)
        ):
            return
        if not await self._first_delivery(body, request):
            return
        await self._ask(event, body.get("team_id"), context, "channel", thread_ts)

    async def _first_delivery(self, body: dict, request) -> bool:
        event_id = body.get("event_id")
        if isinstance(event_id, str) and event_id:
            return await self.state.first_delivery(f"slack:{event_id}")
        # No event id (never from Slack itself): the signed body is the identity of the event,
        # so a replay or retry of it is answered once.
        raw = getattr(request, "raw_body", "") or json.dumps(body, sort_keys=True)
        digest = hashlib.sha256(raw.encode() if isinstance(raw, str) else raw).hexdigest()
        return await self.state.first_delivery(f"slack-body:{digest}")

    @staticmethod
    def conversation_key(team: str | None, channel: str, thread_ts: str | None) -> str:
        """A DM, a DM thread or a channel thread: its history and thread marker live under this."""
        return conversation_id("slack", team or "", channel, thread_ts)

    async def _ask(
        self,
        event: dict,
        team: str | None,
        context,
        channel_kind: ChannelKind,
        thread_ts: str | None,
        side_panel: bool = False,
    ) -> None:
        channel = event["channel"]
        raw = event.get("text")
        bot_user_id = context.bot_user_id
        question = Question(
            asker=self._member(event["user"]),
            text=question_text(
                raw if isinstance(raw, str) else "", bot_user_id, self.conversation.name
            ),
            conversation=self.conversation_key(team, channel, thread_ts),
            channel_kind=channel_kind,
            members=(lambda: self._members(channel, bot_user_id))
            if channel_kind == "channel"
            else None,
            mark_thread=channel_kind == "channel" and bool(thread_ts) and self.thread_followups,
        )
        kind = _AssistantReply if side_panel and thread_ts else _ThreadReply
        await self.conversation.ask(question, kind(self, channel, thread_ts, event["user"], team))

    def _progress(self, channel: str, ts: str) -> Progress:
        async def edit(text: str) -> None:
            await self.client.chat_update(
                channel=channel,
                ts=ts,
                text=slack_blocks.slack_inert(text),
                blocks=slack_blocks.slack_progress_blocks(text),
            )

        return throttled(edit, self.progress_interval_s, (SlackApiError,))

    async def _ephemeral(
        self, channel: str, user: str, text: str, thread_ts: str | None = None
    ) -> None:
        await self.client.chat_postEphemeral(
            channel=channel,
            user=user,
            thread_ts=thread_ts,
            text=slack_blocks.slack_inert(text),
            blocks=slack_blocks.slack_message_blocks(text),
        )

    # -- identity --------------------------------------------------------------------------

    async def _profile(self, slack_id: str) -> Profile:
        cached = self._emails.get(slack_id)
        if cached and cached[0] > time.monotonic() - USER_CACHE_S:
            return Profile(cached[1], cached[2])
        try:
            info = await self.client.users_info(user=slack_id)
        except SlackApiError as exc:
            log.info("users.info %s failed: %s", slack_id, exc)
            return Profile()
        user = info.get("user") or {}
        email = (user.get("profile") or {}).get("email") or ""
        is_bot = bool(user.get("is_bot")) or slack_id == "USLACKBOT"
        self._emails[slack_id] = (time.monotonic(), email, is_bot)
        return Profile(email, is_bot)

    def _member(self, slack_id: str) -> Member:
        """A Slack user: known by Slack id, else by the e-mail Slack knows."""
        return Member((slack_id,), lambda: self._profile(slack_id))

    async def _members(self, channel: str, bot_user_id: str | None) -> AsyncIterator[Member]:
        """The channel's members but the bot, page by page (a failure fails closed in the core)."""
        cursor = None
        seen = 0
        while seen < MAX_MEMBERS * 4:
            resp = await self.client.conversations_members(
                channel=channel, cursor=cursor, limit=200
            )
            for member in resp.get("members") or []:
                seen += 1
                if member != bot_user_id:
                    yield self._member(member)
            cursor = (resp.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break

    # -- the slash command -----------------------------------------------------------------

    async def _on_command(self, ack, command: dict, respond) -> None:
        """``/footnote admin``: acknowledged at once (Slack waits 3 s); the sign-in link goes
        to the asker in a DM with the bot — never into the channel it was typed in — and what
        they see where they typed it is ephemeral (the command's response_url)."""
        words = " ".join(str(command.get("text") or "").lower().split())
        if words != "admin":
            await ack(response_type="ephemeral", text=slack_blocks.slack_inert(COMMAND_USAGE))
            return
        await ack()
        user = str(command.get("user_id") or "")
        private, here = await self.conversation.admin_link_command(self._member(user))
        if private:
            try:
                opened = await self.client.conversations_open(users=user)
                await self.client.chat_postMessage(
                    channel=opened["channel"]["id"],
                    text=slack_blocks.slack_inert(private),
                    blocks=slack_blocks.slack_message_blocks(private),
                    unfurl_links=False,
                    unfurl_media=False,
                )
            except SlackApiError as exc:
                log.warning("could not DM the admin link to %s: %s", user, exc)
                here = COMMAND_NO_DM
        await respond(text=slack_blocks.slack_inert(here), response_type="ephemeral")

    # -- buttons ---------------------------------------------------------------------------

    @staticmethod
    def _button_value(action: dict) -> dict[str, Any]:
        try:
            value = json.loads(action.get("value") or "{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    async def _on_confirm(self, ack, body: dict, action: dict) -> None:
        await ack()
        await self._decide(body, action, approve=True)

    async def _on_cancel(self, ack, body: dict, action: dict) -> None:
        await ack()
        await self._decide(body, action, approve=False)

    async def _decide(self, body: dict, action: dict, approve: bool) -> None:
        value = self._button_value(action)
        clicker = (body.get("user") or {}).get("id", "")
        channel = _channel_of(body)
        if not value.get("a") or not channel:
            return
        reply = _ClickReply(self, body, channel, clicker, str(value["a"]))
        await self.conversation.decide(
            self._member(clicker), str(value["a"]), str(value.get("u") or ""), approve, reply
        )

    async def _on_feedback(self, ack, body: dict, action: dict) -> None:
        await ack()
        raw = action.get("value") or ""
        value = self._button_value(action) if raw.startswith("{") else {"t": raw}
        vote: Literal["up", "down"] = (
            "up" if action.get("action_id") == render.FEEDBACK_UP else "down"
        )
        await self._feedback(body, str(value.get("t") or ""), vote, str(value.get("u") or ""))

    async def _on_feedback_reason(self, ack, body: dict, action: dict) -> None:
        await ack()
        value = self._button_value(action)
        await self._feedback(
            body, str(value.get("t") or ""), "down", str(value.get("u") or ""), str(value.get("r"))
        )

    async def _on_feedback_other(self, ack, body: dict, action: dict) -> None:
        """The asker's own words, sent with Enter from the reasons' text input."""
        await ack()
        parsed = slack_blocks.parse_other_block(str(action.get("block_id") or ""))
        note = action.get("value")
        if parsed is None or not isinstance(note, str) or not note.strip():
            return
        vote, turn_id, asker = parsed
        await self._feedback(body, turn_id, "up" if vote == "up" else "down", asker, "other", note)

    async def _feedback(
        self,
        body: dict,
        turn_id: str,
        vote: Literal["up", "down"],
        asker: str,
        reason: str = "",
        note: str = "",
    ) -> None:
        if not turn_id:
            return
        channel = _channel_of(body) or ""
        user = (body.get("user") or {}).get("id", "")
        await self.conversation.feedback(
            Member((user,)),
            turn_id,
            vote,
            _ClickReply(self, body, channel, user, ""),
            asker=asker,
            reason=reason,
            note=note,
        )

    async def _on_ticket_offer(self, ack, body: dict, action: dict, context) -> None:
        """ "Ask a person" after an "I don't know": a ticket request, confirmed like any other."""
        await ack()
        channel = _channel_of(body)
        user = (body.get("user") or {}).get("id")
        question = action.get("value") or ""
        if not channel or not user or not question:
            return
        event = {"user": user, "channel": channel, "text": Conversation.ticket_request(question)}
        kind: ChannelKind = "dm" if channel.startswith("D") else "channel"
        thread_ts = (body.get("message") or {}).get("thread_ts")
        await self._ask(event, (body.get("team") or {}).get("id"), context, kind, thread_ts)


def _channel_of(body: dict) -> str | None:
    """The channel a button was clicked in."""
    return (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")


class _ThreadReply:
    """Replies to a question in its DM or thread: a placeholder, updated with progress and then
    replaced by the answer (or by whatever else the core says once the placeholder is up)."""

    def __init__(
        self,
        adapter: SlackAdapter,
        channel: str,
        thread_ts: str | None,
        user: str,
        team: str | None = None,
    ):
        self.adapter, self.client = adapter, adapter.client
        self.channel, self.thread_ts, self.user, self.team = channel, thread_ts, user, team
        self.ts: str | None = None  # the placeholder's

    async def streaming(self) -> Drafting | None:
        """A placeholder's thread or a channel: the answer comes whole."""
        return None

    async def say(self, text: str) -> None:
        inert, blocks = slack_blocks.slack_inert(text), slack_blocks.slack_message_blocks(text)
        if self.ts:
            await self.client.chat_update(
                channel=self.channel, ts=self.ts, text=inert, blocks=blocks
            )
        else:
            await self.client.chat_postMessage(
                channel=self.channel, thread_ts=self.thread_ts, text=inert, blocks=blocks
            )

    async def working(self) -> Progress:
        placeholder = await self.client.chat_postMessage(
            channel=self.channel,
            thread_ts=self.thread_ts,
            text=render.PLACEHOLDER,
            blocks=slack_blocks.slack_progress_blocks(render.PLACEHOLDER),
        )
        self.ts = placeholder["ts"]
        return self.adapter._progress(self.channel, placeholder["ts"])

    async def show(self, answer: Answer, view: dict[str, Any]) -> None:
        ts = self.ts
        blocks = slack_blocks.slack_blocks(answer, **view)
        text = slack_blocks.slack_text(answer)
        plain = slack_blocks.slack_message_blocks(answer.text)
        try:
            if ts is None:  # no placeholder (an assistant thread): the answer is the reply
                await self.client.chat_postMessage(
                    channel=self.channel, thread_ts=self.thread_ts, text=text, blocks=blocks
                )
            else:
                await self.client.chat_update(channel=self.channel, ts=ts, text=text, blocks=blocks)
        except SlackApiError as exc:  # e.g. invalid_blocks: never leave the question unanswered
            log.error(
                "the answer's blocks were refused (%s); sending plain text",
                exc.response.get("error"),
            )
            if ts is None:
                await self.client.chat_postMessage(
                    channel=self.channel, thread_ts=self.thread_ts, text=text, blocks=plain
                )
            else:
                await self.client.chat_update(channel=self.channel, ts=ts, text=text, blocks=plain)

    async def tell_privately(self, text: str) -> None:
        try:
            await self.adapter._ephemeral(self.channel, self.user, text, self.thread_ts)
        except Exception:
            log.exception("ephemeral message failed")

    async def ask_reason(self, turn_id: str, vote: Literal["up", "down"], asker: str) -> None:
        """Never asked of a question's reply: reasons follow a click."""


class _AssistantReply(_ThreadReply):
    """A question in Slack's assistant side panel: progress on the thread's status line, no
    placeholder; the answer is posted as the reply, which clears the status. With an LLM that
    streams, the draft streams into the reply and the answer then replaces it (module doc)."""

    words: DraftWords | None = None  # the draft, when this reply streams it
    stream_ts: str | None = None  # the streamed message's, once started

    async def streaming(self) -> Drafting | None:
        self.words = words = DraftWords()
        flush = throttled(self._flush, self.adapter.draft_interval_s, (SlackApiError,))

        async def draft(delta: str) -> None:
            words.add(delta)
            if self.words is not None:
                await flush("")

        return draft

    async def _flush(self, _: str) -> None:
        """The words drafted since the last call, into the streamed reply (started by the first)."""
        if self.words is None:
            return
        text = self.words.take()
        if not text:
            return
        try:
            if self.stream_ts is None:
                started = await self.client.chat_startStream(
                    channel=self.channel,
                    thread_ts=self.thread_ts or "",
                    recipient_team_id=self.team,
                    recipient_user_id=self.user,
                    markdown_text=text,
                )
                self.stream_ts = started["ts"]
            else:
                await self.client.chat_appendStream(
                    channel=self.channel, ts=self.stream_ts, markdown_text=text
                )
        except SlackApiError as exc:  # no streaming here: the answer comes whole, as before
            log.info("streaming refused (%s): the answer comes whole", exc.response.get("error"))
            self.words = None

    async def working(self) -> Progress:
        try:
            await self._status(render.PLACEHOLDER)
        except SlackApiError as exc:  # not an assistant thread: a plain DM thread's placeholder
            log.info("no assistant status here (%s)", exc.response.get("error"))
            self.words = None  # nothing streams beside a placeholder
            return await super().working()
        return throttled(self._status, self.adapter.progress_interval_s, (SlackApiError,))

    async def _stop(self) -> None:
        """End the stream; what it showed becomes the message that ``say`` / ``show`` replace."""
        self.words = None
        if self.stream_ts is None:
            return
        try:
            await self.client.chat_stopStream(channel=self.channel, ts=self.stream_ts)
        except SlackApiError as exc:  # the update below replaces the text all the same
            log.info("chat.stopStream failed: %s", exc.response.get("error"))
        self.ts, self.stream_ts = self.stream_ts, None

    async def say(self, text: str) -> None:
        await self._stop()
        await self._replacing(super().say(text), text)

    async def show(self, answer: Answer, view: dict[str, Any]) -> None:
        await self._stop()
        await self._replacing(super().show(answer, view), answer.text, answer, view)

    async def _replacing(
        self,
        replace: Any,
        text: str,
        answer: Answer | None = None,
        view: dict[str, Any] | None = None,
    ) -> None:
        """Run ``replace`` (an update of the streamed message); if Slack refuses it, delete that
        message and post anew, so that no unchecked draft stays in the thread."""
        streamed = self.ts
        try:
            await replace
        except SlackApiError as exc:
            if streamed is None:
                raise
            log.warning("the streamed draft could not be replaced (%s)", exc.response.get("error"))
            try:
                await self.client.chat_delete(channel=self.channel, ts=streamed)
            except SlackApiError as gone:
                log.error("the streamed draft could not be deleted: %s", gone.response.get("error"))
            self.ts = None
            if answer is not None:
                await super().show(answer, view or {})
            else:
                await super().say(text)

    async def _status(self, text: str) -> None:
        await self.client.assistant_threads_setStatus(
            channel_id=self.channel,
            thread_ts=self.thread_ts or "",
            status=slack_blocks.slack_inert(text),
        )


class _ClickReply:
    """Replies to a button click: our words to the clicker alone (ephemeral); a ticket decision
    replaces the buttons in the message, the first time only."""

    def __init__(self, adapter: SlackAdapter, body: dict, channel: str, clicker: str, action: str):
        self.adapter, self.client = adapter, adapter.client
        self.channel, self.clicker, self.action = channel, clicker, action
        self.message = body.get("message") or {}
        self.message_ts = self.message.get("ts") or (body.get("container") or {}).get("message_ts")
        self.thread_ts = self.message.get("thread_ts")
        self.first = False

    async def say(self, text: str) -> None:
        if self.channel and self.clicker:
            await self.adapter._ephemeral(self.channel, self.clicker, text, self.thread_ts)

    async def streaming(self) -> None:
        return None

    async def working(self) -> None:
        # the assistant files at most once; this decides which click updates the message: the
        # first one accepted, whatever order the assistant's replies come back in
        self.first = await self.adapter.state.first_delivery(f"slack-decision:{self.action}")

    async def show(self, answer: Answer, view: dict[str, Any]) -> None:
        if self.first and self.message_ts:
            await self.client.chat_update(
                channel=self.channel,
                ts=self.message_ts,
                text=slack_blocks.slack_text(answer),
                blocks=_without_pending(self.message) + slack_blocks.slack_blocks(answer, **view),
            )
        else:
            await self.say(answer.text)

    async def tell_privately(self, text: str) -> None:
        await self.say(text)

    async def ask_reason(self, turn_id: str, vote: Literal["up", "down"], asker: str) -> None:
        if self.channel and self.clicker:
            await self.client.chat_postEphemeral(
                channel=self.channel,
                user=self.clicker,
                thread_ts=self.thread_ts,
                text=render.reason_prompt(vote),
                blocks=slack_blocks.slack_reason_blocks(turn_id, vote, asker),
            )


def _without_pending(message: dict) -> list[dict]:
    """The message's blocks without the ticket proposal and its buttons."""
    keep: list[dict] = []
    for b in message.get("blocks") or []:
        bid = str(b.get("block_id", ""))
        if bid.startswith(("pending:", "pending-summary:", "feedback:", "ticket_offer")):
            continue
        keep.append(b)
    return keep[: slack_blocks.MAX_BLOCKS - 10]
