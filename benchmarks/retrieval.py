"""Benchmarks: the product's own ingest and search, measured against a BM25 run in the same process.

``retrieval()`` indexes a public data set (``../shared/eval``: BEIR SciFact, XQuAD) through
``Ingester.add_documents`` into a fresh folder, asks every query through ``Retriever.search`` and
prints nDCG@10, R@1/5/100, MRR@10 and p50/p95 ms per query beside an in-process BM25 (k1=0.9,
b=0.4, the same tokenizer) and the ratio between them. Documents split into several chunks count
once, at their best chunk. ``ingest()`` measures throughput and query latency on a synthetic
corpus scaled up to 20k and 100k chunks.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from agent.retrieval import Retriever
from agent.settings import CohereSettings, RetrievalSettings
from ingest.backends import build_embedders, open_index
from ingest.chunk import chunk_document
from ingest.documents import Document, Section
from ingest.errors import ConfigError
from ingest.index import PointData, Sparse
from ingest.languages import detect_lang, tokenize
from ingest.pipeline import Ingester, IngestReport, point_id
from ingest.settings import EmbeddingSettings, IngestSettings, QdrantSettings
from ingest.sparse import BM25Encoder

DATASETS = ["scifact", "xquad-en", "xquad-zh", "xquad-ru", "xquad-zh-en", "xquad-ru-en"]
METRICS = ["ndcg@10", "r@1", "r@5", "r@100", "mrr@10"]
console = Console(width=max(Console().width, 110))


def default_eval_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "shared" / "eval"


class Steps:
    """Progress of a long run: live bars on a terminal; in a log, a line as each step starts and
    the finished bars (with their times) at the end."""

    def __init__(self) -> None:
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        )

    def __enter__(self) -> Steps:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(None, None, None)

    def start(self, what: str, total: int) -> TaskID:
        if not console.is_terminal:
            console.print(f"{what} …", highlight=False)
        return self.bar.add_task(what, total=total)

    def advance(self, task: TaskID, n: int = 1) -> None:
        self.bar.advance(task, n)


# -- data ---------------------------------------------------------------------------------------
@dataclass
class Bench:
    name: str
    docs: list[dict]  # {"_id", "title", "text"}
    queries: list[tuple[str, str]]  # (query id, text)
    qrels: dict[str, dict[str, int]]  # query id -> {doc id: grade}


def data_files(eval_dir: Path, dataset: str, split: str = "test") -> tuple[Path, Path, Path]:
    """The (corpus, queries, qrels) files a data set is read from, in BEIR's layout."""
    if dataset == "scifact":
        root = eval_dir / "scifact"
        return root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / f"{split}.tsv"
    if dataset.startswith("xquad-") and dataset.count("-") in (1, 2):
        q_lang, _, d_lang = dataset.removeprefix("xquad-").partition("-")
        root = eval_dir / "xquad"
        return (
            root / (d_lang or q_lang) / "corpus.jsonl",
            root / q_lang / "queries.jsonl",
            root / q_lang / "qrels_test.tsv",
        )
    raise ConfigError(f"unknown dataset {dataset!r}; one of {', '.join(DATASETS)}")


def require_data(eval_dir: Path, dataset: str, split: str = "test") -> None:
    """Stop with where the data set goes when any of its files is missing."""
    missing = [p for p in data_files(eval_dir, dataset, split) if not p.is_file()]
    if not missing:
        return
    if dataset == "scifact":
        what = (
            f"unzip BEIR SciFact ({SCIFACT_URL}) into {eval_dir}, giving "
            f"scifact/corpus.jsonl, scifact/queries.jsonl and scifact/qrels/{split}.tsv"
        )
    else:
        what = (
            f"put XQuAD in BEIR form under {eval_dir / 'xquad'}: en/, zh/ and ru/, each with "
            "corpus.jsonl, queries.jsonl and qrels_test.tsv"
        )
    raise ConfigError(
        f"no evaluation data for {dataset}: {missing[0]} is missing. To measure, {what}; "
        "or pass --eval-dir DIR (the default is ../shared/eval beside the checkout)"
    )


