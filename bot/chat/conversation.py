"""One conversation core for every chat platform, so Slack and Teams cannot drift apart.

An adapter translates its platform's event into a ``Question`` (who asks, the plain text, the
conversation key, DM or channel, how to list the channel's members) and hands over a ``Reply``
(how to say things there); ``Conversation.ask`` does the rest, the same way on every platform:

    directory → empty / over-long → rate limit → channel members → history → Turn → answer
    → remember → show the answer (and the asker's private note, to them alone)

With an LLM that streams (``Agent.streams``) the reply is asked first whether it can show the
answer while it is written (``Reply.streaming``: Slack's assistant threads, Teams personal chat);
``DraftWords`` turns the agent's deltas into inert whole words for it, and ``show`` then replaces
the streamed draft with the checked answer. Elsewhere, and without an LLM, nothing streams.

Every answered turn is recorded (``bot/reports/feedback.py``: the question, the asker, the answer and
what it cited), without ever holding up the answer. Buttons go through the core too: ``decide``
(a ticket is confirmed or cancelled only by the person who asked for it), ``feedback`` (👍/👎 and
then a reason, on their own turn only, like a ticket's confirmation). Whatever fails on the
way, the person gets one reply: "something went wrong", in the language of their question, with
a reference that the log line carries too — never an exception's name (``bot/chat/failure.py``, the
one place that words it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

from agent.drafts import Drafting
from agent.loop import Progress
from agent.messages import say
from agent.turns import Answer, Turn
from bot.chat.conversation_state import RATE_LIMITED, ConversationState
from bot.chat.failure import failure_reply
from bot.chat.render import NOT_IN_DIRECTORY
from bot.identity.admin_access import (
    ADMIN_LINK,
    ADMIN_LINK_SENT,
    ADMIN_OFF,
    ADMIN_REFUSED,
    AdminAccess,
    is_admin_request,
)
from bot.identity.directory import Directory, DirectoryUnavailable, Person, find_off_loop
from bot.reports.feedback import (
    REASONS,
    CitedDocument,
    ConflictNote,
    FeedbackRecord,
    TurnLog,
    TurnRecord,
    Vote,
)
from bot.web.links import LinkSigner
from ingest.documents import ChunkPayload
from ingest.languages import detect_lang

log = logging.getLogger(__name__)

ChannelKind = Literal["dm", "channel"]

MAX_MEMBERS = 500  # members looked up by profile in a channel; the rest read public docs only

STRANGERS_HERE = (
    "I can't answer in this channel: some members are not in the company directory "
    "(guests or people from other organisations). Ask me in a {private_chat}."
)
DIRECTORY_UNAVAILABLE = (
    "I can't reach the company directory right now, so I can't tell which documents you may "
    "read. Please try again in a few minutes; if it keeps happening, tell your Footnote admin."
)
THANKS_FOR_FEEDBACK = "Thanks for the feedback!"
ONLY_THE_ASKER = "Only {who} can confirm or cancel this ticket."
ONLY_THE_ASKER_RATES = "Only {who} can rate this answer."
TICKET_REQUEST = "Please open a ticket: {question}"


def throttled(
    show: Callable[[str], Awaitable[object]], interval_s: float, errors: tuple[type[Exception], ...]
) -> Progress:
    """Progress that shows a line at most once per ``interval_s`` (chat edits are rate-limited),
    best effort: a failure to show it (one of ``errors``) is logged, never raised."""
    last = time.monotonic()

    async def progress(text: str) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last < interval_s:
            return
        last = now
        try:
            await show(text)
        except errors as exc:
            log.info("progress update failed: %s", exc)

    return progress


class DraftWords:
    """The agent's draft deltas, handed out as inert Markdown in whole words (``take``).

    Only text up to the last whitespace received goes out, each word made inert by itself
    (``render.draft_markdown``), so a mention or link the model writes across two deltas is one
    word by the time it is shown, and shows as characters. ``shown`` is everything taken so far
    (what Teams' cumulative streaming text needs).
    """

    def __init__(self) -> None:
        self.received = ""
        self._taken = 0  # characters of ``received`` already handed out
        self.shown = ""

    def add(self, delta: str) -> None:
        self.received += delta

    def take(self) -> str:
        """The inert text of the whole words received since the last call ("" if none)."""
        from bot.chat.render import draft_markdown

        rest = self.received[self._taken :]
        cut = max(rest.rfind(" "), rest.rfind("\n"), rest.rfind("\t"))
        if cut < 0:
            return ""
        self._taken += cut + 1
        piece = draft_markdown(rest[: cut + 1])
        self.shown += piece
        return piece


def conversation_id(platform: str, *parts: str | None) -> str:
    """The key of a conversation's history and thread marker: ``platform:part:part``, empty
    parts left out (a DM without a thread is ``slack:T…:D…``)."""
    return ":".join([platform, *(p for p in parts if p)])


@dataclass(frozen=True)
class Profile:
    """What a platform's user profile says beyond the ids: the e-mail, and whether it is a bot."""

    email: str = ""
    is_bot: bool = False


@dataclass(frozen=True)
class Member:
    """A person as a platform names them: ids the directory may know (platform id, AAD object
    id, e-mail, …), and where the platform can tell more, a way to ask for the profile."""

    keys: tuple[str, ...]
    profile: Callable[[], Awaitable[Profile]] | None = None


async def lookup_members(
    directory: Directory,
    members: Callable[[], AsyncIterator[Member]],
    known: dict[str, tuple[str, ...]] | None = None,
) -> tuple[dict[str, tuple[str, ...]], int]:
    """Every member of a conversation looked up in the directory: their principals by user id
    (one the directory does not know under ``?<their platform id>``, with none: public documents
    only), added to ``known``, and how many were unknown. Bots are left out; profiles are asked
    for at most ``MAX_MEMBERS`` members. What listing or the directory raises is raised: the
    caller fails closed. Answers in a channel and digests posted to one both read members so."""
    groups = dict(known or {})
    strangers = lookups = 0
    async for member in members():
        person = await _known(directory, member.keys)
        if person is None and member.profile is not None and lookups < MAX_MEMBERS:
            lookups += 1
            profile = await member.profile()
            if profile.is_bot:
                continue
            person = await find_off_loop(directory, profile.email) if profile.email else None
        key = person.user_id if person else f"?{member.keys[0] if member.keys else ''}"
        if key in groups:
            continue
        groups[key] = person.principals if person else ()
        strangers += person is None
    return groups, strangers


async def _known(directory: Directory, keys: tuple[str, ...]) -> Person | None:
    for key in keys:
        person = await find_off_loop(directory, key) if key else None
        if person is not None:
            return person
    return None


@dataclass(frozen=True)
class Question:
    asker: Member
    text: str  # the plain question, the platform's markup already translated
    conversation: str  # from ``conversation_id``
    channel_kind: ChannelKind
    # In a channel: every member but the bot (the asker may be among them). Raising fails closed.
    members: Callable[[], AsyncIterator[Member]] | None = None
    # Mark the thread as answered, so a reply there counts as a follow-up (Slack's thread_followups).
    mark_thread: bool = False


class Agent(Protocol):
    """The agent's front door as the bot uses it: ``agent.assistant.Assistant``, or
    ``bot.web.server.AgentThread`` running one on its own event loop."""

    @property
    def streams(self) -> bool:
        """Whether ``answer`` tells a ``draft`` the answer's text as an LLM writes it."""
        ...

    async def answer(
        self, turn: Turn, progress: Progress | None = None, draft: Drafting | None = None
    ) -> Answer: ...

    def refusal(self, text: str) -> Answer | None:
        """The reply to a question refused for its size (empty, over-long); None to answer it."""
        ...

    async def confirm(self, action_id: str, user_id: str, approve: bool) -> Answer: ...

    def document(self, doc_id: str, groups: Sequence[str]) -> list[ChunkPayload]: ...


class Reply(Protocol):
    """How to talk back on one platform, for one turn or one button click."""

    async def say(self, text: str) -> None:
        """A short message of ours as plain text (in place of the placeholder, if one is up)."""

    async def working(self) -> Progress | None:
        """Called once a question or a click is accepted, before the assistant works on it: show
        that an answer is on its way; the progress callback, if the platform shows one."""

    async def streaming(self) -> Drafting | None:
        """Called before ``working`` when the assistant streams its answer: where the answer can
        be shown while it is written, a callback for its text deltas (``show`` then replaces
        what was streamed with the answer); None where it cannot."""

    async def show(self, answer: Answer, view: dict[str, Any]) -> None:
        """The answer, rendered with ``view`` (links, turn id, question, asker, notice)."""

    async def tell_privately(self, text: str) -> None:
        """``text`` to the asker alone, or to nobody: never into a channel."""

    async def ask_reason(self, turn_id: str, vote: Vote, asker: str) -> None:
        """After a 👍/👎: thank the asker and offer the reasons (``bot.reports.feedback.REASONS``), the
        last one with a text of their own; whatever they pick comes back to ``feedback``."""


class Conversation:
    def __init__(
        self,
        assistant: Agent,
        state: ConversationState,
        directory: Directory,
        links: LinkSigner,
        *,
        platform: str,
        private_chat: str,
        unknown_members: Literal["public", "refuse"] = "public",
        records: TurnLog | None = None,
        admin: AdminAccess | None = None,
    ):
        self.assistant, self.state, self.directory, self.links = assistant, state, directory, links
        self.records, self.admin = records, admin
        self.platform, self.private_chat = platform, private_chat
        self.unknown_members = unknown_members

    # -- who --------------------------------------------------------------------------------

    async def _find(self, key: str) -> Person | None:
        return await find_off_loop(self.directory, key) if key else None

    async def _known(self, keys: tuple[str, ...]) -> Person | None:
        for key in keys:
            person = await self._find(key)
            if person is not None:
                return person
        return None

    def name(self, key: str) -> str:
        """A display name for a mention in a question's text (a Slack id: the Graph directory
        answers None without a request); the key itself when the directory does not know."""
        try:
            person = self.directory.find(key)
        except DirectoryUnavailable:
            person = None
        return person.name if person else key

    async def person(self, member: Member) -> Person | None:
        """The directory entry for a platform user: by any of their ids, else by their e-mail."""
        person = await self._known(member.keys)
        if person is not None or member.profile is None:
            return person
        return await self._find((await member.profile()).email)

    async def member_groups(
        self, asker: Person, members: Callable[[], AsyncIterator[Member]]
    ) -> tuple[tuple[tuple[str, ...], ...], int]:
        """Each distinct group list of the channel's members, and how many members the directory
        does not know (they read public documents only). When the member list cannot be read the
        channel counts as having a stranger: fail closed."""
        try:
            groups, strangers = await lookup_members(
                self.directory, members, {asker.user_id: asker.principals}
            )
        except Exception as exc:  # an outside call: answer from public documents only
            log.warning(
                "%s members lookup failed: %r; answering from public docs only", self.platform, exc
            )
            return (asker.principals, ()), 1
        return tuple(dict.fromkeys(groups.values())), strangers

    # -- a question ---------------------------------------------------------------------------

    async def ask(self, question: Question, reply: Reply) -> None:
        """Answer one question; every failure ends in the one error reply."""
        lang = detect_lang(question.text) if question.text else "en"
        try:
            await self._ask(question, reply, lang)
        except Exception:
            await self._failed(reply, lang, "answer")

    async def _failed(self, reply: Reply, lang: str, what: str) -> None:
        text = failure_reply(f"{self.platform} {what}", lang)
        try:
            await reply.say(text)
        except Exception:
            log.exception("could not tell the %s user something went wrong", self.platform)

    async def _ask(self, question: Question, reply: Reply, lang: str) -> None:
        try:
            person = await self.person(question.asker)
        except DirectoryUnavailable as exc:
            log.warning("%s: the directory cannot be asked: %s", self.platform, exc)
            await reply.say(DIRECTORY_UNAVAILABLE)
            return
        if person is None:
            await reply.say(NOT_IN_DIRECTORY)
            return
        text = question.text
        refused = self.assistant.refusal(text)
        if refused is not None:
            await reply.say(refused.text)
            return
        if self.admin is not None and is_admin_request(text):
            await self._admin_link(question, person, reply)
            return
        if not await self.state.allow(person.user_id):
            await reply.say(RATE_LIMITED)
            return
        member_groups: tuple[tuple[str, ...], ...] = ()
        if question.channel_kind == "channel" and question.members is not None:
            member_groups, strangers = await self.member_groups(person, question.members)
            if strangers and self.unknown_members == "refuse":
                await reply.say(STRANGERS_HERE.format(private_chat=self.private_chat))
                return
        draft = await reply.streaming() if self.assistant.streams else None
        progress = await reply.working()
        if question.mark_thread:
            await self.state.note_answered(question.conversation)
        history = await self.state.history(question.conversation)
        notice = self.state.forgetful_notice(question.conversation, history)
        turn = Turn(
            user_id=person.user_id,
            text=text,
            groups=person.principals,
            display_name=person.name,
            email=person.email,
            channel_kind=question.channel_kind,
            member_groups=member_groups,
            conversation_id=question.conversation,
            history=history.messages,
        )
        answer: Answer = await self.assistant.answer(turn, progress, draft)
        await self.state.remember(question.conversation, text, answer.text, person.user_id)
        if self.records is not None and answer.status == "smalltalk":
            stored = say(answer.lang, "stored", days=self.records.retention_days)
            answer.note = f"{answer.note} {stored}".strip()
        view = {
            "links": self.links.linker(person.user_id),
            "turn_id": turn.turn_id,
            "question": text,
            "asker": person.user_id,
            "notice": notice,
        }
        recording = self._record(question, turn, answer)
        await reply.show(answer, view)
        if recording is not None:
            await recording  # the answer is out already; a failed record is logged, not raised
        if answer.private_note and question.channel_kind == "channel":
            await reply.tell_privately(answer.private_note)

    async def _admin_link(self, question: Question, person: Person, reply: Reply) -> None:
        """The admin page's sign-in link, to an admin in a private chat only; anyone else, or
        anywhere else, hears why not."""
        assert self.admin is not None
        if not self.admin.is_admin(person):
            await reply.say(ADMIN_REFUSED)
        elif question.channel_kind != "dm":
            await reply.say(f"Ask me for the admin link in a {self.private_chat}.")
        elif not await self.state.allow(person.user_id):
            await reply.say(RATE_LIMITED)
        else:
            minutes = max(1, self.admin.link_ttl_s // 60)
            await reply.say(
                ADMIN_LINK.format(minutes=minutes, link=self.admin.link(person.user_id))
            )

    async def admin_link_command(self, asker: Member) -> tuple[str, str]:
        """A platform's own command for the admin link (Slack's ``/footnote admin``), which may
        be typed anywhere: (the link message, for a direct message to the asker only — "" when
        they get none; the reply shown to the asker alone where they typed it)."""
        if self.admin is None:
            return "", ADMIN_OFF
        try:
            person = await self.person(asker)
        except DirectoryUnavailable as exc:
            log.warning("%s: the directory cannot be asked: %s", self.platform, exc)
            return "", DIRECTORY_UNAVAILABLE
        if person is None:
            return "", NOT_IN_DIRECTORY
        if not self.admin.is_admin(person):
            return "", ADMIN_REFUSED
        if not await self.state.allow(person.user_id):
            return "", RATE_LIMITED
        minutes = max(1, self.admin.link_ttl_s // 60)
        link = ADMIN_LINK.format(minutes=minutes, link=self.admin.link(person.user_id))
        return link, ADMIN_LINK_SENT

    # -- buttons ------------------------------------------------------------------------------

    async def decide(
        self, clicker: Member, action_id: str, asker_id: str, approve: bool, reply: Reply
    ) -> None:
        """Confirm or cancel a proposed ticket. Only the person who asked for it may; the
        assistant files it at most once, however often and by whomever the button is clicked."""
        try:
            person = await self.person(clicker)
            if person is None or (asker_id and person.user_id != asker_id):
                asker = await self._find(asker_id)
                who = asker.name if asker else "the person who asked"
                await reply.say(ONLY_THE_ASKER.format(who=who))
                return
            await reply.working()
            result: Answer = await self.assistant.confirm(action_id, person.user_id, approve)
            if result.ticket and result.ticket.get("conversation"):
                await self.state.remember_said(result.ticket["conversation"], result.text)
            await reply.show(result, {"links": self.links.linker(person.user_id)})
        except Exception:
            await self._failed(reply, "en", "confirm/cancel")

    async def feedback(
        self,
        clicker: Member,
        turn_id: str,
        vote: Vote,
        reply: Reply,
        *,
        asker: str = "",
        reason: str = "",
        note: str = "",
    ) -> None:
        """A 👍/👎 (then its reason) on a turn. Only the person who asked may rate it: the turn on
        record says who that was, else the button does (``asker``), as for a ticket."""
        try:
            person = await self._known(clicker.keys)
            on_record = await self.records.turn(turn_id) if self.records and turn_id else None
            owner = on_record.user_id if on_record else asker
            if person is None or (owner and person.user_id != owner):
                known = await self._find(owner)
                who = known.name if known else "the person who asked"
                await reply.say(ONLY_THE_ASKER_RATES.format(who=who))
                return
            reason = reason if reason in REASONS else ""
            if self.records is not None and turn_id:
                await self.records.record_feedback(
                    FeedbackRecord(turn_id, person.user_id, vote, reason, note.strip())
                )
            if reason:
                await reply.say(THANKS_FOR_FEEDBACK)
            else:
                await reply.ask_reason(turn_id, vote, person.user_id)
        except Exception:
            await self._failed(reply, "en", "feedback")

    def _record(self, question: Question, turn: Turn, answer: Answer) -> Awaitable[None] | None:
        """Start recording an answered turn (what it cited, never the passages' text)."""
        if self.records is None or answer.status == "rejected":
            return None
        cited = tuple(
            dict.fromkeys(
                CitedDocument(c.doc_id, c.title, c.link) for c in answer.citations if c.doc_id
            )
        )
        return self.records.record_turn(
            TurnRecord(
                turn_id=turn.turn_id,
                platform=self.platform,
                conversation=question.conversation,
                user_id=turn.user_id,
                # the groups alone, as docs/feedback.md says: the e-mail principal is the person
                groups=tuple(g for g in turn.groups if not g.startswith("user:")),
                channel_kind=question.channel_kind,
                question=turn.text,
                status=answer.status,
                answer=answer.text,
                citations=cited,
                conflicts=tuple(ConflictNote(**asdict(c)) for c in answer.conflicts),
            )
        )

    @staticmethod
    def ticket_request(question: str) -> str:
        """What "ask a person" after an "I don't know" asks: a ticket, confirmed like any other."""
        return TICKET_REQUEST.format(question=question)
