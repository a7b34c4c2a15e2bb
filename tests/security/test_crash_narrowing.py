"""A crash while a document's readers change never leaves it readable under two rules.

The document is narrowed from everyone (``*``) to ``hr`` — by a folder ingest, and by a sync's
write — and the run is killed at every index update in turn: the engine handle (Qdrant Edge's
shard, the server's client; qdrant-client local mode stands in for the server API) raises at the
update the test names, before it reaches the engine. After each kill the index is reopened from
its folder, as the next process would find it: each document must be wholly old or wholly new
(never some chunks under ``*`` beside chunks under ``hr``), and the next run must finish it.
No model: a seeded stand-in embedder makes the vectors.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from qdrant_client import QdrantClient

from ingest.edge_index import EdgeIndex
from ingest.index import Index, vector_dims
from ingest.pipeline import Ingester
from ingest.server_index import ServerIndex
from ingest.settings import IngestSettings
from ingest.sources.connector import SourceDocument
from ingest.sources.sync import IndexSink
from ingest.sparse import BM25Encoder

ADMINS = ["admins"]
SECTIONS = ["Pay bands", "Bonuses", "Relocation", "Overtime", "Reviews", "Appeals"]
POLICY = "# Salary policy\n\n" + "".join(
    f"## {name}\n\nThe {name.lower()} rule for 2026 says what each grade gets and when.\n\n"
    for name in SECTIONS
)


class SeededEmbedder:
    """Vectors from a hash of the text: stable, distinct, and no model to load."""

    name, dim = "seeded", 8

    def embed(self, texts, kind="document"):
        rows = [
            np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).normal(
                size=self.dim
            )
            for t in texts
        ]
        out = np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


EMBEDDERS = [SeededEmbedder()]
DIMS = vector_dims(EMBEDDERS)


class Kill(BaseException):
    """The process dies here: nothing after this update runs (not an Exception: nothing catches it)."""


class KillAt:
    """Counts the engine's write calls and raises ``Kill`` instead of making the ``at``-th."""

    def __init__(self, inner: Any, writes: set[str], at: int) -> None:
        self._inner, self._writes, self.at, self.made = inner, writes, at, 0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in self._writes:
            return attr

        def write(*args: Any, **kwargs: Any) -> Any:
            if self.made + 1 == self.at:
                raise Kill(f"killed before index update {self.at} ({name})")
            self.made += 1
            return attr(*args, **kwargs)

        return write


EDGE_WRITES = {"update"}
SERVER_WRITES = {
    "upsert",
    "upload_points",
    "set_payload",
    "overwrite_payload",
    "delete_payload",
    "clear_payload",
    "batch_update_points",
    "delete",
    "update_collection",
}


def open_backend(kind: str, folder: Path) -> Index:
    if kind == "edge":
        return EdgeIndex(folder, DIMS)
    return ServerIndex(QdrantClient(path=str(folder)), "footnote", DIMS)


def arm(index: Index, at: int) -> KillAt:
    if isinstance(index, EdgeIndex):
        index.shard = KillAt(index.shard, EDGE_WRITES, at)  # type: ignore[assignment]
        return index.shard  # type: ignore[return-value]
    assert isinstance(index, ServerIndex)
    index.client = KillAt(index.client, SERVER_WRITES, at)  # type: ignore[assignment]
    return index.client  # type: ignore[return-value]


def close(index: Index) -> None:
    handle = index.shard if isinstance(index, EdgeIndex) else index.client  # type: ignore[attr-defined]
    getattr(handle, "_inner", handle).close()


def ingester(index: Index) -> Ingester:
    return Ingester(
        index,
        EMBEDDERS,
        BM25Encoder(),
        IngestSettings(chunk_tokens=40, chunk_overlap=0),
        ADMINS,
    )


def page(acl: list[str]) -> SourceDocument:
    return SourceDocument(
        key="https://intranet.test/pay.html",
        url="https://intranet.test/pay.html",
        content=POLICY,
        media_type="text/markdown",
        version="v1",
        principals=tuple(acl),
    )


class Scenario:
    """Write the document open to everyone, then narrow it to hr (``narrow``) — by ingest or sync."""

    def __init__(self, how: str, root: Path) -> None:
        self.how, self.docs = how, root / "docs"
        self.docs.mkdir()
        (self.docs / "_access.yaml").write_text("acl: ['*']\n")
        (self.docs / "salary-policy.md").write_text(POLICY)
        (self.docs / "pay-appeals.md").write_text(POLICY.replace("Salary policy", "Pay appeals"))

    def write_open(self, index: Index) -> None:
        if self.how == "ingest":
            ingester(index).ingest(self.docs)
        else:
            IndexSink(ingester(index), ADMINS).write("intranet", [page(["*"])])

    def narrow(self, index: Index) -> None:
        if self.how == "ingest":
            (self.docs / "_access.yaml").write_text("acl: [hr]\n")
            ingester(index).ingest(self.docs)
        else:
            IndexSink(ingester(index), ADMINS).write("intranet", [page(["group:hr"])])


def every_kill_point(
    kind: str, how: str, tmp_path: Path, check: Callable[[Index, int], None]
) -> int:
    """Narrow the document once per kill point, from the same starting index; return how many
    kill points there were (the updates a whole run makes)."""
    pristine = tmp_path / "pristine"
    scenario = Scenario(how, tmp_path)
    index = open_backend(kind, pristine)
    scenario.write_open(index)
    index.close()
    access = (scenario.docs / "_access.yaml").read_text()
    at = 1
    while True:
        folder = tmp_path / f"run-{at}"
        shutil.copytree(pristine, folder)
        (scenario.docs / "_access.yaml").write_text(access)
        index = open_backend(kind, folder)
        killer = arm(index, at)
        try:
            scenario.narrow(index)
        except Kill:
            close(index)
            check(open_backend(kind, folder), at)  # as the next process finds it
            at += 1
            continue
        close(index)
        assert killer.made == at - 1
        return at - 1


@pytest.mark.parametrize("kind", ["edge", "server"])
@pytest.mark.parametrize("how", ["ingest", "sync"])
def test_a_kill_at_any_index_update_never_leaves_a_document_half_narrowed(kind, how, tmp_path):
    outcomes: list[str] = []

    def check(index: Index, at: int) -> None:
        try:
            for doc_id in index.documents():
                everyone = index.chunks(doc_id, ["engineering"])  # the new rule shuts them out
                hr = index.chunks(doc_id, ["hr"])
                total = index.documents()[doc_id].chunks
                assert len(hr) == total, f"kill at update {at}: {doc_id} lost chunks"
                assert len(everyone) in (0, total), (
                    f"kill at update {at}: {doc_id} is half-narrowed, {len(everyone)} of "
                    f"{total} chunks still readable by everyone"
                )
                outcomes.append("old" if everyone else "new")
            if how == "ingest":
                report = ingester(index).ingest(scenario_docs)
                assert not report.failed  # the next run finishes what the killed one began
            else:
                IndexSink(ingester(index), ADMINS).write("intranet", [page(["group:hr"])])
            for doc_id in index.documents():
                assert not index.chunks(doc_id, ["engineering"]), f"kill at {at}: not finished"
                assert len(index.chunks(doc_id, ["hr"])) == index.documents()[doc_id].chunks
        finally:
            index.close()

    scenario_docs = tmp_path / "docs"
    updates = every_kill_point(kind, how, tmp_path, check)
    assert updates >= 2  # there were kill points between updates
    assert {"old", "new"} <= set(outcomes)  # kills fell before and after the narrowing
