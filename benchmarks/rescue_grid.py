"""Would the rules' score and the answer model's probability, read together, refuse and answer
better than each at its own cut-off? Asks a split of every public answer set as ``footnote eval``
does and records, for the first part of each question, the rules' verdict and their best unit's
score (``OfflineReasoner._answers``) and the answer model's best probability over every unit
(``answers.score``, read exactly); then counts, per set, what two-number rules would change:

- rescue: the rules refused and the turn said "I don't know", the rules' best scored at least
  ``a`` and the model's best unit reaches ``b``: the model's best is quoted (right when it quotes
  the evidence, and states a key fact where the set has them);
- veto: the rules answered, their best scored under ``a`` and the model's best is under ``b``:
  the turn says "I don't know" (right when the question is unanswerable).

An estimate: questions of one part only, a rescued answer judged by its best unit alone.

    python benchmarks/rescue_grid.py --data-dir DATA --split dev --limit 200
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

from agent import answers
from agent.answer_model import build_answer_model
from agent.assistant import build_assistant
from agent.corpora import DATASETS, default_eval_dir, load_corpus, normalise, quotes_evidence
from agent.corpora import sample as sample_of
from agent.corpora import score as score_outcome
from agent.evaluation import corpus_turn
from agent.offline import OfflineReasoner
from bot.cli.evaluating import corpus_deps, shared_embedders
from bot.settings import Settings


def collect(settings: Settings, eval_dir: Path, split: str, limit: int) -> list[dict[str, Any]]:
    """One row per question: the set, whether it is answerable and answered right, and its
    first part's view from the rules and from the model."""
    parts: list[dict[str, Any]] = []
    opinion, verdict = OfflineReasoner._opinion, OfflineReasoner._answers

    def spied_opinion(self, question, lang, passages, stats):  # type: ignore[no-untyped-def]
        model = self._model
        ranked = answers.score(question, lang, passages, model, stats) if model else []
        best = ranked[0] if ranked else None
        parts.append({"p": best.p if best else None, "unit": best.unit.text if best else ""})
        return opinion(self, question, lang, passages, stats)

    def spied_answers(self, extract, wants):  # type: ignore[no-untyped-def]
        said = verdict(self, extract, wants)
        if parts and "rules" not in parts[-1] and extract.ranked:
            parts[-1].update(rules=said, score=extract.ranked[0].score)
        return said

    OfflineReasoner._opinion = spied_opinion  # type: ignore[method-assign]
    OfflineReasoner._answers = spied_answers  # type: ignore[method-assign]
    embedders = shared_embedders(settings)
    model = build_answer_model(settings.embedding.threads, settings.data_dir / "cache")
    rows: list[dict[str, Any]] = []
    for name in DATASETS:
        asked = sample_of([q for q in load_corpus(eval_dir, name) if q.split == split], limit)
        deps, _ = corpus_deps(settings, eval_dir, name, embedders=embedders)
        deps.__dict__["answer_model"] = model
        assistant = build_assistant(deps)
        try:
            for q in asked:
                parts.clear()
                started = time.perf_counter()
                answer = asyncio.run(assistant.answer(corpus_turn(q)))
                outcome = score_outcome(q, answer, time.perf_counter() - started)
                first = parts[0] if len(parts) == 1 and "rules" in parts[0] else None
                if first is None or first["p"] is None:
                    continue
                unit = first["unit"]
                rows.append(
                    first
                    | {
                        "set": name,
                        "answerable": q.answerable,
                        "refused": outcome.refused,
                        "correct": outcome.correct,
                        "model_right": q.answerable
                        and quotes_evidence(unit, q.evidence)
                        and (
                            not q.key_facts
                            or any(normalise(f) in normalise(unit) for f in q.key_facts)
                        ),
                    }
                )
        finally:
            deps.close()
    OfflineReasoner._opinion, OfflineReasoner._answers = opinion, verdict  # type: ignore[method-assign]
    return rows


def change(rows: list[dict[str, Any]], rule: str, a: float, b: float) -> Counter[str]:
    """Answered correctly, per set, with the rule against without it."""
    delta: Counter[str] = Counter()
    for r in rows:
        if rule == "rescue" and r["refused"] and not r["rules"] and r["score"] >= a and r["p"] >= b:
            delta[r["set"]] += int(r["model_right"]) - int(r["correct"])
        if rule == "veto" and not r["refused"] and r["rules"] and r["score"] < a and r["p"] < b:
            delta[r["set"]] += int(not r["answerable"]) - int(r["correct"])
    return delta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="holds the scratch indexes")
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--split", default="dev")
    parser.add_argument("--limit", type=int, default=200)
    args = parser.parse_args()
    settings = Settings(data_dir=args.data_dir)
    rows = collect(settings, args.eval_dir, args.split, args.limit)
    grids = {
        "rescue": ([0.2, 0.3, 0.35, 0.4], [0.1, 0.2, 0.3, 0.4]),
        "veto": ([0.5, 0.6, 0.7, 0.8], [0.02, 0.05, 0.1, 0.2]),
    }
    print(f"{len(rows)} one-part questions; change in answered correctly per set")
    for rule, (scores, probs) in grids.items():
        for a in scores:
            for b in probs:
                delta = change(rows, rule, a, b)
                sets = " ".join(f"{n} {delta[n]:+d}" for n in DATASETS)
                print(f"{rule:6} score {a:<4} p {b:<4} total {sum(delta.values()):+3d}  {sets}")


if __name__ == "__main__":
    main()
