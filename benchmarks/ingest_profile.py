"""Where an ingest's time goes: the sample handbook ingested once, stage by stage, beside the
same encoders called directly on the same texts in the same run (``footnote bench ingest``).

The ingest reads (parses and chunks) files on a thread of its own while it embeds, and runs the
encoders at the same time, each on a thread of its own: those rows overlap the others, and
"encoders, all at once" is the wall time of both together, against both called directly one
after the other. The ratio of each encoder's stage to its direct call is the overhead around
the model (Python lists, batching, copies) and what the other encoder takes of the cores; what
is left after the encoders is parsing, chunking, BM25 and the index. For MiniLM the arithmetic
bound is printed too: multiply-adds per token over what one core multiplies per second (a
float32 matrix product the size of MiniLM's, measured here, now), so "the encoders are the
limit" can be checked against a number."""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from rich.table import Table

from bot.app import build_deps
from bot.chat.terminal import console
from bot.settings import Settings
from ingest.backends import build_embedders
from ingest.chunk import chunk_document
from ingest.documents import Chunk
from ingest.embed import Embedder, GroupedEmbedder
from ingest.errors import BadDocument
from ingest.index import SENTENCES
from ingest.sentences import sentences

HANDBOOK = Path(__file__).resolve().parent.parent / "examples" / "handbook"


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU seconds (this process, every thread) of ``fn()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def minilm_flops_per_token(tokens: float, layers: int = 6, hidden: int = 384) -> float:
    """Floating-point operations per token: the six layers' matrix products (Q, K, V, output:
    4·h², the feed-forward 2·h·4h; two operations per multiply-add) and attention over
    ``tokens`` positions (scores and weighted sum: 2·2·t·h)."""
    return layers * (2 * (4 * hidden * hidden + 2 * hidden * 4 * hidden) + 4 * tokens * hidden)