SCIFACT_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/scifact.zip"


def load(eval_dir: Path, dataset: str, split: str = "test") -> Bench:
    """SciFact (``split`` test or train) or XQuAD ``xquad-<question lang>[-<paragraph lang>]``.

    XQuAD has one split; ``tune`` is its first half of the questions and ``holdout`` the second."""
    corpus, queries, qrels_file = data_files(eval_dir, dataset, split)
    qrels = _qrels(qrels_file)
    asked = [(r["_id"], r["text"]) for r in _jsonl(queries) if r["_id"] in qrels]
    if dataset != "scifact" and split in ("tune", "holdout"):
        half = len(asked) // 2
        asked = asked[:half] if split == "tune" else asked[half:]
    return Bench(
        dataset if split == "test" else f"{dataset}/{split}", list(_jsonl(corpus)), asked, qrels
    )


def subset(bench: Bench, queries: int, distractors: int, seed: int = 0) -> Bench:
    """The first ``queries`` queries over every document they need plus ``distractors`` others."""
    asked = bench.queries[:queries]
    needed = {d for qid, _ in asked for d in bench.qrels[qid]}
    others = [d for d in bench.docs if d["_id"] not in needed]
    keep = needed | {
        d["_id"] for d in random.Random(seed).sample(others, min(distractors, len(others)))
    }
    return Bench(bench.name, [d for d in bench.docs if d["_id"] in keep], asked, bench.qrels)


def documents(bench: Bench) -> list[Document]:
    return [
        Document(
            doc_id=d["_id"],
            title=d.get("title", ""),
            source=d["_id"],
            sections=[Section([], d["text"])],
            acl=["*"],
            lang=detect_lang(d["text"]),
            content_hash=hashlib.sha256(d["text"].encode()).hexdigest(),
        )
        for d in bench.docs
    ]


def _jsonl(path: Path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc, grade = line.split("\t")
        out[qid][doc] = int(grade)
    return dict(out)


# -- metrics ------------------------------------------------------------------------------------
def score(ranked: Sequence[str], relevant: dict[str, int]) -> dict[str, float]:
    """nDCG@10, recall at 1/5/100 and MRR@10 of one ranked list of document ids."""
    gains = sorted((g for g in relevant.values() if g > 0), reverse=True)
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:10]))
    first = next((i for i, d in enumerate(ranked[:10]) if relevant.get(d, 0) > 0), None)

    def recall(k: int) -> float:
        return sum(relevant.get(d, 0) > 0 for d in ranked[:k]) / len(gains)

    return {
        "ndcg@10": dcg / ideal,
        "r@1": recall(1),
        "r@5": recall(5),
        "r@100": recall(100),
        "mrr@10": 0.0 if first is None else 1 / (first + 1),
    }


@dataclass
class Run:
    """One system over one benchmark: mean metrics, per-query latency, ingest speed."""

    system: str
    metrics: dict[str, float]
    ms: list[float]
    chunks_per_s: float | None = None
    chunks: int = 0
    per_query: list[dict[str, float]] = field(default_factory=list, repr=False)

    @property
    def p50(self) -> float:
        return statistics.median(self.ms)

    @property
    def p95(self) -> float:
        return float(np.percentile(self.ms, 95))


def evaluate(
    system: str,
    bench: Bench,
    search: Callable[..., list[str]],
    repeats: int = 3,
    steps: Steps | None = None,
) -> Run:
    """Run every query through ``search(text, top_k)`` (ranked doc ids): the metrics from the top
    100, the latency from the top 10 (what the answer loop asks for), timed over ``repeats``
    passes keeping the pass with the lowest median: on a shared machine the others time the
    neighbours too."""
    n = len(bench.queries)
    task = (
        steps.start(f"{system}: {n} queries, scored once and timed {repeats}×", n * (1 + repeats))
        if steps
        else None
    )

    def done() -> None:
        if steps and task is not None:
            steps.advance(task)

    search(bench.queries[0][1], 10)  # warm up: lazy model loads are not query time
    rows = []
    for qid, text in bench.queries:
        rows.append(score(search(text, 100), bench.qrels[qid]))
        done()
    passes = []
    for _ in range(repeats):
        ms = []
        for _, text in bench.queries:
            started = time.perf_counter()
            search(text, 10)
            ms.append((time.perf_counter() - started) * 1000)
            done()
        passes.append(ms)
    means = {m: statistics.fmean(r[m] for r in rows) for m in METRICS}
    return Run(system, means, min(passes, key=statistics.median, default=[]), per_query=rows)


