"""The agent's front door for every adapter: ``answer(turn)``, ``confirm(action)``, ``document(id)``."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agent.actions import MemoryPendingActions, PendingActions, StateUnavailable
from agent.answer_model import AnswerModel
from agent.desk import CRM, SqliteTicketDesk, TicketDesk
from agent.drafts import Drafting
from agent.fallback_reasoner import turn_starts
from agent.loop import AnswerLoop, Progress, Run
from agent.messages import say
from agent.reasoning import Reasoner
from agent.recall import filed_text
from agent.retrieval import Retriever
from agent.second_source import Fallback
from agent.settings import CRMSettings, LimitsSettings, LLMSettings
from agent.telemetry import Telemetry
from agent.terms import TermStats
from agent.tools import Toolbox, TurnTools
from agent.traces import SqliteTraceStore, TraceStore
from agent.turns import Answer, Turn, TurnFailed
from ingest.documents import ChunkPayload
from ingest.embed import Embedder
from ingest.index import Index
from ingest.languages import detect_lang

log = logging.getLogger(__name__)

STATS_SAMPLE = 50_000  # chunks read to estimate term rarity


class ReasonerSettings(Protocol):
    """The root settings' parts a reasoner is built from; the agent does not know the root."""

    @property
    def data_dir(self) -> Path: ...

    @property
    def llm(self) -> LLMSettings | None: ...


class AssistantSettings(ReasonerSettings, Protocol):
    @property
    def crm(self) -> CRMSettings: ...

    @property
    def limits(self) -> LimitsSettings: ...


class ReasonerDeps(Protocol):
    """What ``build_reasoner`` needs of the composition root (``bot.app.Deps`` provides it)."""

    @property
    def settings(self) -> ReasonerSettings: ...

    @property
    def index(self) -> Index: ...

    @property
    def embedders(self) -> Sequence[Embedder]: ...

    @property
    def answer_model(self) -> AnswerModel: ...


class AssistantDeps(ReasonerDeps, Protocol):
    """What ``build_assistant`` needs: the clients built once, and the agent's settings."""

    @property
    def settings(self) -> AssistantSettings: ...

    @property
    def retriever(self) -> Retriever: ...

    @property
    def crm(self) -> CRM: ...

    @property
    def telemetry(self) -> Telemetry: ...

    @property
    def fallback(self) -> Fallback | None: ...


@dataclass
class Assistant:
    box: Toolbox
    reasoner: Reasoner
    desk: TicketDesk
    traces: TraceStore
    fallback: Fallback | None = None  # a second source, tried when the documents are silent
    telemetry: Telemetry = field(
        default_factory=Telemetry
    )  # records nothing unless built from settings
    max_question_chars: int = 4000

    def __post_init__(self) -> None:
        self.loop = AnswerLoop(self.reasoner, self.fallback)

    @property
    def streams(self) -> bool:
        """Whether ``answer`` tells a ``draft`` the answer's text as it is written."""
        return self.reasoner.streams

    async def answer(
        self, turn: Turn, progress: Progress | None = None, draft: Drafting | None = None
    ) -> Answer:
        """The checked answer. ``progress`` is told each step; ``draft``, the answer's text while
        an LLM writes it (unchecked: what the caller showed of it, the answer replaces).
        ``TurnFailed`` when our own code fails on the way: the trace is kept, and the caller
        (``bot/``) says sorry."""
        refused = self.refusal(turn.text)
        if refused is not None:
            return refused
        started = time.perf_counter()
        lang = detect_lang(turn.text)
        with self.telemetry.turn(turn) as span:
            run = Run(
                turn=turn,
                tools=TurnTools(self.box, turn),
                progress=progress,
                telemetry=span,
                draft=draft,
            )
            turn_starts()  # the LLM's budget for this turn (agent.fallback_reasoner)
            try:
                answer: Answer = await self.loop.run(run=run)
            except Exception as exc:  # the trace keeps the steps that ran; bot/ says sorry
                failed = Answer(
                    "", "error", trace=run.trace, searched=list(dict.fromkeys(run.tried)), lang=lang
                )
                elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
                await asyncio.to_thread(self.traces.save, turn, failed, elapsed_ms)
                span.finish(failed)
                raise TurnFailed(failed) from exc
            if turn.member_groups and answer.status in ("answered", "partial", "unknown"):
                answer.private_note = await asyncio.to_thread(self._dm_hint, turn, answer)
            elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
            await asyncio.to_thread(self.traces.save, turn, answer, elapsed_ms)
            span.finish(answer)
        return answer

    def refusal(self, text: str) -> Answer | None:
        """The one check of a question's size, before any work: an empty one gets a prompt, an
        over-long one "please shorten it" in its language (``FOOTNOTE_LIMITS__MAX_QUESTION_CHARS``);
        None when it may be answered. ``answer`` applies it; a chat asks it first, so that a
        refused question costs no placeholder and no rate-limit slot."""
        if not text.strip():
            return Answer(say("en", "empty_question"), "rejected")
        if len(text) > self.max_question_chars:
            lang = detect_lang(text)
            return Answer(
                say(lang, "too_long", n=len(text), limit=self.max_question_chars),
                "rejected",
                lang=lang,
            )
        return None

    def _dm_hint(self, turn: Turn, answer: Answer) -> str:
        """In a channel, tell the asker (privately) when they alone could read a better source —
        without naming it."""
        question = answer.searched[0] if answer.searched else turn.text
        private = self.box.retriever.search(question, turn.groups, top_k=3)
        shared = {c.doc_id for c in answer.citations}
        public = self.box.retriever.search(
            question, turn.groups, top_k=10, readers=turn.member_groups
        )
        shared |= {p.doc_id for p in public}
        if any(p.doc_id not in shared for p in private[:1]):
            return say(answer.lang, "dm_hint")
        return ""

    async def confirm(self, action_id: str, user_id: str, approve: bool) -> Answer:
        try:
            return await self._confirm(action_id, user_id, approve)
        except StateUnavailable as exc:
            log.warning("cannot check ticket proposal %s: %s", action_id, exc)
            return Answer(
                "I can't check that request right now; please try again in a few minutes.",
                "error",
            )

    async def _confirm(self, action_id: str, user_id: str, approve: bool) -> Answer:
        pending = self.box.pending
        action = pending.peek(action_id)
        if action is None:
            return Answer("That request was already handled or has expired.", "answered")
        if action.user_id != user_id:
            return Answer("Only the person who asked can confirm this ticket.", "answered")
        action = pending.take(action_id)
        if action is None:
            return Answer("That request was already handled.", "answered")
        if not approve:
            return Answer("OK — no ticket was filed.", "answered")
        ticket = await asyncio.to_thread(
            self.desk.create, action.title, action.body, user_id, action.action_id
        )
        return Answer(
            filed_text(ticket.id, ticket.title),
            "answered",
            ticket={"id": ticket.id, "link": ticket.link, "conversation": action.conversation_id},
        )

    def document(self, doc_id: str, groups: Sequence[str]) -> list[ChunkPayload]:
        return self.box.index.chunks(doc_id, groups)


