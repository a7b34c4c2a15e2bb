"""The Teams adapter: Bot Framework activities → ``Turn`` → ``assistant.answer`` → Adaptive Card.

``TeamsAdapter.handle`` checks the body's shape, authenticates the request (``bot/teams_auth.py``:
a Bot Framework token is required unless the Emulator's loopback-only mode is on) and hands the
activity to ``CloudAdapter``, which runs ``FootnoteTeamsBot.on_turn``; replies go to the
activity's ``serviceUrl``, the one the token vouches for. In personal chat every message is a
question; in a channel or group chat only a message that @mentions the bot is (the mention is
removed from the text), and the agent gets every member's groups. ``Action.Submit`` arrives as
a message with ``.value``: Confirm / Cancel a pending ticket, feedback, "open a ticket".

What only the asker may see (the hint that a private document may answer better) goes to them in
a 1:1 chat the bot opens, never into the channel; where that fails, it is not sent at all. Our own
short messages go as plain text, answers as cards whose document text is never read as Markdown.
"""

from __future__ import annotations

import html
import json
import logging
import re
from typing import Literal
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
from botbuilder.schema import Activity, ActivityTypes, ConversationParameters, TextFormatTypes
from msrest.exceptions import DeserializationError

from agent.assistant import error_reference
from agent.turns import Turn
from bot import render
from bot.directory import Directory, Person
from bot.links import LinkSigner
from bot.render import EMPTY_QUESTION, NOT_IN_DIRECTORY, SOMETHING_WENT_WRONG
from bot.settings import TeamsSettings
from bot.state import RATE_LIMITED, ConversationState
from bot.teams_auth import (
    KeysUnavailable,
    authenticate,
    bot_authentication,
    check_teams,
    is_loopback,
    teams_posture,
)

__all__ = ["FootnoteTeamsBot", "TeamsAdapter", "activity_problem", "check_teams", "teams_posture"]

log = logging.getLogger(__name__)

