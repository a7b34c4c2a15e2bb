"""Sizing figures for docs/operations.md, measured with the real embedders on this machine.

    python scripts/measure_sizing.py [--copies 3] [--threads 1 2]

Ingests ``--copies`` copies of examples/handbook (each under its own folder name, so every copy
is new documents) into a fresh Qdrant Edge folder once per thread count, and prints:
- ingest throughput (parse + chunk + both embedders + BM25 + index write), chunks/s of wall time
  and chunks per CPU-second (= per fully used core; the figure that survives a busy machine);
- each embedder alone on the same chunk texts, the same two ways;
- bytes per chunk: dense vectors, sparse (BM25) vector, JSON payload;
- chunks per GB of Qdrant RAM, by Qdrant's rule of thumb (vectors x 1.5 for the HNSW graph and
  overhead; payload on disk) and with the payload in RAM too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bot.app import build_deps  # noqa: E402
from bot.settings import Settings  # noqa: E402
from ingest.settings import EmbeddingSettings  # noqa: E402

HANDBOOK = ROOT / "examples" / "handbook"


def corpus(tmp: Path, copies: int) -> list[Path]:
    folders = []
    for i in range(copies):
        folder = tmp / f"handbook{i}"
        shutil.copytree(HANDBOOK, folder)
        folders.append(folder)
    return folders


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        folders = corpus(tmp / "docs", args.copies)
        for threads in args.threads:
            settings = Settings(
                data_dir=tmp / f"run{threads}", embedding=EmbeddingSettings(threads=threads)
            )
            deps = build_deps(settings)
            for e in deps.embedders:  # load the weights before the clock starts
                e.embed(["warm up"])
            chunks = seconds = 0.0
            cpu0 = time.process_time()
            for folder in folders:
                report = deps.ingester.ingest(folder)
                assert not report.failed, report.failed
                chunks += report.chunks
                seconds += report.seconds
            cpu = time.process_time() - cpu0
            print(
                f"\nthreads={threads}: ingest {int(chunks)} chunks in {seconds:.1f}s wall = "
                f"{chunks / seconds:.1f} chunks/s; {cpu:.1f} CPU-s = {chunks / cpu:.1f} chunks per CPU-second"
            )
            texts = deps.index.texts(100_000)
            for e in deps.embedders:
                t0, c0 = time.perf_counter(), time.process_time()
                e.embed(texts, kind="document")
                dt, dc = time.perf_counter() - t0, time.process_time() - c0
                print(
                    f"  {e.name:7s} alone: {len(texts) / dt:.1f} chunks/s wall, "
                    f"{len(texts) / dc:.1f} chunks per CPU-second"
                )
            if threads == args.threads[0]:
                sizes(deps, texts)
            deps.close()
    return 0


def sizes(deps, texts: list[str]) -> None:
    """Bytes per chunk as Qdrant stores them: float32 dense vectors, (u32 index, f32 value) pairs, JSON payload."""
    payloads = (
        [p for p in deps.index._scroll(None, True) if p.get("text")]
        if hasattr(deps.index, "_scroll")
        else []
    )
    dense = sum(e.dim * 4 for e in deps.embedders)
    from ingest.languages import detect_lang

    nnz = [len(deps.sparse.encode_document(t, detect_lang(t)).indices) for t in texts]
    sparse = statistics.mean(nnz) * 8
    payload = statistics.mean(len(json.dumps(p, ensure_ascii=False).encode()) for p in payloads)
    text = statistics.mean(len(t.encode()) for t in texts)
    print(
        f"\nper chunk: dense {dense} B ({' + '.join(f'{e.name} {e.dim}d' for e in deps.embedders)}), "
        f"sparse {sparse:.0f} B ({statistics.mean(nnz):.0f} terms), payload {payload:.0f} B (text {text:.0f} B)"
    )
    # Sentence multivectors live on disk (read only for query candidates): disk, not RAM.
    from ingest.sentences import sentences

    per_chunk = statistics.mean(max(1, len(sentences(t.split("\n\n", 1)[-1]))) for t in texts)
    with_sentences = [
        e for e in deps.embedders if e.name in deps.settings.embedding.sentence_vectors
    ]
    on_disk = sum(e.dim * 4 for e in with_sentences) * per_chunk
    print(f"sentence vectors (on disk): {on_disk:.0f} B ({per_chunk:.1f} sentences a chunk)")
    ram_vectors = (dense + sparse) * 1.5
    gb = 1024**3
    print(
        f"Qdrant RAM per chunk, payload on disk: {ram_vectors:.0f} B -> {gb / ram_vectors:,.0f} chunks per GB"
    )
    print(
        f"Qdrant RAM per chunk, payload in RAM:  {ram_vectors + payload:.0f} B -> {gb / (ram_vectors + payload):,.0f} chunks per GB"
    )
    print(
        f"disk per chunk (vectors + payload, before WAL/snapshots): {dense + sparse + on_disk + payload:.0f} B"
    )


if __name__ == "__main__":
    raise SystemExit(main())