class _LazyStats:
    """Term rarity from the live index, rebuilt when the index changes; kept in ``cache`` (a
    file) between processes. Where the index has a version (Qdrant Edge) that is what is
    watched, and the texts are read only when it moved; else (a Qdrant server) the count."""

    def __init__(
        self, index: Index, known: frozenset[str] = frozenset(), cache: Path | None = None
    ):
        self.index, self.known, self.cache = index, known, cache
        self._stats: TermStats | None = None
        self._seen: str | int | None = None
        self._lock = threading.Lock()

    def __call__(self) -> TermStats:
        version = self.index.version()
        seen = version if version is not None else self.index.count()
        with self._lock:
            stats = self._stats
            if stats is None or seen != self._seen:
                if version is not None and self.cache is not None:
                    stats = TermStats.cached_for(
                        version, lambda: self.index.texts(STATS_SAMPLE), self.known, self.cache
                    )
                else:
                    stats = TermStats.cached(self.index.texts(STATS_SAMPLE), self.known, self.cache)
                self._stats, self._seen = stats, seen
            return stats


def _known_words(embedders: Sequence[Embedder]) -> frozenset[str]:
    """Common English words (MiniLM's vocabulary) when MiniLM is one of the embedders: the
    speller corrects only words outside them and outside the documents."""
    if not any(e.name == "minilm" for e in embedders):
        return frozenset()
    from ingest.minilm import english_words

    return english_words()


def build_reasoner(deps: ReasonerDeps) -> Reasoner:
    """The offline reasoner; with ``FOOTNOTE_LLM__*`` set, the LLM for every step and the offline
    reasoner for the steps it fails. A bad key, URL, model or prompt file stops the start-up here."""
    from agent.offline import OfflineReasoner

    cache = deps.settings.data_dir / "cache" / "term-stats.json"
    stats = _LazyStats(deps.index, _known_words(deps.embedders), cache)
    offline = OfflineReasoner(stats, deps.embedders, deps.answer_model)
    s = deps.settings.llm
    if s is None:
        return offline
    from agent.fallback_reasoner import FallbackReasoner, StepTimeouts
    from agent.llm_reasoner import LLMReasoner
    from agent.llms import build_llms, check_reachable, provider_errors

    cheap, strong = build_llms(s)
    primary = LLMReasoner(cheap, strong, stream=s.stream)  # loads and checks the prompt files
    check_reachable(s, cheap, strong)
    return FallbackReasoner(
        primary,
        offline,
        StepTimeouts.every(s.step_timeout_s),
        recoverable=provider_errors(s),
        pause_s=s.pause_after_failure_s,
        turn_budget_s=s.turn_budget_s,
    )


def build_assistant(
    deps: AssistantDeps,
    pending: PendingActions | None = None,
    traces: TraceStore | None = None,
    reasoner: Reasoner | None = None,
    crm: CRM | None = None,
    telemetry: Telemetry | None = None,
    fallback: Fallback | None = None,
    *,
    pending_ttl_s: int = 15 * 60,
) -> Assistant:
    """The assistant over ``deps`` (index, retriever, CRM, telemetry, and the root settings for
    the agent's own sections and the data dir). ``pending_ttl_s``: how long a proposed ticket
    waits for the asker's confirmation; the bot passes ``FOOTNOTE_REDIS__PENDING_TTL_S``."""
    s = deps.settings
    box = Toolbox(
        retriever=deps.retriever,
        index=deps.index,
        crm=crm or deps.crm,
        pending=pending or MemoryPendingActions(),
        pending_ttl_s=pending_ttl_s,
        crm_readers=frozenset(s.crm.reader_groups),
        contact_fields=tuple(s.crm.contact_fields),
    )
    return Assistant(
        box=box,
        reasoner=reasoner or build_reasoner(deps),
        desk=SqliteTicketDesk(s.data_dir / "tickets.sqlite"),
        traces=traces or SqliteTraceStore(s.data_dir / "traces.sqlite"),
        telemetry=telemetry or deps.telemetry,
        fallback=fallback or deps.fallback,
        max_question_chars=s.limits.max_question_chars,
    )
