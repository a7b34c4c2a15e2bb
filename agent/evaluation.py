"""``footnote eval``: the golden questions through the whole answer loop, scored.

Retrieval is scored on the asker's own search (Recall@5, MRR@10 of the expected documents);
answers on status (refusal accuracy, over-refusal), citations (from an expected document) and
key facts (literal strings a correct answer contains).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from rich.table import Table

from agent.assistant import build_assistant
from agent.turns import Answer, Turn


@dataclass
class GoldenItem:
    id: str
    question: str
    user: str
    answerable: bool
    sources: list[str]
    facts: list[str]
    kind: str


def load_golden(path: Path) -> list[GoldenItem]:
    rows = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return [
        GoldenItem(
            r["id"],
            r["question"],
            r["user"],
            bool(r["answerable"]),
            list(r.get("sources") or []),
            [str(f) for f in r.get("facts") or []],
            r.get("kind", "single"),
        )
        for r in rows
    ]


def _is_expected(doc_id: str, sources: list[str]) -> bool:
    return any(doc_id.endswith("/" + s) or doc_id == s for s in sources)


@dataclass
class ItemResult:
    item: GoldenItem
    answer: Answer
    seconds: float
    ranks: list[int]  # rank (1-based) of each expected source in the asker's top 10, 0 if absent


@dataclass
class EvalReport:
    results: list[ItemResult] = field(default_factory=list)

    @property
    def metrics(self) -> dict[str, float]:
        ans = [r for r in self.results if r.item.answerable]
        unans = [r for r in self.results if not r.item.answerable]
        recall5 = [sum(1 for k in r.ranks if 0 < k <= 5) / len(r.ranks) for r in ans if r.ranks]
        mrr = [1 / min(k for k in r.ranks if k) if any(r.ranks) else 0.0 for r in ans if r.ranks]
        cites = [
            c for r in ans for c in r.answer.citations if r.answer.status in ("answered", "partial")
        ]
        facts = [
            sum(f.lower() in r.answer.text.lower() for f in r.item.facts) / len(r.item.facts)
            if r.answer.status in ("answered", "partial")
            else 0.0
            for r in ans
            if r.item.facts
        ]
        rounds = [max((s.round for s in r.answer.trace), default=0) for r in self.results]
        secs = sorted(r.seconds for r in self.results)
        return {
            "questions": len(self.results),
            "recall@5": _mean(recall5),
            "mrr@10": _mean(mrr),
            "citation_accuracy": _mean(
                [
                    1.0 if _is_expected(c.doc_id, r.item.sources) else 0.0
                    for r in ans
                    for c in r.answer.citations
                    if r.answer.status in ("answered", "partial")
                ]
            )
            if cites
            else 0.0,
            "refusal_accuracy": _mean(
                [1.0 if r.answer.status == "unknown" else 0.0 for r in unans]
            ),
            "over_refusal": _mean([1.0 if r.answer.status == "unknown" else 0.0 for r in ans]),
            "key_fact_coverage": _mean(facts),
            "mean_rounds": _mean(rounds),
            "p50_ms": 1000 * secs[len(secs) // 2] if secs else 0.0,
            "p95_ms": 1000 * secs[min(len(secs) - 1, int(len(secs) * 0.95))] if secs else 0.0,
        }

    def table(self) -> Table:
        t = Table("metric", "value", title=f"golden set — {len(self.results)} questions")
        for k, v in self.metrics.items():
            t.add_row(
                k, f"{v:.3f}" if isinstance(v, float) and not k.endswith("ms") else f"{v:.0f}"
            )
        return t

    def failures(self) -> list[str]:
        out = []
        for r in self.results:
            wrong = (r.answer.status == "unknown") == r.item.answerable
            missing = [f for f in r.item.facts if f.lower() not in r.answer.text.lower()]
            if wrong or (r.item.answerable and missing):
                out.append(
                    f"{r.item.id} [{r.item.kind}] {r.answer.status} {r.item.question!r} missing={missing}"
                )
        return out


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else 0.0


async def run_eval(deps, golden: list[GoldenItem]) -> EvalReport:
    assistant = build_assistant(deps)
    report = EvalReport()
    for item in golden:
        person = deps.directory.find(item.user)
        groups = tuple(person.groups) if person else ()
        hits = deps.retriever.search(item.question, groups, top_k=10)
        docs = list(dict.fromkeys(h.doc_id for h in hits))
        ranks = [
            next((i + 1 for i, d in enumerate(docs) if _is_expected(d, [s])), 0)
            for s in item.sources
        ]
        started = time.perf_counter()
        answer = await assistant.answer(Turn(user_id=item.user, text=item.question, groups=groups))
        report.results.append(ItemResult(item, answer, time.perf_counter() - started, ranks))
    return report
