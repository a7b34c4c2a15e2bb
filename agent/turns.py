"""What an adapter hands the agent (``Turn``) and what it gets back (``Answer``): our own types,
so no framework object crosses into ``bot/``."""

from __future__ import annotations

import re
import uuid
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any, Literal, Protocol

# "rejected": the turn was not run (an empty or over-long question); no feedback is asked for.
Status = Literal[
    "answered", "partial", "unknown", "needs_confirmation", "smalltalk", "error", "rejected"
]

# A citation marker: what adapters turn into a link. Only the loop writes them.
MARKER = re.compile(r"\[(\d{1,3})\]")


QUOTE_CHARS = 300  # the most of a passage a citation quotes
_SENTENCE_END = re.compile(r"[.!?…](?=[\s\"')\]]|$)|[。！？]")


def clipped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters where a reader sees it was cut well: after its last
    whole sentence, else at a word boundary with an ellipsis, never inside a word."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] >= limit // 3:  # enough of it to be worth quoting whole
        return head[: ends[-1]]
    cut = head[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 3 and not text[limit - 1].isspace():
        cut = cut[:space]
    return cut.rstrip(" ,;:–-") + "…"


SEARCHED_CHARS = 160  # the most of one search an "I searched for …" line shows


def as_searched(query: str) -> str:
    """A search as "I searched for …" shows it: a long message (a story, then the question) keeps
    its opening and its end, where the question usually is, around an ellipsis; the search
    itself, the trace and a ticket keep the whole text."""
    query = " ".join(query.split())
    if len(query) <= SEARCHED_CHARS:
        return query
    head, tail = query[: SEARCHED_CHARS // 3], query[-(SEARCHED_CHARS * 2 // 3) :]
    head = head[: head.rfind(" ")] if " " in head else head
    tail = tail[tail.find(" ") + 1 :] if " " in tail else tail
    return f"{head.rstrip(' ,;:–-')} … {tail}"


def quoted(text: str) -> str:
    """Document text as it may appear in an Answer: a ``[1]`` the document itself contains is
    shown as ``［1］`` (full-width brackets), so the loop's own markers are the only markers."""
    return MARKER.sub("［\\1］", text)


@dataclass(frozen=True)
class Message:
    role: Literal["user", "assistant"]
    text: str


@dataclass(frozen=True)
class Turn:
    user_id: str
    text: str
    groups: tuple[str, ...]  # what the asker reads as: their groups and user:<email>
    display_name: str = ""
    email: str = ""
    channel_kind: Literal["dm", "channel", "cli"] = "dm"
    # In a channel: each member's groups (and user:<email>); answers use only what all may read.
    member_groups: tuple[tuple[str, ...], ...] = ()
    conversation_id: str = ""
    history: tuple[Message, ...] = ()
    turn_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    # The date the turn is answered on; None = the real date. Evaluations fix it, so an answer
    # that depends on an order's age ("still inside the 30-day window?") is reproducible.
    today: date | None = None


@dataclass
class Citation:
    n: int
    doc_id: str
    title: str
    breadcrumbs: str
    source: str
    link: str
    page: int | None
    anchor: str
    quote: str
    updated: str
    external: bool = False
    tool: str = ""  # a tool's result ("query_crm"): cited, but no document to open

    @classmethod
    def of(cls, n: int, source: Citable, quote: str, **extra: Any) -> Citation:
        """The citation of a passage or a section: where it is, and its first whole sentences
        (up to ``QUOTE_CHARS``)."""
        return cls(
            n=n,
            doc_id=source.doc_id,
            title=source.title,
            breadcrumbs=source.breadcrumbs,
            source=source.source,
            link=source.link,
            page=source.page,
            anchor=source.anchor,
            quote=clipped(quote, QUOTE_CHARS),
            updated=source.updated,
            **extra,
        )


@dataclass(frozen=True)
class Conflict:
    """Two documents that give different values for the same thing in the same scope, as the
    answer's note said: the older one, the newer one (which applies) and the note itself."""

    older: str  # doc id
    older_title: str
    older_updated: str
    newer: str
    newer_title: str
    newer_updated: str
    note: str


class Citable(Protocol):
    """What a citation is made from (a passage, a document's section)."""

    @property
    def doc_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def breadcrumbs(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def link(self) -> str: ...
    @property
    def page(self) -> int | None: ...
    @property
    def anchor(self) -> str: ...
    @property
    def updated(self) -> str: ...


@dataclass
class PendingAction:
    """A ticket the agent proposes; nothing happens until the same user confirms it."""

    action_id: str
    kind: Literal["create_ticket"]
    user_id: str
    title: str
    body: str
    expires_at: float
    conversation_id: str = ""  # where it was proposed: the filing is remembered there


@dataclass
class TraceStep:
    round: int
    step: str
    decision: str = ""
    reason: str = ""
    queries: list[str] = field(default_factory=list)
    hits: int = 0
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    ms: float = 0.0
    # Why the offline reasoner made this step instead of the configured LLM ("llm timeout after
    # 20.0 s", "llm error: APIConnectionError"); "" when the LLM made it, or none is configured.
    llm_fallback: str = ""


@dataclass
class Answer:
    text: str
    status: Status
    citations: list[Citation] = field(default_factory=list)
    pending_action: PendingAction | None = None
    trace: list[TraceStep] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)  # the queries tried, shown on "I don't know"
    note: str = ""  # shown with the answer, to everyone who sees it
    # For the asker's eyes only (e.g. "a fuller answer may exist in a DM"): adapters deliver it
    # privately, or not at all; it never goes into a channel.
    private_note: str = ""
    lang: str = "en"  # the question's language: adapters say their own words in it
    # set when a confirmed ticket was filed: {"id", "link", "conversation" (where it was asked)}
    ticket: dict[str, str] | None = None
    conflicts: list[Conflict] = field(default_factory=list)  # sources that disagreed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def trace_summary(self) -> str:
        searches = sum(len(s.queries) for s in self.trace if s.step == "search")
        read = sum(s.hits for s in self.trace if s.step == "search")
        dropped = sum(len(s.dropped) for s in self.trace if s.step == "grade")
        rounds = max((s.round for s in self.trace), default=0)
        return f"{rounds} round(s), {searches} searches, {read} passages read, {dropped} dropped as off-topic"


class TurnFailed(Exception):
    """A turn our own code could not finish (a bug, a store that broke). ``answer`` is what the
    turn did, status ``error``, its trace kept; the cause is chained. Only ``bot/`` turns it into
    words for the person (``bot.chat.failure.failure_reply``), with the reference the log keeps."""

    def __init__(self, answer: Answer):
        super().__init__(f"turn failed after {len(answer.trace)} step(s)")
        self.answer = answer
