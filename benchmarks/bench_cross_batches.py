"""How many pairs should the answer model's cross-encoder read at once? Each size reads the same
shortlists (one Doc2Dial dev question with 32 sentences of its corpus, as a refused turn's
shortlist is), interleaved in one process, and prints its time per shortlist and its ratio to
one batch of the whole shortlist; every size must give the same logits as one batch.

    python benchmarks/bench_cross_batches.py                      # this CPU
    ONEDNN_MAX_CPU_ISA=AVX2 python benchmarks/bench_cross_batches.py   # as an AVX2-only CPU

``agent.answer_model.PAIRS_PER_BATCH`` is the size chosen from it.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> int:
    from agent.answer_model import build_answer_model
    from agent.corpora import default_eval_dir, load_corpus, sample
    from ingest.minilm import length_batches

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=None, help="the folder holding answers/")
    parser.add_argument("--shortlists", type=int, default=40)
    parser.add_argument("--sizes", default="32,16,8,4,1")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    eval_dir = args.eval_dir or default_eval_dir()
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
    cross = build_answer_model(2, Path(tempfile.mkdtemp())).cross
    assert cross is not None
    cross.load()

    def read(question: str, texts: list[str], size: int) -> np.ndarray:
        encoded = cross._tokenizer.encode_batch([(question, t) for t in texts])
        out = np.empty(len(texts))
        for rows, ids, mask in length_batches([e.ids for e in encoded], size):
            types = np.zeros_like(ids)
            for r, i in enumerate(rows):
                types[r, : len(encoded[i].type_ids)] = encoded[i].type_ids
            cross._request.infer({"input_ids": ids, "token_types": types, "mask": mask})
            out[rows] = cross._request.get_output_tensor(0).data.reshape(len(rows))
        return out

    sizes = [int(s) for s in args.sizes.split(",")]
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
