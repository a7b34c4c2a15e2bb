"""The Teams adapter: Bot Framework activities → ``Question`` → the conversation core
(``bot/chat/conversation.py``) → Adaptive Card. It only translates and renders, as for Slack.

``TeamsAdapter.handle`` checks the body's shape, authenticates the request (``bot/chat/teams_auth.py``:
a Bot Framework token is required unless the Emulator's loopback-only mode is on) and hands the
activity to ``CloudAdapter``, which runs ``FootnoteTeamsBot.on_turn``; replies go to the
activity's ``serviceUrl``, the one the token vouches for. In personal chat every message is a
question; in a channel or group chat only a message that @mentions the bot is (the mention is
removed from the text), and the agent gets every member's groups. ``Action.Submit`` arrives as
a message with ``.value``: Confirm / Cancel a pending ticket, feedback and then its reason (a card
of reasons; only the asker may rate their turn), "open a ticket".

In personal chat the bot shows it is working with an informative message ("Looking through the
docs…", then each step's progress) that the answer card then replaces (``update_activity``;
botbuilder-python has no streaming helper); in a channel, a typing indicator.

With an LLM that streams, personal chat uses Teams' streaming protocol instead (``_Stream``):
the first informative update is a typing activity with a ``streaminfo`` entity (streamType
"informative", streamSequence 1) whose reply id is the stream's id; progress goes as further
informative updates, the draft as "streaming" updates carrying the whole inert text so far
(``render.draft_markdown``), each with the next sequence number, at most one a second; the
answer card closes the stream as a message whose ``streaminfo`` says "final". Where the first
update is refused, the informative message of before is used. Group chats and channels never
stream (Teams streams in one-on-one chats only). Being added to a
personal chat, or greeted there, answers with suggested actions (``TeamsSettings.suggested_prompts``).

What only the asker may see (the hint that a private document may answer better) goes to them in
a 1:1 chat the bot opens, never into the channel; where that fails, it is not sent at all. Our own
short messages go as plain text, answers as cards whose document text is never read as Markdown.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any, Literal
from urllib.parse import urlsplit

from aiohttp import web
from botbuilder.core import (
    ActivityHandler,
    CardFactory,
    MessageFactory,
    TurnContext,
    serializer_helper,
)
from botbuilder.core.teams import TeamsInfo
from botbuilder.integration.aiohttp import CloudAdapter
from botbuilder.schema import (
    ActionTypes,
    Activity,
    ActivityTypes,
    CardAction,
    ChannelAccount,
    ConversationParameters,
    Entity,
    TextFormatTypes,
)
from msrest.exceptions import DeserializationError

from agent.drafts import Drafting
from agent.loop import Progress
from agent.messages import say as message
from agent.turns import Answer
from bot.chat import render, teams_cards
from bot.chat.conversation import (
    MAX_MEMBERS,
    ChannelKind,
    Conversation,
    DraftWords,
    Member,
    Question,
    conversation_id,
    throttled,
)
from bot.chat.failure import failure_reply
from bot.chat.teams_auth import (
    KeysUnavailable,
    authenticate,
    bot_authentication,
    check_teams,
    is_loopback,
    teams_posture,
)
from bot.settings import TeamsSettings

__all__ = ["FootnoteTeamsBot", "TeamsAdapter", "activity_problem", "check_teams", "teams_posture"]

log = logging.getLogger(__name__)


def plain(text: str) -> Activity:
    """A short message of ours, never read as Markdown."""
    return Activity(type=ActivityTypes.message, text=text, text_format=TextFormatTypes.plain)


def activity_problem(body: object) -> str | None:
    """What makes ``body`` no Bot Framework activity the adapter can take, or None.

    botbuilder would raise deep inside (a 500) on e.g. ``"from": "x"``, and without a
    ``serviceUrl`` the token's ``serviceurl`` claim would go unchecked.
    """
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    for field in ("type", "channelId"):
        if not isinstance(body.get(field), str) or not body[field].strip():
            return f"'{field}' must be a non-empty string"
    url = body.get("serviceUrl")
    if not isinstance(url, str):
        return "'serviceUrl' must be a string"
    try:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return "'serviceUrl' must be an http(s) URL"
    except ValueError:
        return "'serviceUrl' must be an http(s) URL"
    for field in ("from", "recipient", "conversation"):
        account = body.get(field)
        if not isinstance(account, dict) or not isinstance(account.get("id"), str):
            return f"'{field}' must be an object with a string 'id'"
    return None


def mentions_of(activity: Activity, recipient_id: str) -> list[str]:
    """The texts (``<at>Name</at>``) of the mentions of ``recipient_id`` in the activity."""
    out = []
    for entity in TurnContext.get_mentions(activity):
        props = getattr(entity, "additional_properties", None) or {}
        mentioned = props.get("mentioned") or {}
        if mentioned.get("id") == recipient_id:
            out.append(props.get("text") or f"<at>{mentioned.get('name', '')}</at>")
    return out


def question_text(activity: Activity) -> str:
    """The message without the bot's @mention, as plain text."""
    text = activity.text or ""
    for mention in mentions_of(activity, activity.recipient.id if activity.recipient else ""):
        text = text.replace(mention, " ")
    text = re.sub(r"</?at>", "", text)
    text = re.sub(r"<[^>]+>", " ", text)  # Teams sends a little HTML
    return re.sub(r"\s+", " ", html.unescape(text)).strip()


