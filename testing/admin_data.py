"""Records for the admin page's tests and screenshots: turns, feedback and traces as Footnote
writes them (through ``FeedbackStore`` and the trace stores), and a document library that says
who may read what, as the index does, without loading a model."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent.traces import SqliteTraceStore
from agent.turns import Answer, TraceStep, Turn
from bot.reports.feedback import CitedDocument, FeedbackRecord, FeedbackStore, TurnRecord
from ingest.documents import ChunkPayload

LEAVE = "handbook/hr/leave-policy-2026.md"  # everyone
SALARY = "handbook/hr/salary-bands.pdf"  # hr only
ONCALL = "handbook/engineering/oncall-runbook.md"  # engineering
DRAFT = "handbook/drafts/reorg-plan-draft.md"  # admins only

ACCESS: dict[str, tuple[str, ...]] = {
    LEAVE: ("*",),
    SALARY: ("hr",),
    ONCALL: ("engineering", "admins"),
    DRAFT: ("admins",),
}
TITLES = {
    LEAVE: "Leave policy 2026",
    SALARY: "Salary bands",
    ONCALL: "On-call runbook",
    DRAFT: "Reorganisation plan (draft)",
}


@dataclass
class Library:
    """Who may read which document: ``document`` gives its chunks to a reader whose groups may."""

    access: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(ACCESS))

    def document(self, doc_id: str, groups: Sequence[str]) -> list[ChunkPayload]:
        allowed = self.access.get(doc_id, ())
        if "*" not in allowed and not set(allowed) & set(groups):
            return []
        chunk: ChunkPayload = {  # type: ignore[typeddict-item]
            "doc_id": doc_id,
            "title": TITLES.get(doc_id, doc_id),
            "text": "…",
        }
        return [chunk]

    streams = False

    def refusal(self, text: str) -> Answer | None:
        return None  # "admin" is never refused for its size

    async def answer(self, turn: Turn, progress: object = None, draft: object = None) -> Answer:
        raise AssertionError("the admin page never asks a question")

    async def confirm(self, action_id: str, user_id: str, approve: bool) -> Answer:
        raise AssertionError("the admin page never confirms a ticket")


def steps(doc: str, *, fallback: str = "", rounds: int = 1, dropped_sentence: str = "") -> list:
    """A plausible trace: plan, search, grade (one passage kept, one dropped), answer, check."""
    trace = [
        TraceStep(1, "plan", decision="1 sub-question", ms=3.1),
        TraceStep(1, "search", queries=["leave carry over"], hits=8, ms=14.2),
        TraceStep(
            1,
            "grade",
            decision="enough" if rounds == 1 else "rewrite",
            reason="a relevant passage was found" if rounds == 1 else "found only off-topic",
            queries=["leave carry over"],
            hits=8,
            kept=[f"{doc}#3"],
            dropped=[f"{DRAFT}#1: off-topic: covers 0/3 key terms"],
            ms=21.7,
            llm_fallback=fallback,
        ),
    ]
    if rounds > 1:
        trace += [
            TraceStep(2, "rewrite", queries=["carry-over days expiry"], ms=4.0),
            TraceStep(2, "search", queries=["carry-over days expiry"], hits=6, ms=11.0),
        ]
    trace += [
        TraceStep(rounds, "answer", decision="2 sentence(s)", ms=9.5),
        TraceStep(
            rounds,
            "check",
            decision="grounded",
            dropped=[dropped_sentence] if dropped_sentence else [],
            ms=6.3,
        ),
    ]
    return trace


def put_trace(
    store: SqliteTraceStore, turn: Turn, answer: Answer, ms: float, at: dt.datetime
) -> None:
    """Save a trace as the assistant does, dated ``at`` (the store dates it now)."""
    store.save(turn, answer, ms)
    with store._lock, store._db:
        n, data = store._db.execute("SELECT n, data FROM traces ORDER BY n DESC LIMIT 1").fetchone()
        record = json.loads(data)
        record["at"] = at.timestamp()
        store._db.execute("UPDATE traces SET data = ? WHERE n = ?", (json.dumps(record), n))


QUESTIONS = [
    ("How many vacation days carry over?", "answered", LEAVE, "alice"),
    ("What is the salary band for L4?", "answered", SALARY, "alice"),
    ("Who is on call this weekend?", "partial", ONCALL, "bob"),
    ("Is the Berlin office open on Dec 24?", "unknown", "", "wei"),
    ("Can contractors expense a laptop?", "answered", LEAVE, "erin"),
    ("When does the reorg happen?", "unknown", "", "carol"),
    ("How do I restart the billing service?", "answered", ONCALL, "bob"),
    ("hi!", "smalltalk", "", "dave"),
]


def seed(
    store: FeedbackStore, traces: SqliteTraceStore, days: int = 14, now: dt.datetime | None = None
) -> list[TurnRecord]:
    """A fortnight of turns, with traces and feedback, a few each day."""
    now = now or dt.datetime.now(dt.UTC)
    made = []
    for day in range(days):
        for k in range((day * 7) % 5 + 2):
            question, status, doc, user = QUESTIONS[(day + k) % len(QUESTIONS)]
            at = now - dt.timedelta(days=day, hours=k * 2 + 1, minutes=day * 3 % 60)
            turn = Turn(user_id=user, text=question, groups=("engineering",))
            cited = (CitedDocument(doc, TITLES[doc]),) if doc and status != "unknown" else ()
            answer_text = (
                "Up to 5 unused days carry over to the next year [1]."
                if cited
                else "I don't know: nothing I can read answers that."
            )
            record = TurnRecord(
                turn_id=turn.turn_id,
                platform="slack" if k % 2 == 0 else "teams",
                conversation=f"slack:T1:D{user}",
                user_id=user,
                groups=turn.groups,
                channel_kind="dm",
                question=question,
                status=status,
                answer=answer_text,
                citations=cited,
                at=at.isoformat(timespec="milliseconds"),
            )
            store.record_turn(record)
            answer = Answer(
                answer_text,
                status,  # type: ignore[arg-type]
                trace=steps(doc or LEAVE, rounds=1 + (status == "unknown")),
            )
            put_trace(traces, turn, answer, 60.0 + (day * 37 + k * 53) % 240, at)
            if k % 2 == 0:
                down = status in ("unknown", "partial")
                store.record_feedback(
                    FeedbackRecord(
                        turn.turn_id,
                        user,
                        "down" if down else "up",
                        ("unanswered" if status == "unknown" else "incomplete") if down else "",
                        "It should mention the March deadline." if down and k == 0 else "",
                        at=(at + dt.timedelta(minutes=2)).isoformat(timespec="milliseconds"),
                    )
                )
            made.append(record)
    return made
