"""The agent's front door for every adapter: ``answer(turn)``, ``confirm(action)``, ``document(id)``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent.actions import MemoryPendingActions, PendingActions
from agent.desk import CRM, SqliteCRM, SqliteTicketDesk, TicketDesk
from agent.fallback import Fallback
from agent.loop import AnswerLoop, Progress, Run
from agent.reasoning import Reasoner
from agent.telemetry import Telemetry
from agent.terms import TermStats
from agent.tools import Toolbox, TurnTools
from agent.traces import SqliteTraceStore, TraceStore
from agent.turns import Answer, Turn

STATS_SAMPLE = 50_000  # chunks read to estimate term rarity


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

    def __post_init__(self):
        self.loop = AnswerLoop(self.reasoner, self.fallback)

    async def answer(self, turn: Turn, progress: Progress | None = None) -> Answer:
        with self.telemetry.turn(turn) as span:
            run = Run(turn=turn, tools=TurnTools(self.box, turn), progress=progress, telemetry=span)
            try:
                answer: Answer = await self.loop.run(run=run)
            except (
                Exception
            ) as exc:  # every turn ends with a reply; the trace keeps what went wrong
                answer = Answer(
                    "Sorry — something went wrong while I was looking that up. Please try again in a moment.",
                    "error",
                    trace=run.trace,
                    searched=list(dict.fromkeys(run.tried)),
                )
                answer.note = f"{type(exc).__name__}"
            if turn.member_groups and answer.status in ("answered", "partial", "unknown"):
                answer.note = answer.note or await asyncio.to_thread(self._dm_hint, turn, answer)
            await asyncio.to_thread(self.traces.save, turn, answer)
            span.finish(answer)
        return answer

    def _dm_hint(self, turn: Turn, answer: Answer) -> str:
        """In a channel, say when the asker alone could read a better source — without naming it."""
        question = answer.searched[0] if answer.searched else turn.text
        private = self.box.retriever.search(question, turn.groups, top_k=3)
        shared = {c.doc_id for c in answer.citations}
        public = self.box.retriever.search(
            question, turn.groups, top_k=10, readers=turn.member_groups
        )
        shared |= {p.doc_id for p in public}
        if any(p.doc_id not in shared for p in private[:1]):
            return "Some documents only you can read may answer this better — ask me in a DM."
        return ""

    async def confirm(self, action_id: str, user_id: str, approve: bool) -> Answer:
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
            f"Filed {ticket.id}: {ticket.title}",
            "answered",
            ticket={"id": ticket.id, "link": ticket.link},
        )

    def document(self, doc_id: str, groups: Sequence[str]) -> list[dict]:
        return self.box.index.chunks(doc_id, groups)


class _LazyStats:
    """Term rarity from the live index, rebuilt when the index size changes."""

    def __init__(self, index):
        self.index, self._stats, self._count = index, None, -1
        self._lock = threading.Lock()

    def __call__(self) -> TermStats:
        count = self.index.count()
        with self._lock:
            if self._stats is None or count != self._count:
                self._stats = TermStats.from_texts(self.index.texts(STATS_SAMPLE))
                self._count = count
            return self._stats


def build_reasoner(deps) -> Reasoner:
    if deps.settings.llm is not None:
        from agent.llm_reasoner import LLMReasoner
        from agent.llms import build_llms

        cheap, strong = build_llms(deps.settings.llm)
        return LLMReasoner(cheap, strong)
    from agent.offline import OfflineReasoner

    return OfflineReasoner(_LazyStats(deps.index), deps.embedders)


def build_assistant(
    deps,
    pending: PendingActions | None = None,
    traces: TraceStore | None = None,
    reasoner: Reasoner | None = None,
    crm: CRM | None = None,
    telemetry: Telemetry | None = None,
    fallback: Fallback | None = None,
) -> Assistant:
    s = deps.settings
    examples = s.directory_file.parent
    box = Toolbox(
        retriever=deps.retriever,
        index=deps.index,
        crm=crm or SqliteCRM(s.data_dir / "crm.sqlite", examples / "crm.json"),
        pending=pending or MemoryPendingActions(),
        pending_ttl_s=s.redis.pending_ttl_s,
    )
    return Assistant(
        box=box,
        reasoner=reasoner or build_reasoner(deps),
        desk=SqliteTicketDesk(s.data_dir / "tickets.sqlite"),
        traces=traces or SqliteTraceStore(s.data_dir / "traces.sqlite"),
        telemetry=telemetry or deps.telemetry,
        fallback=fallback or getattr(deps, "fallback", None),
    )