class FootnoteTeamsBot(ActivityHandler):
    """Activities → the conversation core; its replies → Teams messages and Adaptive Cards."""

    def __init__(self, conversation: Conversation, suggested_prompts: list[str] | None = None):
        self.conversation = conversation
        self.suggested_prompts = list(suggested_prompts or [])

    # -- identity --------------------------------------------------------------------------

    @staticmethod
    def member(account) -> Member:
        """A Teams account: known by AAD object id, Teams id, e-mail or user principal name."""
        if account is None:
            return Member(())
        keys = (
            getattr(account, "aad_object_id", None),
            account.id,
            getattr(account, "email", None),
            getattr(account, "user_principal_name", None),
        )
        return Member(tuple(k for k in keys if k))

    @staticmethod
    async def members(ctx: TurnContext) -> AsyncIterator[Member]:
        """The conversation's members but the bot, page by page (a proactive turn's too: the
        digest reads who is in the conversation it posts to)."""
        token = None
        seen = 0
        while seen < MAX_MEMBERS * 4:
            page = await TeamsInfo.get_paged_members(ctx, token, 500)
            for account in page.members or []:
                seen += 1
                if not (ctx.activity.recipient and account.id == ctx.activity.recipient.id):
                    yield FootnoteTeamsBot.member(account)
            token = page.continuation_token
            if not token:
                break

    # -- turns -----------------------------------------------------------------------------

    async def on_members_added_activity(
        self, members_added: list[ChannelAccount], ctx: TurnContext
    ) -> None:
        """Added to someone's personal chat: the greeting, with what to try."""
        activity = ctx.activity
        me = activity.recipient.id if activity.recipient else None
        if _kind(activity) != "dm" or not any(m.id == me for m in members_added or []):
            return
        await ctx.send_activity(suggesting(message("en", "smalltalk"), self.suggested_prompts))

    async def on_message_activity(self, ctx: TurnContext) -> None:
        activity = ctx.activity
        if activity.id and not await self.conversation.state.first_delivery(
            f"teams:{activity.conversation.id}:{activity.id}"
        ):
            return
        if isinstance(activity.value, dict) and activity.value.get("action"):
            await self.on_submit(ctx, activity.value)
            return
        if _kind(activity) == "channel" and not mentions_of(
            activity, activity.recipient.id if activity.recipient else ""
        ):
            return  # a channel message not addressed to the bot
        await self.ask(ctx, question_text(activity))

    async def ask(self, ctx: TurnContext, text: str) -> None:
        activity = ctx.activity
        kind = _kind(activity)
        question = Question(
            asker=self.member(activity.from_property),
            text=text,
            conversation=conversation_id("teams", activity.conversation.id),
            channel_kind=kind,
            members=(lambda: self.members(ctx)) if kind == "channel" else None,
        )
        await self.conversation.ask(question, _TeamsReply(ctx, self.suggested_prompts))

    async def on_submit(self, ctx: TurnContext, data: dict) -> None:
        activity = ctx.activity
        action = data.get("action")
        clicker = self.member(activity.from_property)
        reply = _TeamsReply(ctx)
        if action in ("confirm", "cancel") and data.get("action_id"):
            await self.conversation.decide(
                clicker,
                str(data["action_id"]),
                str(data.get("asker") or ""),
                action == "confirm",
                reply,
            )
        elif action in ("feedback", "feedback_reason") and data.get("turn_id"):
            note = data.get("note")
            await self.conversation.feedback(
                clicker,
                str(data["turn_id"]),
                "up" if data.get("value") == "up" else "down",
                reply,
                asker=str(data.get("asker") or ""),
                reason=str(data.get("reason") or "") if action == "feedback_reason" else "",
                note=note if isinstance(note, str) else "",
            )
        elif (
            action == "ticket_offer" and isinstance(data.get("question"), str) and data["question"]
        ):
            await self.ask(ctx, Conversation.ticket_request(data["question"]))


