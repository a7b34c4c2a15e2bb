"""Where a sentence that answers a question, and one that does not, sit by cosine with it, for
each embedder the offline answer step reads meaning by (MiniLM and USE).

``extract.closeness`` turns a cosine into 0..1 between ``Calibration.unrelated_at`` (unrelated)
and ``unrelated_at + same_span`` (the same meaning), one scale for both embedders, set by hand on
the handbook. This reads that scale off data: for up to ``--per-set`` answerable questions of each
public answer set's **train** split, the cosine of the question with its evidence sentence
(answering) and with the evidence of a question about another document of the same set
(unrelated), and prints their percentiles per set and embedder. Nothing here changes a number:
the scale these percentiles give lost on the dev splits when tried alone (docs/quality.md).

    python benchmarks/closeness_scales.py                  # ~2 min on 2 cores
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

from agent.corpora import DATASETS, default_eval_dir, split_of
from ingest.embed import Embedder, UseEmbedder
from ingest.minilm import MiniLMEmbedder

Pair = tuple[str, str, str]  # question, its evidence, another document's evidence


def pairs(folder: Path, dataset: str, per_set: int, rng: random.Random) -> list[Pair]:
    """The train split's answerable questions with evidence, each beside another document's."""
    rows = [json.loads(line) for line in (folder / "questions.jsonl").open(encoding="utf-8")]
    rows = [
        r
        for r in rows
        if r.get("answerable")
        and r.get("evidence")
        and split_of(dataset, r.get("doc"), r["id"]) == "train"
    ]
    rng.shuffle(rows)
    rows = rows[:per_set]
    out = []
    for r in rows:
        others = [o for o in rows if o.get("doc") != r.get("doc")]
        if others:
            out.append((r["question"], r["evidence"][0], rng.choice(others)["evidence"][0]))
    return out


def cosines(embedder: Embedder, found: list[Pair]) -> tuple[np.ndarray, np.ndarray]:
    """(answering, unrelated) cosines, one per question."""
    q = embedder.embed([p[0] for p in found], kind="query")
    answering = embedder.embed([p[1] for p in found])
    unrelated = embedder.embed([p[2] for p in found])
    return (q * answering).sum(1), (q * unrelated).sum(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--per-set", type=int, default=150)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    found = {
        name: pairs(args.eval_dir / "answers" / name, name, args.per_set, rng)
        for name in DATASETS
        if (args.eval_dir / "answers" / name / "questions.jsonl").exists()
    }
    if not found:
        raise SystemExit(f"no answer sets under {args.eval_dir / 'answers'}: pass --eval-dir")
    print("embedder  set             n   unrelated p50 p90 | answering p10 p50 p90")
    for embedder in (MiniLMEmbedder(), UseEmbedder()):
        pooled: tuple[list[float], list[float]] = ([], [])
        for name, sample in found.items():
            answering, unrelated = cosines(embedder, sample)
            pooled[0].extend(answering)
            pooled[1].extend(unrelated)
            u, a = np.percentile(unrelated, [50, 90]), np.percentile(answering, [10, 50, 90])
            print(
                f"{embedder.name:8s}  {name:14s} {len(sample):3d}   {u[0]:13.2f} {u[1]:.2f} |"
                f" {a[0]:13.2f} {a[1]:.2f} {a[2]:.2f}"
            )
        u, a = np.percentile(pooled[1], [50, 90]), np.percentile(pooled[0], [10, 50, 90])
        print(
            f"{embedder.name:8s}  {'all':14s} {len(pooled[0]):3d}   {u[0]:13.2f} {u[1]:.2f} |"
            f" {a[0]:13.2f} {a[1]:.2f} {a[2]:.2f}"
        )


if __name__ == "__main__":
    main()
