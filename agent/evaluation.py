"""``footnote eval``: the golden questions through the whole answer loop, scored.

Retrieval is scored on the asker's own search (Recall@5, MRR@10 of the expected documents);
answers on status (refusal accuracy, over-refusal), citations (from an expected document) and
key facts (literal strings a correct answer contains; a fact may list alternatives, any one of
which counts, and ``conclusions`` are key facts that no document states word for word).

An item counts as answered correctly when an answerable item is answered with every key fact and
none of its ``forbidden`` strings (the rule for another audience, a previous turn's customer), and
when an unanswerable one gets "I don't know". The report gives the figures for the whole set,
for the original 99 (``set: v1``) and per kind.

Multi-turn items ask their earlier ``turns`` first, in the same conversation, and pass the
assistant's real replies on as history; only the last answer is scored. Their retrieval is not
scored: a follow-up's words alone ("and for contractors?") are no search. Items with ``today``
are answered as on that date, so CRM ages and refund windows do not drift.

``dump_golden`` writes items back in the same format (with a comment above each), which is how
``footnote feedback export`` turns rated answers into cases for ``footnote eval --cases``.

``run_corpus_eval`` asks the questions of a public answer set (``footnote eval --dataset``; the
turns and the scoring are in ``agent.corpora``) and ``datasets_table`` puts each set's row and
the golden set's in one table.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import yaml
from rich.table import Table

from agent.assistant import Assistant
from agent.corpora import CorpusQuestion, CorpusReport, score
from agent.turns import Answer, Message, Turn, TurnFailed

log = logging.getLogger(__name__)

# user id → the groups they read as (empty for someone unknown): the directory, seen from here
GroupsOf = Callable[[str], Sequence[str]]

ORIGINAL_SET = "v1"
REFUSED = "unknown"
ANSWERED = ("answered", "partial")


@dataclass
class GoldenItem:
    id: str
    question: str
    user: str
    answerable: bool
    sources: list[str]
    facts: list[list[str]]  # each fact: its acceptable spellings, any one of them is enough
    kind: str
    conclusions: list[list[str]] = field(default_factory=list)  # key facts no document states
    forbidden: list[str] = field(default_factory=list)  # strings a correct answer never contains
    turns: list[str] = field(default_factory=list)  # earlier questions of the same conversation
    today: date | None = None  # answer as on this date (CRM ages, refund windows)
    groups: tuple[str, ...] | None = None  # an asker the directory lacks
    channel: list[str] = field(default_factory=list)  # the other members, for a channel question
    set: str = ORIGINAL_SET
    verdict: str = ""  # the asker's vote on the answer the case came from: up / down
    reason: str = ""  # and why (wrong, outdated, incomplete, unanswered, other)

    @property
    def key_facts(self) -> list[list[str]]:
        return self.facts + self.conclusions

    @property
    def original(self) -> bool:
        return self.set == ORIGINAL_SET


def _alternatives(fact: object) -> list[str]:
    return [str(f) for f in fact] if isinstance(fact, list) else [str(fact)]


def load_golden(path: Path) -> list[GoldenItem]:
    rows = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return [
        GoldenItem(
            id=str(r["id"]),
            question=r["question"],
            user=r.get("user") or f"golden-{r['id']}",
            answerable=bool(r["answerable"]),
            sources=list(r.get("sources") or []),
            facts=[_alternatives(f) for f in r.get("facts") or []],
            kind=r.get("kind", "single"),
            conclusions=[_alternatives(f) for f in r.get("conclusions") or []],
            forbidden=[str(f) for f in r.get("forbidden") or []],
            turns=[str(t) for t in r.get("turns") or []],
            today=r.get("today"),
            groups=tuple(r["groups"]) if r.get("groups") is not None else None,
            channel=list(r.get("channel") or []),
            set=str(r.get("set", ORIGINAL_SET)),
            verdict=str(r.get("verdict") or ""),
            reason=str(r.get("reason") or ""),
        )
        for r in rows or []
    ]


def dump_golden(items: Sequence[GoldenItem], comments: dict[str, list[str]], header: str) -> str:
    """``items`` in the golden file's format: ``header`` and each item's ``comments`` (by id) as
    YAML comments; fields at their defaults are left out, ``facts`` always written."""
    out = [_comment(line) for line in header.splitlines()]
    for item in items:
        row: dict[str, object] = {"id": item.id, "question": item.question}
        if item.groups is not None:
            row["groups"] = list(item.groups)  # an asker the directory lacks: no user written
        else:
            row["user"] = item.user
        row |= {
            "answerable": item.answerable,
            "sources": list(item.sources),
            "facts": [f if len(f) > 1 else f[0] for f in item.facts],
            "kind": item.kind,
            "set": item.set,
        }
        optional = {
            "turns": item.turns,
            "today": item.today,
            "channel": item.channel,
            "verdict": item.verdict,
            "reason": item.reason,
        }
        row |= {k: v for k, v in optional.items() if v}
        out.append("")
        out += [_comment(line) for line in comments.get(item.id, [])]
        out.append(yaml.safe_dump([row], allow_unicode=True, sort_keys=False, width=100).rstrip())
    return "\n".join(out) + "\n"


def _comment(line: str) -> str:
    """One comment line, whatever the text holds (a line break would end the comment)."""
    return ("# " + " ".join(line.split())).rstrip()


def _is_expected(doc_id: str, sources: list[str]) -> bool:
    return any(doc_id.endswith("/" + s) or doc_id == s for s in sources)


def _found(alternatives: list[str], text: str) -> bool:
    return any(a.lower() in text for a in alternatives)


@dataclass
class ItemResult:
    item: GoldenItem
    answer: Answer
    seconds: float
    ranks: list[int]  # rank (1-based) of each expected source in the asker's top 10, 0 if absent

    @property
    def answered(self) -> bool:
        return self.answer.status in ANSWERED

    @property
    def missing(self) -> list[str]:
        """Key facts the answer lacks (each shown by its first spelling)."""
        text = self.answer.text.lower()
        return [f[0] for f in self.item.key_facts if not _found(f, text)]

    @property
    def forbidden_found(self) -> list[str]:
        text = self.answer.text.lower()
        return [f for f in self.item.forbidden if f.lower() in text]

    @property
    def fact_coverage(self) -> float:
        facts = self.item.key_facts
        if not self.answered:
            return 0.0
        return (len(facts) - len(self.missing)) / len(facts)

    @property
    def correct(self) -> bool:
        if not self.item.answerable:
            return self.answer.status == REFUSED
        return self.answered and not self.missing and not self.forbidden_found


def _citation_scores(results: Sequence[ItemResult]) -> list[float]:
    return [
        1.0 if _is_expected(c.doc_id, r.item.sources) else 0.0
        for r in results
        if r.item.answerable and r.answered
        for c in r.answer.citations
    ]


@dataclass
class EvalReport:
    results: list[ItemResult] = field(default_factory=list)

    @property
    def metrics(self) -> dict[str, float]:
        ans = [r for r in self.results if r.item.answerable]
        unans = [r for r in self.results if not r.item.answerable]
        recall5 = [sum(1 for k in r.ranks if 0 < k <= 5) / len(r.ranks) for r in ans if r.ranks]
        mrr = [1 / min(k for k in r.ranks if k) if any(r.ranks) else 0.0 for r in ans if r.ranks]
        facts = [r.fact_coverage for r in ans if r.item.key_facts]
        rounds = [max((s.round for s in r.answer.trace), default=0) for r in self.results]
        secs = sorted(r.seconds for r in self.results)
        return {
            "questions": len(self.results),
            "recall@5": _mean(recall5),
            "mrr@10": _mean(mrr),
            "citation_accuracy": _mean(_citation_scores(ans)),
            "refusal_accuracy": _mean([1.0 if r.answer.status == REFUSED else 0.0 for r in unans]),
            "over_refusal": _mean([1.0 if r.answer.status == REFUSED else 0.0 for r in ans]),
            "key_fact_coverage": _mean(facts),
            "answered_correctly": _mean([1.0 if r.correct else 0.0 for r in self.results]),
            "mean_rounds": _mean(rounds),
            "p50_ms": 1000 * secs[len(secs) // 2] if secs else 0.0,
            "p95_ms": 1000 * secs[min(len(secs) - 1, int(len(secs) * 0.95))] if secs else 0.0,
        }

    def subset(self, keep: Callable[[GoldenItem], bool]) -> EvalReport:
        return EvalReport([r for r in self.results if keep(r.item)])

    @property
    def original(self) -> EvalReport:
        """The 99 questions the set had before issue 12, so old figures stay comparable."""
        return self.subset(lambda item: item.original)

    def by_kind(self) -> dict[str, EvalReport]:
        kinds: dict[str, EvalReport] = {}
        for r in self.results:
            kinds.setdefault(r.item.kind, EvalReport()).results.append(r)
        return kinds

    def table(self) -> Table:
        """The metrics of the original 99 next to those of the whole set (the column of the
        original questions is left out when a --kind filter kept none of them)."""
        original = self.original
        columns = {f"full set ({len(self.results)})": self}
        if original.results:
            columns = {f"original ({len(original.results)})": original} | columns
        t = Table(
            "metric",
            *columns,
            title=f"golden set — {len(self.results)} questions",
        )
        values = {name: report.metrics for name, report in columns.items()}
        for k in self.metrics:
            t.add_row(k, *(_cell(k, v[k]) for v in values.values()))
        return t

    def kind_table(self) -> Table:
        """Per kind: how many, answered correctly, key facts, refusals, citations ("–" = n/a)."""
        t = Table(
            "kind",
            "n",
            "correct",
            "key facts",
            "refusal",
            "over-refusal",
            "citations",
            title="per kind",
        )
        rows = sorted(self.by_kind().items(), key=lambda kv: (kv[1].results[0].item.set, kv[0]))
        for kind, report in [*rows, ("all", self)]:
            t.add_row(kind, *report.kind_row())
        return t

    def kind_row(self) -> list[str]:
        ans = [r for r in self.results if r.item.answerable]
        unans = [r for r in self.results if not r.item.answerable]
        facts = [r.fact_coverage for r in ans if r.item.key_facts]
        cites = _citation_scores(ans)
        return [
            str(len(self.results)),
            _rate([1.0 if r.correct else 0.0 for r in self.results]),
            _rate(facts),
            _rate([1.0 if r.answer.status == REFUSED else 0.0 for r in unans]),
            _rate([1.0 if r.answer.status == REFUSED else 0.0 for r in ans]),
            _rate(cites),
        ]

    def failures(self) -> list[str]:
        out = []
        for r in self.results:
            if r.correct:
                continue
            wrong = f" forbidden={r.forbidden_found}" if r.forbidden_found else ""
            if r.item.verdict:
                wrong += (
                    f" (rated {r.item.verdict}{' · ' + r.item.reason if r.item.reason else ''})"
                )
            out.append(
                f"{r.item.id} [{r.item.kind}] {r.answer.status} {r.item.question!r} "
                f"missing={r.missing if r.item.answerable else []}{wrong}"
            )
        return out


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else 0.0


def _rate(xs: Sequence[float]) -> str:
    return f"{statistics.fmean(xs):.3f}" if xs else "–"


def _cell(metric: str, value: float) -> str:
    return (
        f"{value:.3f}" if isinstance(value, float) and not metric.endswith("ms") else f"{value:.0f}"
    )


async def run_eval(
    assistant: Assistant, golden: list[GoldenItem], groups_of: GroupsOf
) -> EvalReport:
    """Ask every item as its asker (and, for a channel item, with its members), score it.
    ``groups_of`` names each asker's groups, as the chat adapters' directory would."""
    report = EvalReport()
    for item in golden:
        groups = item.groups if item.groups is not None else tuple(groups_of(item.user))
        members: tuple[tuple[str, ...], ...] = ()
        if item.channel:
            others = (tuple(groups_of(m)) for m in item.channel)
            members = tuple(dict.fromkeys([groups, *others]))

        ranks: list[int] = []
        if not item.turns:
            hits = assistant.box.retriever.search(item.question, groups, top_k=10)
            docs = list(dict.fromkeys(h.doc_id for h in hits))
            ranks = [
                next((i + 1 for i, d in enumerate(docs) if _is_expected(d, [s])), 0)
                for s in item.sources
            ]
        history: tuple[Message, ...] = ()
        for earlier in item.turns:
            reply = await _answer(assistant, _turn(item, groups, members, earlier, history))
            history += (Message("user", earlier), Message("assistant", reply.text))
        started = time.perf_counter()
        answer = await _answer(assistant, _turn(item, groups, members, item.question, history))
        report.results.append(ItemResult(item, answer, time.perf_counter() - started, ranks))
    return report


async def _answer(assistant: Assistant, turn: Turn) -> Answer:
    """A turn our code failed on is scored as the error it is, and the run goes on; the log
    keeps why."""
    try:
        return await assistant.answer(turn)
    except TurnFailed as exc:
        log.warning("eval turn %s failed", turn.turn_id, exc_info=exc)
        return exc.answer


def _turn(
    item: GoldenItem,
    groups: tuple[str, ...],
    members: tuple[tuple[str, ...], ...],
    text: str,
    history: tuple[Message, ...],
) -> Turn:
    return Turn(
        user_id=item.user,
        text=text,
        groups=groups,
        channel_kind="channel" if item.channel else "dm",
        member_groups=members,
        conversation_id=f"golden-{item.id}",
        history=history,
        today=item.today,
    )


async def run_corpus_eval(
    assistant: Assistant,
    name: str,
    split: str,
    questions: Sequence[CorpusQuestion],
    on_item: Callable[[], None] = lambda: None,
) -> CorpusReport:
    """Ask each question as an ordinary user with no groups (the corpus is readable by all),
    its earlier turns given as history, and score it; only the answer call is timed. One answer
    before the first, not scored, loads what loads lazily."""
    report = CorpusReport(name, split)
    if questions:
        await _answer(assistant, corpus_turn(questions[0], "warm-up"))
    for q in questions:
        started = time.perf_counter()
        answer = await _answer(assistant, corpus_turn(q))
        report.outcomes.append(score(q, answer, time.perf_counter() - started))
        on_item()
    return report


def corpus_turn(q: CorpusQuestion, conversation: str = "") -> Turn:
    return Turn(
        user_id=f"eval-{q.dataset}",
        text=q.message,
        groups=(),
        conversation_id=conversation or f"{q.dataset}-{q.id}",
        history=tuple(
            Message("user" if role == "user" else "assistant", t) for role, t in q.history
        ),
    )


DATASET_COLUMNS = (  # answered correctly, refusal, over-refusal, citation, key facts, evidence quoted
    "questions",
    "correct",
    "refusal",
    "over-ref.",
    "citation",
    "key facts",
    "evidence",
    "p50 ms",
    "p95 ms",
)


def datasets_table(reports: Sequence[CorpusReport], golden: EvalReport | None = None) -> Table:
    """One row per answer set (questions as answerable/unanswerable), then the golden set's,
    whose citation column is its own (share of citations from an expected document) and which
    has no evidence strings ("–" = does not apply)."""
    split = reports[0].split if reports else ""
    t = Table(title=f"answer sets — {split} split" if split else None)
    t.add_column("set", no_wrap=True)
    for name in DATASET_COLUMNS:
        t.add_column(name, justify="right")
    for r in reports:
        m = r.metrics
        t.add_row(
            r.name,
            f"{m['questions']} ({m['answerable']}/{m['unanswerable']})",
            *(
                _opt(m[k])
                for k in (
                    "answered_correctly",
                    "refusal",
                    "over_refusal",
                    "citation",
                    "key_facts",
                    "evidence_quoted",
                )
            ),
            _ms(m["p50_ms"]),
            _ms(m["p95_ms"]),
        )
    if golden is not None:
        g = golden.metrics
        ans = sum(1 for r in golden.results if r.item.answerable)
        t.add_row(
            "handbook (golden)",
            f"{len(golden.results)} ({ans}/{len(golden.results) - ans})",
            _opt(g["answered_correctly"]),
            _opt(g["refusal_accuracy"]),
            _opt(g["over_refusal"]),
            _opt(g["citation_accuracy"]),
            _opt(g["key_fact_coverage"]),
            "–",
            _ms(g["p50_ms"]),
            _ms(g["p95_ms"]),
        )
    return t


def _opt(value: float | int | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _ms(value: float | int | None) -> str:
    return "–" if value is None else f"{value:.0f}"
