"""The reasoner seam: every judgement the answer loop needs, offline or by an LLM.

The loop (``agent.loop``) owns control flow, limits and citations; a reasoner only judges.
Passages are always untrusted data: a reasoner quotes them, it never obeys them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agent.drafts import Drafting
from agent.passages import Passage
from agent.turns import Message

if TYPE_CHECKING:
    from llama_index.core.tools import BaseTool

RouteKind = Literal["smalltalk", "question", "crm", "ticket"]
GradeLabel = Literal["relevant", "partial", "off_topic"]


@dataclass
class Route:
    kind: RouteKind
    question: str  # standalone: follow-ups resolved against the history
    customer_id: str | None = None  # for "crm"
    ticket_title: str | None = None  # for "ticket"


@dataclass
class Grade:
    label: GradeLabel
    score: float  # 0..1, comparable across passages of one question
    reason: str = ""


@dataclass
class Sentence:
    text: str
    sources: list[int]  # indices into the passages given to ``answer``
    note: bool = False  # our own words (e.g. "an older source disagrees"), not a quote
    score: float | None = None  # how well the quote answers, when the reasoner judged it
    # A note that two sources disagree: ``sources`` are then [older, newer]; the turn's record
    # keeps it for the document owners' digest.
    conflict: bool = False


@dataclass
class Draft:
    sentences: list[Sentence]
    missing: list[str] = field(default_factory=list)  # sub-questions nothing supports


@dataclass
class Check:
    supported: list[bool]  # one per draft sentence
    answers_question: bool
    reason: str = ""


@dataclass
class ToolCall:
    """A tool a model asked for, by name, with arguments that met the tool's schema. Only asked
    for: the loop runs it with the asker's own tools (``agent.tool_calls``), or not at all."""

    name: str
    arguments: dict[str, Any]


# The tools a turn offers, built only when asked for: LlamaIndex takes ~1.4 s to import, and only
# a reasoner with an LLM reads them.
ToolShelf = Callable[[], "Sequence[BaseTool]"]


class UnusableReply(Exception):
    """A reasoner's model replied, but with nothing a step can use (no JSON, the wrong schema).

    The model's fault, not ours: ``FallbackReasoner`` answers that step offline instead. The
    message names the step and the kind of problem only, never the reply (it may quote documents).
    """


class Reasoner(Protocol):
    @property
    def streams(self) -> bool:
        """Whether ``answer`` tells its ``draft`` the text as it is written (an LLM's does)."""
        ...

    async def route(self, text: str, history: Sequence[Message]) -> Route: ...

    async def pick_tools(
        self, question: str, history: Sequence[Message], offered: ToolShelf
    ) -> list[ToolCall]:
        """The tool calls a model would make for the question, beyond the loop's own search; []
        when there is no model to ask (the offline path reaches every tool through routing)."""
        ...

    async def plan(self, question: str) -> list[str]:
        """Sub-questions for a compound question; ``[question]`` when it is simple."""
        ...

    async def grade(self, question: str, passages: Sequence[Passage]) -> list[Grade]:
        """One grade per passage, all in one go."""
        ...

    async def rewrite(
        self,
        question: str,
        passages: Sequence[Passage],
        mode: Literal["rewrite", "broaden"],
        tried: Sequence[str],
    ) -> str:
        """A new query: ``rewrite`` when what came back was off-topic, ``broaden`` when it was too little."""
        ...

    async def answer(
        self,
        question: str,
        subquestions: Sequence[str],
        passages: Sequence[Passage],
        facts: Sequence[str],
        *,
        asker: frozenset[str] = frozenset(),
        said: str = "",
        draft: Drafting | None = None,
        topic: str = "",
    ) -> Draft:
        """Sentences, each citing the passages that support it. ``facts`` are tool results (CRM);
        ``asker`` the audiences the asker belongs to (``agent/scope``), for the rule that applies;
        ``said`` the previous answer when the question follows up on it, which asks for
        something it did not say. ``draft``, if given, is told the text as it is written (a
        reasoner that writes it at once may ignore it). ``topic``: the document the conversation
        so far is about ("" outside a conversation), where a follow-up is most often answered."""
        ...

    async def check(
        self, question: str, draft: Draft, passages: Sequence[Passage], facts: Sequence[str] = ()
    ) -> Check:
        """Is every sentence supported by what it cites (passages, or the tool ``facts``)? Does it answer?"""
        ...
