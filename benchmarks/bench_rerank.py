"""Does the answer model's cross-encoder rerank retrieval? SciFact, fused ranking against it.

The answer model (``agent/answer_model.py``) scores (question, sentence) pairs; this asks whether
the same network, given each of the top ``--depth`` passages the product's search returns,
reorders them better than the fused ranking does. It ingests SciFact's 5,183 abstracts into a
folder (kept for the next run under ``--data-dir``), scores every train and test query's top
passages once, then prints nDCG@10 for the fused order, the cross-encoder's order, and blends of
the two (z-scored per query, weight ``a`` on the cross-encoder) at depths 10/20/30. A blend is
chosen on train; its test figure is the one to quote.

    python benchmarks/bench_rerank.py --data-dir /tmp/scifact-index   # ~6 min ingest, ~10 min scoring
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np

from agent.answer_model import build_answer_model
from benchmarks.retrieval import Product, default_eval_dir, documents, load, require_data
from bot.settings import Settings

WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0)
DEPTHS = (10, 20, 30)


def ndcg10(ranked: list[str], relevant: dict[str, int]) -> float:
    """nDCG@10, a document counted once at its best chunk."""
    ranked = list(dict.fromkeys(ranked))
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0


def _z(x: np.ndarray) -> np.ndarray:
    return (x - x.mean()) / (x.std() + 1e-9) if len(x) > 1 else np.zeros_like(x)


def blended(row: dict, weight: float, depth: int) -> float:
    """nDCG@10 of one query with its top ``depth`` reordered by the blend, the rest as found."""
    fused, cross = np.asarray(row["fused"][:depth]), np.asarray(row["cross"][:depth])
    score = (1 - weight) * _z(fused) + weight * _z(cross)
    order = np.argsort(-score, kind="stable")
    docs = row["docs"]
    return ndcg10([docs[i] for i in order] + docs[depth:], row["rel"])


def collect(data_dir: Path, eval_dir: Path, depth: int) -> list[dict]:
    settings = Settings(data_dir=data_dir)
    product = Product.build(settings, data_dir)
    try:
        train, test = load(eval_dir, "scifact", "train"), load(eval_dir, "scifact", "test")
        marker = data_dir / "scifact-ingested"
        if not marker.exists():
            started = time.perf_counter()
            report = product.ingester.add_documents(documents(test))  # one corpus for both splits
            product.retriever.index.optimize()
            marker.write_text(str(report.chunks))
            print(f"ingested {report.chunks} chunks in {time.perf_counter() - started:.0f} s")
        cross = build_answer_model(settings.embedding.threads, data_dir / "cache").cross
        assert cross is not None
        rows, took = [], []
        for split, bench in (("train", train), ("test", test)):
            for qid, query in bench.queries:
                passages = product.retriever.search(query, ["*"], top_k=depth)
                started = time.perf_counter()
                logits = cross.logits(query, [p.body for p in passages])
                took.append(time.perf_counter() - started)
                rows.append(
                    {
                        "split": split,
                        "docs": [p.doc_id for p in passages],
                        "fused": [p.score for p in passages],
                        "cross": logits.tolist(),
                        "rel": bench.qrels[qid],
                    }
                )
        print(f"cross-encoder: {statistics.median(took) * 1000:.0f} ms p50 for {depth} passages")
        return rows
    finally:
        product.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="index folder, kept")
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    args = parser.parse_args()
    require_data(args.eval_dir, "scifact", "train")
    require_data(args.eval_dir, "scifact", "test")
    scores = args.data_dir / "scifact-rerank.json"
    if scores.exists():
        rows = json.loads(scores.read_text())
    else:
        rows = collect(args.data_dir, args.eval_dir, max(DEPTHS))
        scores.write_text(json.dumps(rows))
    for split in ("train", "test"):
        mine = [r for r in rows if r["split"] == split]
        alone = statistics.fmean(ndcg10(r["docs"], r["rel"]) for r in mine)
        print(f"\n{split} ({len(mine)} queries): fused {alone:.4f}")
        for depth in DEPTHS:
            cells = [
                f"a={w:.1f} {statistics.fmean(blended(r, w, depth) for r in mine):.4f}"
                for w in WEIGHTS[1:]
            ]
            print(f"  top {depth}: " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
