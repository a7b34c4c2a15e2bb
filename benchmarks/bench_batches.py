"""How many texts should MiniLM, and pairs the answer model's cross-encoder, read at once? Each
size reads the same texts, interleaved in one process, and prints its time and its ratio to the
first size; every size must give the same output as the first.

- ``--model cross``: shortlists of a refused turn (one Doc2Dial dev question with 32 sentences of
  its corpus); ``agent.answer_model.PAIRS_PER_BATCH`` is the size chosen from it.
- ``--model units``: MiniLM on 90 sentences, as a turn embeds the units of its passages.
- ``--model chunks``: MiniLM on chunks of ~180 words, as ingest embeds them.
  ``EmbeddingSettings.batch_size`` is the size chosen from these two.

    python benchmarks/bench_batches.py --model units                  # this CPU
    ONEDNN_MAX_CPU_ISA=AVX2 python benchmarks/bench_batches.py        # as an AVX2-only CPU
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

import numpy as np


def main() -> int:
    from agent.corpora import default_eval_dir

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["cross", "units", "chunks"], default="cross")
    parser.add_argument("--eval-dir", type=Path, default=None, help="the folder holding answers/")
    parser.add_argument("--shortlists", type=int, default=40, help="groups of texts read")
    parser.add_argument("--sizes", default="32,16,8,4,1")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    eval_dir = args.eval_dir or default_eval_dir()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.model == "cross":
        return cross(args, eval_dir, sizes)
    return minilm(args, eval_dir, sizes)


def minilm(args: argparse.Namespace, eval_dir: Path, sizes: list[int]) -> int:
    from ingest.minilm import MiniLMEmbedder

    documents = sorted((eval_dir / "answers" / "doc2dial" / "corpus").glob("*.md"))[:80]
    texts = [d.read_text(encoding="utf-8") for d in documents]
    rng = random.Random(2)
    if args.model == "units":
        sentences = [s for t in texts for s in re.split(r"(?<=[.!?])\s+", t) if 20 < len(s) < 600]
        groups = [rng.sample(sentences, 90) for _ in range(args.shortlists)]
    else:
        words = " ".join(texts).split()
        starts = [rng.randrange(len(words) - 200) for _ in range(args.shortlists * 16)]
        chunks = [" ".join(words[k : k + 180]) for k in starts]
        groups = [chunks[i : i + 64] for i in range(0, len(chunks), 64)]
    cache = Path(tempfile.mkdtemp())
    models = {size: MiniLMEmbedder(threads=2, batch_size=size, cache_dir=cache) for size in sizes}
    kind: Literal["query", "document"] = "query" if args.model == "units" else "document"
    for model in models.values():  # loaded, and every shape met once, before timing
        model.embed(groups[0], kind=kind)
    seconds = dict.fromkeys(sizes, 0.0)
    for _ in range(args.rounds):
        for group in groups:
            first = None
            for size, model in models.items():
                t0 = time.perf_counter()
                got = model.embed(group, kind=kind)
                seconds[size] += time.perf_counter() - t0
                first = got if first is None else first
                assert np.allclose(got, first, atol=0.02), (size, np.abs(got - first).max())
    n = sum(len(g) for g in groups) * args.rounds
    for size in sizes:
        print(
            f"{size:3d} texts a batch: {n / seconds[size]:6.1f} texts/s, "
            f"{seconds[size] / seconds[sizes[0]]:.2f}x the time of {sizes[0]}"
        )
    return 0


def cross(args: argparse.Namespace, eval_dir: Path, sizes: list[int]) -> int:
    from agent.answer_model import build_answer_model
    from agent.corpora import load_corpus, sample

    questions = sample(
        [q for q in load_corpus(eval_dir, "doc2dial") if q.split == "dev"], args.shortlists
    )
    documents = sorted((eval_dir / "answers" / "doc2dial" / "corpus").glob("*.md"))[:40]
    sentences = [
        s
        for d in documents
        for s in re.split(r"(?<=[.!?])\s+", d.read_text(encoding="utf-8"))
        if 20 < len(s) < 400
    ]
    rng = random.Random(1)
    shortlists = [(q.message, rng.sample(sentences, 32)) for q in questions]
    encoder = build_answer_model(2, Path(tempfile.mkdtemp())).cross
    assert encoder is not None
    encoder.load()

    def read(question: str, texts: list[str], size: int) -> np.ndarray:
        assert encoder is not None
        return encoder.logits(question, texts, per_batch=size)

    seconds = dict.fromkeys(sizes, 0.0)
    for question, texts in shortlists:  # every shape met once before timing
        read(question, texts, 32)
    for _ in range(args.rounds):
        for question, texts in shortlists:
            whole = read(question, texts, 32)
            for size in sizes:
                t0 = time.perf_counter()
                got = read(question, texts, size)
                seconds[size] += time.perf_counter() - t0
                assert np.allclose(got, whole, atol=0.05), (size, np.abs(got - whole).max())
    n = len(shortlists) * args.rounds
    for size in sizes:
        print(
            f"{size:3d} pairs a batch: {seconds[size] / n * 1000:5.0f} ms a shortlist, "
            f"{seconds[size] / seconds[sizes[0]]:.2f}x of {sizes[0]}"
        )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