MAX_MEMBERS = 500
STRANGERS_HERE = (
    "I can't answer in this channel: some members are not in the company directory "
    "(guests or people from other organisations). Ask me in a personal chat."
)


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
    def __init__(
        self,
        assistant,
        state: ConversationState,
        directory: Directory,
        links: LinkSigner,
        *,
        unknown_members: Literal["public", "refuse"] = "public",
    ):
        self.assistant, self.state, self.directory, self.links = assistant, state, directory, links
        self.unknown_members = unknown_members

    # -- identity --------------------------------------------------------------------------

    def person(self, account) -> Person | None:
        if account is None:
            return None
        for key in (
            getattr(account, "aad_object_id", None),
            account.id,
            getattr(account, "email", None),
            getattr(account, "user_principal_name", None),
        ):
            if key:
                person = self.directory.find(key)
                if person is not None:
                    return person
        return None

    async def member_groups(
        self, ctx: TurnContext, asker: Person
    ) -> tuple[tuple[tuple[str, ...], ...], int]:
        """Every member's groups, and how many members we cannot place (they read public
        documents only)."""
        groups: dict[str, tuple[str, ...]] = {asker.teams_id or asker.user_id: asker.groups}
        strangers = 0
        token = None
        seen = 0
        try:
            while seen < MAX_MEMBERS * 4:
                page = await TeamsInfo.get_paged_members(ctx, token, 500)
                for member in page.members or []:
                    seen += 1
                    if ctx.activity.recipient and member.id == ctx.activity.recipient.id:
                        continue
                    person = self.person(member)
                    groups[member.id] = person.groups if person else ()
                    strangers += person is None
                token = page.continuation_token
                if not token:
                    break
        except Exception as exc:  # the roster is an outside call; fail closed
            log.warning("Teams members lookup failed: %s; answering from public docs only", exc)
            return (asker.groups, ()), 1
        return tuple(dict.fromkeys(groups.values())), strangers

    async def tell_privately(self, ctx: TurnContext, text: str) -> bool:
        """Send ``text`` to the asker alone, in a 1:1 chat with the bot; False if that failed."""
        activity = ctx.activity
        client = ctx.turn_state.get(ctx.adapter.BOT_CONNECTOR_CLIENT_KEY)
        if client is None or activity.from_property is None or activity.recipient is None:
            return False
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
            return False
        return True

    # -- turns -----------------------------------------------------------------------------

    async def on_message_activity(self, ctx: TurnContext) -> None:
        activity = ctx.activity
        if activity.id and not await self.state.first_delivery(
            f"teams:{activity.conversation.id}:{activity.id}"
        ):
            return
        if isinstance(activity.value, dict) and activity.value.get("action"):
            await self.on_submit(ctx, activity.value)
            return
        kind = (
            (activity.conversation.conversation_type or "personal")
            if activity.conversation
            else "personal"
        )
        if kind != "personal" and not mentions_of(
            activity, activity.recipient.id if activity.recipient else ""
        ):
            return  # a channel message not addressed to the bot
        await self.ask(ctx, question_text(activity), "dm" if kind == "personal" else "channel")

    async def ask(
        self, ctx: TurnContext, text: str, channel_kind: Literal["dm", "channel"]
    ) -> None:
        activity = ctx.activity
        person = self.person(activity.from_property)
        if person is None:
            await ctx.send_activity(plain(NOT_IN_DIRECTORY))
            return
        if not text:
            await ctx.send_activity(plain(EMPTY_QUESTION))
            return
        if not await self.state.allow(person.user_id):
            await ctx.send_activity(plain(RATE_LIMITED))
            return
        member_groups: tuple[tuple[str, ...], ...] = ()
        if channel_kind == "channel":
            member_groups, strangers = await self.member_groups(ctx, person)
            if strangers and self.unknown_members == "refuse":
                await ctx.send_activity(plain(STRANGERS_HERE))
                return
        await ctx.send_activity(Activity(type=ActivityTypes.typing))
        conversation = f"teams:{activity.conversation.id}"
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
        answer = await self.assistant.answer(turn)
        await self.state.remember(conversation, text, answer.text)
        card = render.teams_card(
            answer,
            links=self.links.linker(person.user_id),
            turn_id=turn.turn_id,
            question=text,
            asker=person.user_id,
            notice=notice,
        )
        await ctx.send_activity(
            MessageFactory.attachment(CardFactory.adaptive_card(card), text=None)
        )
        if answer.private_note and channel_kind == "channel":
            await self.tell_privately(ctx, answer.private_note)

    async def on_submit(self, ctx: TurnContext, data: dict) -> None:
        activity = ctx.activity
        action = data.get("action")
        person = self.person(activity.from_property)
        if person is None:
            await ctx.send_activity(plain(NOT_IN_DIRECTORY))
            return
        if action in ("confirm", "cancel") and data.get("action_id"):
            if data.get("asker") and data["asker"] != person.user_id:
                asker = self.directory.find(str(data["asker"]))
                who = asker.name if asker else "the person who asked"
                await ctx.send_activity(plain(f"Only {who} can confirm or cancel this ticket."))
                return
            result = await self.assistant.confirm(
                str(data["action_id"]), person.user_id, action == "confirm"
            )
            card = render.teams_card(result, links=self.links.linker(person.user_id))
            await ctx.send_activity(MessageFactory.attachment(CardFactory.adaptive_card(card)))
        elif action == "feedback":
            await self.state.record_feedback(
                {
                    "platform": "teams",
                    "turn_id": str(data.get("turn_id", "")),
                    "vote": "up" if data.get("value") == "up" else "down",
                    "user": person.user_id,
                    "channel": activity.conversation.id if activity.conversation else "",
                }
            )
            await ctx.send_activity(plain("Thanks for the feedback!"))
        elif (
            action == "ticket_offer" and isinstance(data.get("question"), str) and data["question"]
        ):
            kind = activity.conversation.conversation_type if activity.conversation else "personal"
            await self.ask(
                ctx,
                f"Please open a ticket: {data['question']}",
                "dm" if kind in (None, "personal") else "channel",
            )


class TeamsAdapter:
    """``POST /api/messages``: shape check → token check → one dispatch through ``CloudAdapter``."""

    def __init__(
        self,
        settings: TeamsSettings,
        assistant,
        state: ConversationState,
        directory: Directory,
        links: LinkSigner,
        *,
        unknown_members: Literal["public", "refuse"] = "public",
    ):
        self.settings = settings
        self.auth = bot_authentication(settings)  # raises ConfigError without credentials
        self.adapter = CloudAdapter(self.auth)
        self.adapter.on_turn_error = self._on_turn_error
        self.bot = FootnoteTeamsBot(
            assistant, state, directory, links, unknown_members=unknown_members
        )

    @staticmethod
    async def _on_turn_error(ctx: TurnContext, error: Exception) -> None:
        ref = error_reference()
        log.error("teams turn failed (reference %s): %r", ref, error, exc_info=error)
        try:
            await ctx.send_activity(plain(SOMETHING_WENT_WRONG.format(ref=ref)))
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