# -- the two systems ----------------------------------------------------------------------------
class BM25Baseline:
    """Okapi BM25 over the same tokenizer, in numpy: the bar the product has to clear."""

    def __init__(self, ids: Sequence[str], texts: Sequence[str], k1: float = 0.9, b: float = 0.4):
        self.ids = list(ids)
        docs = [Counter(tokenize(t)) for t in texts]
        lengths = np.array([sum(c.values()) for c in docs], dtype=np.float64)
        norms = k1 * (1 - b + b * lengths / max(lengths.mean(), 1.0))
        postings: dict[str, tuple[list[int], list[float]]] = defaultdict(lambda: ([], []))
        for i, counts in enumerate(docs):
            for term, tf in counts.items():
                postings[term][0].append(i)
                postings[term][1].append(tf * (k1 + 1) / (tf + norms[i]))
        n = len(docs)
        self.postings = {
            t: (
                np.array(rows),
                np.array(w) * math.log(1 + (n - len(rows) + 0.5) / (len(rows) + 0.5)),
            )
            for t, (rows, w) in postings.items()
        }

    def search(self, query: str, top_k: int = 100) -> list[str]:
        scores = np.zeros(len(self.ids))
        for term in set(tokenize(query)):
            if term in self.postings:
                rows, weights = self.postings[term]
                scores[rows] += weights
        top = np.argsort(-scores, kind="stable")[:top_k]
        return [self.ids[i] for i in top if scores[i] > 0]


def bm25_run(bench: Bench, steps: Steps | None = None) -> Run:
    baseline = BM25Baseline([d["_id"] for d in bench.docs], [_full_text(d) for d in bench.docs])
    return evaluate("BM25", bench, baseline.search, steps=steps)


def _full_text(doc: dict) -> str:
    return f"{doc.get('title', '')}\n\n{doc['text']}"


class Settings(Protocol):
    """The sections a benchmark reads of the root settings (``footnote bench`` passes its own)."""

    admin_groups: list[str]
    qdrant: QdrantSettings
    embedding: EmbeddingSettings
    ingest: IngestSettings
    retrieval: RetrievalSettings
    cohere: CohereSettings | None


@dataclass
class Product:
    """Footnote as deployed: its ingester and retriever over a fresh index folder."""

    ingester: Ingester
    retriever: Retriever

    @classmethod
    def build(cls, settings: Settings, data_dir: Path) -> Product:
        embedders = build_embedders(settings.embedding, settings.cohere)
        index = open_index(
            settings.qdrant, data_dir, embedders, settings.embedding.sentence_vectors
        )
        sparse = BM25Encoder.from_settings(settings.retrieval)
        return cls(
            Ingester(index, embedders, sparse, settings.ingest, settings.admin_groups),
            Retriever(index, embedders, sparse, settings.retrieval),
        )

    def search(self, query: str, top_k: int = 100) -> list[str]:
        passages = self.retriever.search(query, ["*"], top_k=top_k)
        return list(
            dict.fromkeys(p.doc_id for p in passages)
        )  # a document counts at its best chunk

    def close(self) -> None:
        self.retriever.index.close()