def _kind(activity: Activity) -> ChannelKind:
    """Personal chat is a DM; a channel or a group chat is a channel."""
    kind = activity.conversation.conversation_type if activity.conversation else None
    return "dm" if kind in (None, "personal") else "channel"


PROGRESS_INTERVAL_S = 1.0  # at most one edit of the informative message a second
# Teams throttles a stream to about one update a second; informative text is at most 1000 chars.
STREAM_INTERVAL_S = 1.0
MAX_INFORMATIVE_CHARS = 1000


class StreamInfo(Entity):
    """Teams' ``streaminfo`` entity. botbuilder's ``Entity`` serializes its ``type`` only, so the
    stream's fields get their own attribute map."""

    _attribute_map = {
        "type": {"key": "type", "type": "str"},
        "stream_id": {"key": "streamId", "type": "str"},
        "stream_type": {"key": "streamType", "type": "str"},
        "stream_sequence": {"key": "streamSequence", "type": "int"},
    }

    def __init__(
        self,
        *,
        stream_type: str,
        stream_id: str | None = None,
        stream_sequence: int | None = None,
        **kwargs: Any,
    ):
        super().__init__(type="streaminfo", **kwargs)
        self.stream_id, self.stream_type = stream_id, stream_type
        self.stream_sequence = stream_sequence


class _Stream:
    """One streamed reply in personal chat: informative updates, the draft, then the final card."""

    def __init__(self, ctx: TurnContext):
        self.ctx = ctx
        self.id: str | None = None  # the first update's reply id
        self.sequence = 0
        self.words = DraftWords()
        self.drafting = False  # streaming updates have begun: no more informative ones
        self.stopped = False  # Teams refused a streaming update: no more of them

    async def start(self, text: str) -> bool:
        """The first informative update; False when Teams refuses it (no streaming here)."""
        try:
            sent = await self._update("informative", text)
        except Exception as exc:  # an outside call: fall back to the informative message
            log.info("teams streaming refused: %s", exc)
            return False
        self.id = sent.id if sent is not None else None
        return self.id is not None

    async def _update(self, kind: str, text: str):
        """Our progress lines go as plain text; the draft is inert Markdown already."""
        self.sequence += 1
        info = StreamInfo(stream_type=kind, stream_id=self.id, stream_sequence=self.sequence)
        typing = Activity(type=ActivityTypes.typing, text=text, entities=[info])
        if kind == "informative":
            typing.text_format = TextFormatTypes.plain
        return await self.ctx.send_activity(typing)

    async def informative(self, text: str) -> None:
        if not self.drafting:
            await self._update("informative", text[:MAX_INFORMATIVE_CHARS])

    async def flush(self, _: str) -> None:
        if self.stopped or not self.words.take():
            return
        self.drafting = True
        try:
            await self._update("streaming", self.words.shown)
        except Exception as exc:  # e.g. the person pressed Stop: the final card still comes
            log.info("teams stopped taking the draft: %s", exc)
            self.stopped = True

    def final(self, activity: Activity) -> Activity:
        """``activity`` as the message that closes the stream."""
        info = StreamInfo(stream_type="final", stream_id=self.id)
        activity.entities = [*(activity.entities or []), info]
        return activity