def core_gflops(repeats: int = 20) -> float:
    """float32 GFLOP/s of one core on MiniLM's feed-forward product (256 tokens × 384 → 1536)."""
    from threadpoolctl import threadpool_limits

    a = np.random.default_rng(0).standard_normal((256, 384), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((384, 1536), dtype=np.float32)
    with threadpool_limits(1):
        a @ b
        runs = []
        for _ in range(repeats):
            t = time.perf_counter()
            a @ b
            runs.append(time.perf_counter() - t)
    return 2 * 256 * 384 * 1536 / statistics.median(runs) / 1e9


def encode(
    e: Embedder, chunks: list[Chunk], texts: list[str], said: list[list[str]], keeps: bool
) -> None:
    """What the ingest asks of ``e``, asked directly: the chunks (and their sentences, where
    the index keeps them; in one pass where the embedder can)."""
    if keeps and isinstance(e, GroupedEmbedder):
        e.embed_grouped(
            [[c.breadcrumbs, *g] if g else [c.text] for c, g in zip(chunks, said, strict=True)]
        )
        return
    e.embed(texts)
    if keeps:
        e.embed([s for c, g in zip(chunks, said, strict=True) for s in (g or [c.text])])


def profile(settings: Settings, folder: Path = HANDBOOK) -> int:
    from ingest.openvino_models import cpu_features, machine

    cache = settings.data_dir / "cache"  # the compiled models any earlier run left there
    embedders = build_embedders(settings.embedding, settings.cohere, cache_dir=cache)
    for e in embedders:  # loaded before the clock starts: a cold start is bench_coldstart's
        e.embed(["warm up"])
    with tempfile.TemporaryDirectory(prefix="footnote-profile-") as tmp:
        deps = build_deps(settings.model_copy(update={"data_dir": Path(tmp)}))
        deps.__dict__["embedders"] = embedders
        try:
            ingester = deps.ingester
            ingester.stages = {}
            report = ingester.ingest(folder)
            stages = dict(ingester.stages)
            dims = dict(deps.index.dims)
            # the same chunks again, for the direct calls and the per-kind figures
            parsed: dict[str, float] = {}
            chunks_by_kind: Counter[str] = Counter()
            chunks: list[Chunk] = []
            root = folder.resolve()
            for path in ingester.scan(root):
                kind = path.suffix.lower().lstrip(".")
                t = time.perf_counter()
                try:
                    doc = ingester.load(path, root, root.name + "/" + path.name, [])
                except BadDocument:
                    continue  # the ingest reported it
                parsed[kind] = parsed.get(kind, 0.0) + time.perf_counter() - t
                cut = chunk_document(
                    doc,
                    max_tokens=settings.ingest.chunk_tokens,
                    overlap=settings.ingest.chunk_overlap,
                )
                chunks_by_kind[kind] += len(cut)
                chunks += cut
        finally:
            deps.close()
    texts = [c.text for c in chunks]
    said = [sentences(c.body) for c in chunks]
    direct: dict[str, tuple[float, float]] = {}
    for e in embedders:
        direct[e.name] = timed(partial(encode, e, chunks, texts, said, e.name + SENTENCES in dims))

    n = report.chunks
    table = Table(title=f"footnote ingest {folder.name}: {n} chunks, where the time goes")
    for col in ("stage", "seconds", "share", "direct call", "stage / direct"):
        table.add_column(col, justify="left" if col == "stage" else "right")
    encoders_direct = sum(w for w, _ in direct.values())
    for stage, seconds in sorted(stages.items(), key=lambda kv: -kv[1]):
        name = stage.removeprefix("encoder ")
        call = direct.get(name) if stage.startswith("encoder ") else None
        if stage.startswith("encoders"):  # both at once, against both called one after the other
            call = (encoders_direct, 0.0)
        table.add_row(
            f"  {stage} (at the same time)"
            if stage.startswith("encoder ")
            else f"{stage} (read ahead, beside the encoders)"
            if stage in ("parse", "chunk")
            else stage,
            f"{seconds:.2f}",
            f"{seconds / report.seconds:.0%}",
            f"{call[0]:.2f}" if call else "",
            f"{seconds / call[0]:.2f}x" if call and call[0] else "",
        )
    table.add_row(
        "whole ingest",
        f"{report.seconds:.2f}",
        "100%",
        f"{encoders_direct:.2f}",
        f"{report.seconds / encoders_direct:.2f}x" if encoders_direct else "",
    )
    console.print(table)
    here = machine()
    console.print(
        f"{here.cpu} ({', '.join(cpu_features()) or 'no AVX2'}; MiniLM in "
        f"{'bf16' if here.bf16 else 'f32'}), {settings.embedding.threads} threads, load "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    cores = os.cpu_count() or 1
    console.print(
        f"{n / report.seconds:.1f} chunks/s wall, {report.chunks_per_cpu_s:.1f} chunks per "
        f"CPU-second ({report.cpu_seconds:.1f} CPU-s): at most "
        f"{report.chunks_per_cpu_s * cores:.0f} chunks/s on this machine's {cores} cores with "
        f"nothing else running; the encoders called directly: {n / encoders_direct:.1f} chunks/s"
    )
    kinds = ", ".join(
        f"{k}: {chunks_by_kind[k]} chunks, parsed in {parsed[k]:.2f} s"
        for k in sorted(chunks_by_kind)
    )
    console.print(f"by kind: {kinds}")
    minilm = next((e for e in embedders if e.name == "minilm"), None)
    if minilm is not None and "minilm" in direct:
        from ingest.minilm import wordpiece

        lengths = [len(x.ids) for x in wordpiece(256).encode_batch(texts)]
        tokens, mean = sum(lengths), statistics.mean(lengths)
        threads = settings.embedding.threads
        # per CPU-second, not per wall second over the threads: on a shared machine the threads
        # may not have had a core each
        per_core = tokens / direct["minilm"][1]
        gflops = core_gflops()
        bound = gflops * 1e9 / minilm_flops_per_token(mean)
        console.print(
            f"MiniLM: {tokens} tokens ({mean:.0f} a chunk) in {direct['minilm'][0]:.2f} s on "
            f"{threads} threads, {direct['minilm'][1]:.2f} CPU-s = {per_core:.0f} tokens per "
            "CPU-second; one core multiplies "
            f"{gflops:.0f} GFLOP/s here now, {minilm_flops_per_token(mean) / 1e6:.0f} MFLOP a "
            f"token: at most {bound:.0f} tokens/s per core ({per_core / bound:.0%} of it), "
            f"{bound * threads / mean:.0f} chunks/s on {threads} cores for MiniLM alone"
        )
    return 0