@contextmanager
def ingested(
    settings: Settings, bench: Bench, steps: Steps | None = None
) -> Iterator[tuple[Product, IngestReport]]:
    """The product with ``bench``'s documents ingested into a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="footnote-bench-") as tmp:
        product = Product.build(settings, Path(tmp))
        try:
            report = product.ingester.add_documents(
                documents(bench), on_file=_counter(steps, "Footnote: indexing", len(bench.docs))
            )
            product.retriever.index.optimize()  # build the vector indexes, as after any bulk load
            yield product, report
        finally:
            product.close()


def _counter(steps: Steps | None, what: str, total: int) -> Callable[[str, str], None]:
    """An ``on_file`` callback that advances a bar of ``total`` documents."""
    if steps is None:
        return lambda doc_id, status: None
    task = steps.start(f"{what} {total} documents", total)
    return lambda doc_id, status: steps.advance(task)


def product_run(settings: Settings, bench: Bench, steps: Steps | None = None) -> Run:
    with ingested(settings, bench, steps) as (product, report):
        run = evaluate("Footnote", bench, product.search, steps=steps)
    run.chunks_per_s, run.chunks = report.chunks_per_s, report.chunks
    return run


# -- scale ----------------------------------------------------------------------------------------
def clones(
    seeds: Sequence[PointData], n: int, start: int, rng: np.random.Generator
) -> list[PointData]:
    """``n`` perturbed copies of embedded chunks: dense vectors jittered and re-normalised, BM25
    weights scaled, under fresh ids; a synthetic corpus for query latency at scale."""
    out = []
    for i in range(start, start + n):
        seed = seeds[i % len(seeds)]
        dense = {}
        for name, v in seed.dense.items():  # a vector, or a matrix of sentence vectors
            x = np.asarray(v)
            x = x + rng.normal(0, 0.3 / math.sqrt(x.shape[-1]), x.shape)
            dense[name] = (x / np.linalg.norm(x, axis=-1, keepdims=True)).tolist()
        values = (
            np.asarray(seed.sparse.values) * rng.uniform(0.7, 1.3, len(seed.sparse.values))
        ).tolist()
        doc_id = f"synthetic/{i}"
        payload = seed.payload | {
            "doc_id": doc_id,
            "chunk_id": f"{doc_id}#0",
            "seq": 0,
            "doc_chunks": 1,
        }
        out.append(
            PointData(
                id=point_id(doc_id, 0),
                dense=dense,
                sparse=Sparse(seed.sparse.indices, values),
                payload=payload,
            )
        )
    return out


def ingest(
    settings: Settings,
    eval_dir: Path | None = None,
    sizes: Sequence[int] = (20_000, 100_000),
    measured: int = 2_000,
    queries: int = 200,
    first: Callable[[], object] | None = None,
) -> int:
    """Ingest speed end to end on ``measured`` SciFact chunks, then query latency (top 10) as the
    index grows to each of ``sizes`` chunks with perturbed copies of them."""
    eval_dir = Path(eval_dir) if eval_dir else default_eval_dir()
    require_data(eval_dir, "scifact", "test")
    if first is not None:
        first()  # `footnote bench ingest`: the handbook's profile, once the data is known there
    bench = load(eval_dir, "scifact", "test")
    asked = [text for _, text in bench.queries[:queries]]
    t = Table(title="ingest and query speed at scale (2 cores)")
    for col in ["chunks", "what", "chunks/s", "chunks/CPU-s", "p50 ms", "p95 ms"]:
        t.add_column(col, justify="left" if col == "what" else "right")
    docs = documents(bench)[: max(1, measured * 2 // 3)]  # ~1.4 chunks per abstract
    with tempfile.TemporaryDirectory(prefix="footnote-bench-") as tmp, Steps() as steps:
        baseline = Product.build(settings, Path(tmp) / "two-pass")
        try:  # the way ingest embedded before: each chunk, then each of its sentences again
            baseline.ingester.one_pass = False
            two = baseline.ingester.add_documents(
                docs, on_file=_counter(steps, "indexing (two passes, baseline)", len(docs))
            )
        finally:
            baseline.close()
        product = Product.build(settings, Path(tmp) / "index")
        index = product.retriever.index
        try:
            report = product.ingester.add_documents(
                docs, on_file=_counter(steps, "indexing", len(docs))
            )
            for what, run in (
                ("ingest, two passes over each chunk (baseline)", two),
                ("ingest end to end (parse, chunk, embed once, upsert)", report),
            ):
                t.add_row(
                    str(run.chunks),
                    what,
                    f"{run.chunks_per_s:.1f}",
                    f"{run.chunks_per_cpu_s:.1f}",
                    "",
                    "",
                )
            ratio = report.chunks_per_cpu_s / two.chunks_per_cpu_s if two.chunks_per_cpu_s else 0
            t.add_row("", f"one pass vs two: {ratio:.2f}x chunks per CPU-second", "", "", "", "")
            seeds = product.ingester.embed_chunks(
                [
                    c
                    for d in docs[:200]
                    for c in chunk_document(
                        d,
                        max_tokens=settings.ingest.chunk_tokens,
                        overlap=settings.ingest.chunk_overlap,
                    )
                ]
            )
            rng, total = np.random.default_rng(0), index.count()
            for size in sizes:
                grow = steps.start(f"growing the index to {size} chunks", size - total)
                while total < size:
                    batch = clones(seeds, min(1000, size - total), total, rng)
                    index.upsert_document(batch[0].payload["doc_id"], batch, [])
                    total += len(batch)
                    steps.advance(grow, len(batch))
                for what in ("query, as ingested", "query, after optimize()"):
                    if what.endswith("optimize()"):
                        index.optimize()
                    timing = steps.start(f"{size} chunks, {what}: {len(asked)} queries", 1)
                    ms = _latencies(product, asked)
                    steps.advance(timing)
                    p50, p95 = statistics.median(ms), np.percentile(ms, 95)
                    t.add_row(str(index.count()), what, "", "", f"{p50:.1f}", f"{p95:.1f}")
        finally:
            product.close()
    console.print(t)
    return 0


def _latencies(product: Product, queries: Sequence[str]) -> list[float]:
    product.retriever.search(queries[0], ["*"])
    ms = []
    for q in queries:
        started = time.perf_counter()
        product.retriever.search(q, ["*"])
        ms.append((time.perf_counter() - started) * 1000)
    return ms


# -- commands -----------------------------------------------------------------------------------
def retrieval(
    settings: Settings,
    dataset: str,
    eval_dir: Path | None = None,
    split: str = "test",
    limit: int | None = None,
) -> int:
    eval_dir = Path(eval_dir) if eval_dir else default_eval_dir()
    require_data(eval_dir, dataset, split)
    bench = load(eval_dir, dataset, split)
    if limit:
        bench.queries = bench.queries[:limit]
    console.print(f"{bench.name}: {len(bench.queries)} queries over {len(bench.docs)} documents …")
    with Steps() as steps:
        baseline = bm25_run(bench, steps)
        product = product_run(settings, bench, steps)
    console.print(table(bench.name, product, baseline))
    return 0


def table(title: str, product: Run, baseline: Run) -> Table:
    t = Table(title=title)
    for col in [
        "",
        "nDCG@10",
        "R@1",
        "R@5",
        "R@100",
        "MRR@10",
        "p50 ms@10",
        "p95 ms@10",
        "chunks/s",
    ]:
        t.add_column(col, justify="right" if col else "left")
    for run in (product, baseline):
        speed = f"{run.chunks_per_s:.0f}" if run.chunks_per_s else ""
        t.add_row(
            run.system,
            *(f"{run.metrics[m]:.3f}" for m in METRICS),
            f"{run.p50:.1f}",
            f"{run.p95:.1f}",
            speed,
        )
    ratios = [
        f"{product.metrics[m] / baseline.metrics[m]:.3f}" if baseline.metrics[m] else "-"
        for m in METRICS
    ]
    t.add_row(
        "ratio",
        *ratios,
        f"{product.p50 / baseline.p50:.0f}x",
        f"{product.p95 / baseline.p95:.0f}x",
        "",
    )
    return t
