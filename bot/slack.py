"""The Slack adapter: Slack events → ``Turn`` → ``assistant.answer`` → Block Kit. It only translates.

Bolt (``AsyncApp``) verifies signatures, answers URL verification and acknowledges events at once;
the listeners then work in the background: post a placeholder, update it with progress, replace it
with the answer. DMs (``message.im``) and ``app_mention`` in channels are questions; the answer to
a mention goes in the thread, and follow-ups in a DM or thread carry the Redis history. In a
channel the agent gets every member's groups and shows only what all of them may read.

With ``thread_followups`` on, a reply by anyone in a channel thread where the bot has answered is
a follow-up without a new @mention (``message.channels`` / ``message.groups``). Slack then sends
every channel message; all but those replies are dropped unread: not stored, not logged.

Buttons: Confirm / Cancel a pending ticket (only the asker, filed once — ``assistant.confirm``
takes the action atomically), 👍 / 👎 feedback (stored in Redis), and "open a ticket" after an
"I don't know". Retries and replays are answered once: by ``event_id``, or by a hash of the
signed body when an event has none.

What only the asker may see (the hint that a private document may answer better) goes to them as
an ephemeral message, never into the channel. Every ``text`` sent is inert (``render.slack_inert``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qsl

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from agent.assistant import error_reference
from agent.turns import Answer, Turn
from bot import render
from bot.directory import Directory, Person
from bot.links import LinkSigner
from bot.render import EMPTY_QUESTION, NOT_IN_DIRECTORY, SOMETHING_WENT_WRONG
from bot.settings import SlackSettings
from bot.state import RATE_LIMITED, ConversationState

log = logging.getLogger(__name__)

ChannelKind = Literal["dm", "channel"]

PROGRESS_INTERVAL_S = 0.5  # at most one progress edit per half second (chat.update is rate-limited)
MAX_MEMBERS = 500  # members resolved in a channel; the rest count as readers of public docs only
USER_CACHE_S = 600.0

_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")
_LINK = re.compile(r"<((?:https?|mailto):[^>|]+)(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<!(?:subteam\^[A-Z0-9]+\|)?([^>|]+)(?:\|[^>]*)?>")
_CHANNEL = re.compile(r"<#[A-Z0-9]+\|([^>]*)>")
_ALLOWED_SUBTYPES = {None, "file_share", "thread_broadcast"}
_CHANNEL_TYPES = {"channel", "group", "mpim"}  # message.channels / .groups / .mpim

STRANGERS_HERE = (
    "I can't answer in this channel: some members are not in the company directory "
    "(guests or people from other organisations). Ask me in a direct message."
)


@dataclass(frozen=True)
class Members:
    """Who is in a channel, as far as answering goes: each distinct group list, and how many
    (human) members the directory does not know."""

    groups: tuple[tuple[str, ...], ...]
    strangers: int = 0


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


def _typed(obj: dict, shapes: dict[str, type]) -> bool:
    return all(k not in obj or obj[k] is None or isinstance(obj[k], t) for k, t in shapes.items())


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
            payload = json.loads(form["payload"])
            return (
                isinstance(payload, dict)
                and _typed(payload, _PAYLOAD_SHAPES)
                and all(isinstance(a, dict) for a in payload.get("actions") or [])
            )
        body = json.loads(text)
        if not isinstance(body, dict) or not _typed(body, _SHAPES):
            return False
        event = body.get("event") or {}
        return event.get("type") not in ("message", "app_mention") or _typed(event, _EVENT_SHAPES)
    except ValueError:  # not UTF-8, not JSON
        return False


class SlackAdapter:
    def __init__(
        self,
        settings: SlackSettings,
        assistant,
        state: ConversationState,
        directory: Directory,
        links: LinkSigner,
        client: AsyncWebClient | None = None,
        *,
        unknown_members: Literal["public", "refuse"] = "public",
    ):
        self.assistant, self.state, self.directory, self.links = assistant, state, directory, links
        self.unknown_members = unknown_members
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
        self._emails: dict[str, tuple[float, str, bool]] = {}  # slack id → (when, email, is_bot)
        self.progress_interval_s = PROGRESS_INTERVAL_S
        self._register()

    # -- wiring ----------------------------------------------------------------------------

    def _register(self) -> None:
        app = self.app
        app.event("message")(self._on_message)
        app.event("app_mention")(self._on_mention)
        app.action(render.CONFIRM)(self._on_confirm)
        app.action(render.CANCEL)(self._on_cancel)
        app.action(re.compile(f"^({render.FEEDBACK_UP}|{render.FEEDBACK_DOWN})$"))(
            self._on_feedback
        )
        app.action(render.TICKET_OFFER)(self._on_ticket_offer)
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

    def socket_mode_handler(self, app_token: str):
        from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

        return AsyncSocketModeHandler(self.app, app_token)

    async def _on_error(self, error: Exception, body: dict, logger) -> None:
        log.error("slack listener failed: %r", error, exc_info=error)

    # -- events ----------------------------------------------------------------------------

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
        thread_ts = event.get("thread_ts")
        conversation = f"slack:{body.get('team_id', '')}:{event.get('channel', '')}" + (
            f":{thread_ts}" if thread_ts else ""
        )
        await self._answer(event, context, conversation, channel_kind="dm", thread_ts=thread_ts)

    async def _on_mention(self, event: dict, body: dict, context, request) -> None:
        if not self._from_a_person(event, context):
            return
        if not await self._first_delivery(body, request):
            return
        thread_ts = event.get("thread_ts") or event.get("ts")
        conversation = f"slack:{body.get('team_id', '')}:{event.get('channel', '')}:{thread_ts}"
        await self._answer(
            event, context, conversation, channel_kind="channel", thread_ts=thread_ts
        )

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
        conversation = f"slack:{body.get('team_id', '')}:{event['channel']}:{thread_ts}"
        if not await self.state.has_answered(conversation):
            return
        if not await self._first_delivery(body, request):
            return
        await self._answer(
            event, context, conversation, channel_kind="channel", thread_ts=thread_ts
        )

    async def _first_delivery(self, body: dict, request) -> bool:
        event_id = body.get("event_id")
        if isinstance(event_id, str) and event_id:
            return await self.state.first_delivery(f"slack:{event_id}")
        # No event id (never from Slack itself): the signed body is the identity of the event,
        # so a replay or retry of it is answered once.
        raw = getattr(request, "raw_body", "") or json.dumps(body, sort_keys=True)
        digest = hashlib.sha256(raw.encode() if isinstance(raw, str) else raw).hexdigest()
        return await self.state.first_delivery(f"slack-body:{digest}")

    async def _answer(
        self,
        event: dict,
        context,
        conversation: str,
        *,
        channel_kind: ChannelKind,
        thread_ts: str | None,
    ) -> None:
        channel = event.get("channel")
        if not channel:
            return
        try:
            await self._answer_in(channel, event, context, conversation, channel_kind, thread_ts)
        except Exception:
            ref = error_reference()
            log.exception("slack answer failed (reference %s)", ref)
            await self._safe_post(channel, thread_ts, SOMETHING_WENT_WRONG.format(ref=ref))

    async def _answer_in(
        self,
        channel: str,
        event: dict,
        context,
        conversation: str,
        channel_kind: ChannelKind,
        thread_ts: str | None,
    ) -> None:
        person = await self.person(event["user"])
        if person is None:
            await self._post(channel, thread_ts, NOT_IN_DIRECTORY)
            return
        raw = event.get("text")
        text = question_text(raw if isinstance(raw, str) else "", context.bot_user_id, self._name)
        if not text:
            await self._post(channel, thread_ts, EMPTY_QUESTION)
            return
        if not await self.state.allow(person.user_id):
            await self._post(channel, thread_ts, RATE_LIMITED)
            return
        member_groups: tuple[tuple[str, ...], ...] = ()
        if channel_kind == "channel":
            members = await self.members(channel, context.bot_user_id, person)
            if members.strangers and self.unknown_members == "refuse":
                await self._post(channel, thread_ts, STRANGERS_HERE)
                return
            member_groups = members.groups
        placeholder = await self.client.chat_postMessage(
            channel=channel,
            thread_ts=thread_ts,
            text=render.PLACEHOLDER,
            blocks=render.slack_progress_blocks(render.PLACEHOLDER),
        )
        ts = placeholder["ts"]
        if channel_kind == "channel" and thread_ts and self.thread_followups:
            await self.state.note_answered(conversation)
        history = await self.state.history(conversation)
        notice = self.state.forgetful_notice(conversation, history)
        turn = Turn(
            user_id=person.user_id,
            text=text,
            groups=person.groups,
            display_name=person.name,
            email=person.email,
            channel_kind=channel_kind,
            member_groups=member_groups,
            conversation_id=conversation,
            history=history.messages,
        )
        try:
            answer = await self.assistant.answer(turn, self._progress(channel, ts))
        except Exception:
            ref = error_reference()
            log.exception("assistant failed (reference %s)", ref)
            text = SOMETHING_WENT_WRONG.format(ref=ref)
            await self.client.chat_update(
                channel=channel,
                ts=ts,
                text=render.slack_inert(text),
                blocks=render.slack_message_blocks(text),
            )
            return
        await self.state.remember(conversation, text, answer.text)
        blocks = render.slack_blocks(
            answer,
            links=self.links.linker(person.user_id),
            turn_id=turn.turn_id,
            question=text,
            asker=person.user_id,
            notice=notice,
        )
        try:
            await self.client.chat_update(
                channel=channel, ts=ts, text=render.slack_text(answer), blocks=blocks
            )
        except SlackApiError as exc:  # e.g. invalid_blocks: never leave the placeholder hanging
            log.error(
                "chat.update with blocks failed (%s); sending plain text", exc.response.get("error")
            )
            await self.client.chat_update(
                channel=channel,
                ts=ts,
                text=render.slack_text(answer),
                blocks=render.slack_message_blocks(answer.text),
            )
        if answer.private_note and channel_kind == "channel":
            await self._safe_ephemeral(channel, event["user"], answer.private_note, thread_ts)

    def _progress(self, channel: str, ts: str) -> Callable[[str], Awaitable[None]]:
        last = time.monotonic()

        async def progress(text: str) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last < self.progress_interval_s:
                return
            last = now
            try:
                await self.client.chat_update(
                    channel=channel,
                    ts=ts,
                    text=render.slack_inert(text),
                    blocks=render.slack_progress_blocks(text),
                )
            except SlackApiError as exc:  # progress is best-effort
                log.info("progress update failed: %s", exc)

        return progress

    async def _post(self, channel: str, thread_ts: str | None, text: str) -> None:
        await self.client.chat_postMessage(
            channel=channel,
            thread_ts=thread_ts,
            text=render.slack_inert(text),
            blocks=render.slack_message_blocks(text),
        )

    async def _safe_post(self, channel: str, thread_ts: str | None, text: str) -> None:
        try:
            await self._post(channel, thread_ts, text)
        except Exception:
            log.exception("could not tell the user something went wrong")

    # -- identity --------------------------------------------------------------------------

    async def _profile(self, slack_id: str) -> tuple[str, bool]:
        cached = self._emails.get(slack_id)
        if cached and cached[0] > time.monotonic() - USER_CACHE_S:
            return cached[1], cached[2]
        try:
            info = await self.client.users_info(user=slack_id)
        except SlackApiError as exc:
            log.info("users.info %s failed: %s", slack_id, exc)
            return "", False
        user = info.get("user") or {}
        email = (user.get("profile") or {}).get("email") or ""
        is_bot = bool(user.get("is_bot")) or slack_id == "USLACKBOT"
        self._emails[slack_id] = (time.monotonic(), email, is_bot)
        return email, is_bot

    async def person(self, slack_id: str) -> Person | None:
        """The directory entry for a Slack user: by Slack id, else by the e-mail Slack knows."""
        person = self.directory.find(slack_id)
        if person is not None:
            return person
        email, _ = await self._profile(slack_id)
        return self.directory.find(email) if email else None

    def _name(self, slack_id: str) -> str:
        person = self.directory.find(slack_id)
        return person.name if person else slack_id

    async def members(self, channel: str, bot_user_id: str | None, asker: Person) -> Members:
        """Every (human) channel member's groups. A member we cannot place reads public docs only
        and counts as a stranger."""
        ids: list[str] = []
        cursor = None
        try:
            while len(ids) < MAX_MEMBERS * 4:
                resp = await self.client.conversations_members(
                    channel=channel, cursor=cursor, limit=200
                )
                ids += resp.get("members") or []
                cursor = (resp.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    break
        except SlackApiError as exc:
            log.warning(
                "conversations.members %s failed: %s; answering from public docs only", channel, exc
            )
            return Members((asker.groups, ()), strangers=1)
        groups: dict[str, tuple[str, ...]] = {asker.slack_id or asker.user_id: asker.groups}
        strangers = 0
        lookups = 0
        for member in dict.fromkeys(ids):
            if member == bot_user_id or member in groups:
                continue
            person = self.directory.find(member)
            if person is None and lookups < MAX_MEMBERS:
                lookups += 1
                email, is_bot = await self._profile(member)
                if is_bot:
                    continue
                person = self.directory.find(email) if email else None
            groups[member] = person.groups if person else ()
            strangers += person is None
        return Members(tuple(dict.fromkeys(groups.values())), strangers)

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
        channel = (body.get("channel") or body.get("container") or {}).get("id") or (
            body.get("container") or {}
        ).get("channel_id")
        message = body.get("message") or {}
        message_ts = message.get("ts") or (body.get("container") or {}).get("message_ts")
        thread_ts = message.get("thread_ts")
        if not value.get("a") or not channel:
            return
        try:
            person = await self.person(clicker)
            if person is None or (value.get("u") and person.user_id != value["u"]):
                asker = self.directory.find(value.get("u", ""))
                who = asker.name if asker else "the person who asked"
                await self.client.chat_postEphemeral(
                    channel=channel,
                    user=clicker,
                    thread_ts=thread_ts,
                    text=render.slack_inert(f"Only {who} can confirm or cancel this ticket."),
                )
                return
            # the assistant files at most once; this only decides which click updates the message
            first = await self.state.first_delivery(f"slack-decision:{value['a']}")
            result: Answer = await self.assistant.confirm(value["a"], person.user_id, approve)
            if first and message_ts:
                # the first decision: the buttons go, the outcome takes their place
                await self.client.chat_update(
                    channel=channel,
                    ts=message_ts,
                    text=render.slack_text(result),
                    blocks=self._without_pending(message)
                    + render.slack_blocks(result, links=self.links.linker(person.user_id)),
                )
            else:
                await self.client.chat_postEphemeral(
                    channel=channel,
                    user=clicker,
                    thread_ts=thread_ts,
                    text=render.slack_inert(result.text),
                )
        except Exception:
            ref = error_reference()
            log.exception("confirm/cancel failed (reference %s)", ref)
            await self._safe_ephemeral(channel, clicker, SOMETHING_WENT_WRONG.format(ref=ref))

    @staticmethod
    def _without_pending(message: dict) -> list[dict]:
        """The message's blocks without the ticket proposal and its buttons."""
        blocks = list(message.get("blocks") or [])
        keep: list[dict] = []
        for b in blocks:
            bid = str(b.get("block_id", ""))
            if bid.startswith(("pending:", "pending-summary:", "feedback:", "ticket_offer")):
                continue
            keep.append(b)
        return keep[: render.MAX_BLOCKS - 10]

    async def _safe_ephemeral(
        self, channel: str, user: str, text: str, thread_ts: str | None = None
    ) -> None:
        try:
            await self.client.chat_postEphemeral(
                channel=channel,
                user=user,
                thread_ts=thread_ts,
                text=render.slack_inert(text),
                blocks=render.slack_message_blocks(text),
            )
        except Exception:
            log.exception("ephemeral message failed")

    async def _on_feedback(self, ack, body: dict, action: dict) -> None:
        await ack()
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get(
            "channel_id", ""
        )
        user = (body.get("user") or {}).get("id", "")
        person = self.directory.find(user)
        await self.state.record_feedback(
            {
                "platform": "slack",
                "turn_id": action.get("value", ""),
                "vote": "up" if action.get("action_id") == render.FEEDBACK_UP else "down",
                "user": person.user_id if person else user,
                "channel": channel,
                "message_ts": (body.get("message") or {}).get("ts")
                or (body.get("container") or {}).get("message_ts", ""),
            }
        )
        if channel and user:
            await self._safe_ephemeral(channel, user, "Thanks for the feedback!")

    async def _on_ticket_offer(self, ack, body: dict, action: dict, context) -> None:
        """ "Ask a person" after an "I don't know": a ticket request, confirmed like any other."""
        await ack()
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get(
            "channel_id"
        )
        message = body.get("message") or {}
        user = (body.get("user") or {}).get("id")
        question = action.get("value") or ""
        if not channel or not user or not question:
            return
        event = {"user": user, "channel": channel, "text": f"Please open a ticket: {question}"}
        thread_ts = message.get("thread_ts")
        kind: ChannelKind = "dm" if channel.startswith("D") else "channel"
        conversation = f"slack:{body.get('team', {}).get('id', '')}:{channel}" + (
            f":{thread_ts}" if thread_ts else ""
        )
        await self._answer(event, context, conversation, channel_kind=kind, thread_ts=thread_ts)