def suggesting(text: str, prompts: list[str]) -> Activity:
    """``text`` with up to four suggested actions; a click sends the prompt as a message."""
    activity = plain(text)
    if prompts:
        actions = [CardAction(type=ActionTypes.im_back, title=p[:50], value=p) for p in prompts[:4]]
        activity.suggested_actions = MessageFactory.suggested_actions(actions).suggested_actions
    return activity


class _TeamsReply:
    """Replies in the activity's conversation: our words as plain text, answers as cards; the
    asker's private note in a 1:1 chat the bot opens, or not at all. In personal chat an
    informative message shows progress and the answer card replaces it."""

    def __init__(self, ctx: TurnContext, suggested_prompts: list[str] | None = None):
        self.ctx = ctx
        self.suggested_prompts = suggested_prompts or []
        self.informative: str | None = None  # the id of the message the answer replaces
        self.progress_interval_s = PROGRESS_INTERVAL_S
        self.stream_interval_s = STREAM_INTERVAL_S
        self.stream: _Stream | None = None  # personal chat, with an LLM that streams

    async def say(self, text: str) -> None:
        if self.stream is not None and self.stream.id is not None:
            await self._close(plain(text))
        elif not await self._replace(plain(text)):
            await self.ctx.send_activity(plain(text))

    async def streaming(self) -> Drafting | None:
        """Personal chat only: Teams streams in one-on-one chats."""
        if _kind(self.ctx.activity) != "dm":
            return None
        self.stream = stream = _Stream(self.ctx)
        flush = throttled(stream.flush, self.stream_interval_s, (Exception,))  # an outside call

        async def draft(delta: str) -> None:
            stream.words.add(delta)
            if stream.id is not None:
                await flush("")

        return draft

    async def working(self) -> Progress | None:
        await self.ctx.send_activity(Activity(type=ActivityTypes.typing))
        if _kind(self.ctx.activity) != "dm":
            return None
        if self.stream is not None:
            if await self.stream.start(render.PLACEHOLDER):
                return throttled(self.stream.informative, self.progress_interval_s, (Exception,))
            self.stream = None
        sent = await self.ctx.send_activity(plain(f"⏳ {render.PLACEHOLDER}"))
        self.informative = sent.id if sent is not None else None

        async def edit(text: str) -> None:
            await self._replace(plain(f"⏳ {text}"), keep=True)

        return throttled(edit, self.progress_interval_s, (Exception,))  # an outside call

    async def show(self, answer: Answer, view: dict[str, Any]) -> None:
        card = teams_cards.teams_card(answer, **view)
        reply = MessageFactory.attachment(CardFactory.adaptive_card(card), text=None)
        if answer.status == "smalltalk" and _kind(self.ctx.activity) == "dm":
            reply.suggested_actions = suggesting("", self.suggested_prompts).suggested_actions
        if self.stream is not None and self.stream.id is not None:
            await self._close(reply)
            return
        try:
            if await self._replace(reply):
                return
        except Exception as exc:  # never leave the question unanswered: send it anew
            log.warning("could not replace the informative message: %s", exc)
        await self.ctx.send_activity(reply)

    async def _close(self, activity: Activity) -> None:
        """``activity`` as the stream's final message, in place of whatever it streamed; if Teams
        refuses it, sent anew (the stream then ends by itself, as Teams ends idle streams)."""
        assert self.stream is not None
        stream, self.stream = self.stream, None
        try:
            await self.ctx.send_activity(stream.final(activity))
        except Exception as exc:  # never leave the question unanswered
            log.warning("could not close the stream: %s", exc)
            activity.entities = [
                e for e in activity.entities or [] if not isinstance(e, StreamInfo)
            ]
            await self.ctx.send_activity(activity)

    async def _replace(self, activity: Activity, keep: bool = False) -> bool:
        """Put ``activity`` in place of the informative message; False when there is none."""
        if self.informative is None:
            return False
        activity.id = self.informative
        if not keep:
            self.informative = None
        await self.ctx.update_activity(activity)
        return True

    async def ask_reason(self, turn_id: str, vote: Literal["up", "down"], asker: str) -> None:
        card = teams_cards.teams_reason_card(turn_id, vote, asker)
        await self.ctx.send_activity(
            MessageFactory.attachment(CardFactory.adaptive_card(card), text=None)
        )

    async def tell_privately(self, text: str) -> None:
        """Send ``text`` to the asker alone, in a 1:1 chat with the bot; nothing if that fails."""
        ctx, activity = self.ctx, self.ctx.activity
        client = ctx.turn_state.get(ctx.adapter.BOT_CONNECTOR_CLIENT_KEY)
        if client is None or activity.from_property is None or activity.recipient is None:
            return
        tenant = activity.conversation.tenant_id if activity.conversation else None
        try:
            created = await client.conversations.create_conversation(
                ConversationParameters(
                    is_group=False,
                    bot=activity.recipient,
                    members=[activity.from_property],
                    tenant_id=tenant,
                    channel_data={"tenant": {"id": tenant}} if tenant else None,
                )
            )
            await client.conversations.send_to_conversation(created.id, plain(text))
        except Exception as exc:  # an outside call: without a private channel, say nothing
            log.info("could not open a 1:1 chat with the asker: %s", exc)


class TeamsAdapter:
    """``POST /api/messages``: shape check → token check → one dispatch through ``CloudAdapter``."""

    def __init__(self, settings: TeamsSettings, conversation: Conversation):
        self.settings = settings
        self.auth = bot_authentication(settings)  # raises ConfigError without credentials
        self.adapter = CloudAdapter(self.auth)
        self.adapter.on_turn_error = self._on_turn_error
        self.bot = FootnoteTeamsBot(conversation, settings.suggested_prompts)

    @staticmethod
    async def _on_turn_error(ctx: TurnContext, error: Exception) -> None:
        """The last resort, for a failure outside the core (which answers its own failures)."""
        text = failure_reply("teams turn", error=error)
        try:
            await ctx.send_activity(plain(text))
        except Exception:
            log.exception("could not tell the Teams user something went wrong")

    async def handle(self, request: web.Request) -> web.Response:
        if request.content_type != "application/json":
            return web.Response(status=415, text="expected application/json")
        raw = await request.read()  # over the app's client_max_size: 413
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            return web.Response(status=400, text="body is not JSON")
        problem = activity_problem(body)
        if problem is None:
            try:
                activity = Activity().deserialize(body)
            except (DeserializationError, ValueError, TypeError, AttributeError) as exc:
                problem = f"not a Bot Framework activity: {exc}"
        if problem is not None:
            return web.Response(status=400, text=problem)
        if self.settings.allow_unauthenticated and not is_loopback(
            urlsplit(activity.service_url).hostname
        ):
            log.warning("teams: unauthenticated mode refused serviceUrl %s", activity.service_url)
            return web.Response(status=401, text="unauthenticated mode replies to loopback only")
        try:
            auth = await authenticate(self.auth, activity, request.headers.get("Authorization", ""))
        except PermissionError as exc:
            log.info("teams: refused an activity from %s: %s", request.remote, exc)
            return web.Response(status=401, text="unauthorized")
        except KeysUnavailable as exc:
            log.error(
                "teams: cannot fetch the token-signing keys (%s); check that "
                "FOOTNOTE_TEAMS__OPENID_METADATA_URL (%s) is reachable",
                exc,
                self.settings.openid_metadata_url,
            )
            return web.Response(status=503, text="cannot check tokens right now")
        invoke = await self.adapter.process_activity(auth, activity, self.bot.on_turn)
        if invoke:
            return web.json_response(serializer_helper(invoke.body), status=invoke.status)
        return web.Response(status=201)
