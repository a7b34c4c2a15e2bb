"""The index seam: store chunks with their vectors, run one hybrid query under an ACL filter.

Two implementations pass the same contract tests (tests/ingest/test_index_contract.py):
``EdgeIndex`` (Qdrant Edge in a folder, the default) and ``ServerIndex`` (a Qdrant server or
cluster through qdrant-client). ``ingest.backends.open_index`` picks one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ingest.documents import ChunkPayload

if TYPE_CHECKING:
    from ingest.embed import Embedder

TOMBSTONE_ACL = "__deleted__"
# A vector named "<model>_sentences" is a multivector: the model's vector of each sentence of the
# chunk, compared by max-sim (for one query vector: the cosine of the best sentence). It only
# rescores the candidates the other signals found; it never fetches any, so it needs no HNSW.
SENTENCES = "_sentences"


def is_sentences(name: str) -> bool:
    return name.endswith(SENTENCES)


def vector_dims(
    embedders: Sequence[Embedder], sentence_models: Sequence[str] = ()
) -> dict[str, int]:
    """Every named vector an index holds: one per embedder, plus the sentence multivectors."""
    dims = {e.name: e.dim for e in embedders}
    return dims | {f"{e.name}{SENTENCES}": e.dim for e in embedders if e.name in sentence_models}


@dataclass(frozen=True)
class Sparse:
    """A sparse vector as the index stores it (``ingest.sparse.BM25Encoder`` writes them)."""

    indices: list[int]
    values: list[float]


@dataclass
class PointData:
    id: int
    dense: dict[str, list[float] | list[list[float]]]  # name → vector (or sentence multivector)
    sparse: Sparse
    payload: ChunkPayload


@dataclass
class Hit:
    id: int
    score: float
    payload: ChunkPayload
    vectors: dict[str, list[float]] = field(default_factory=dict)  # only those asked for


@dataclass
class HybridQuery:
    """One request: a prefetch per vector (dense by name, plus sparse), fused by weighted RRF."""

    groups: Sequence[str]  # the asker's groups; "*" documents are always allowed
    # In a channel, every member must be able to read what is shown: one group list per member.
    readers: Sequence[Sequence[str]] = ()
    # name → query vector; a sentences multivector takes a one-row matrix and only rescores
    dense: dict[str, list[float] | list[list[float]]] = field(default_factory=dict)
    sparse: Sparse | None = None
    weights: dict[str, float] = field(default_factory=dict)  # vector name (or "sparse") → weight
    limit: int = 10
    prefetch: int = 100
    # "rrf": weighted reciprocal rank fusion of the ranks. "sum": every point any signal found
    # in its top ``prefetch``, scored by Σ weight × each signal's own score (cosine; BM25 with IDF,
    # 0 without a shared term).
    fusion: Literal["rrf", "sum"] = "rrf"
    rrf_k: int = 60
    doc_ids: Sequence[str] | None = None  # metadata filters
    updated_after: str | None = None
    with_vectors: Sequence[str] = ()  # dense vectors to return, for grading by similarity


@dataclass
class DocState:
    """What the index knows of one document, enough to decide skip / replace / delete."""

    doc_id: str
    content_hash: str
    chunks: int
    # The hash of what was embedded (text, title, source, the reader): equal while only who may
    # read the document changed. "" for points written before it was recorded.
    body_hash: str = ""


class Index(Protocol):
    dims: dict[str, int]  # the named vectors it holds (``vector_dims``)

    def upsert_document(
        self, doc_id: str, points: Sequence[PointData], stale_ids: Sequence[int]
    ) -> None:
        """Write a document's points and tombstone ``stale_ids`` in ONE update, so a crash leaves
        the document fully old or fully new."""
        ...

    def delete_document(self, doc_id: str) -> None: ...

    def set_readers(self, point_ids: Sequence[int], acl: Sequence[str]) -> None:
        """Give every one of ``point_ids`` (a document's points) the access list ``acl`` in ONE
        update: a crash leaves the document readable under its old rule or its new one, never
        half of each. An engine applies one logged update whole, or not at all, on restart."""
        ...

    def set_payloads(self, updates: Sequence[tuple[int, dict[str, Any]]]) -> None:
        """Merge fields into existing points' payloads, in the order given (vectors untouched),
        possibly one update per point: never who may read (``set_readers`` does that)."""
        ...

    def query(self, q: HybridQuery) -> list[Hit]: ...

    def documents(self) -> dict[str, DocState]: ...

    def chunks(self, doc_id: str, groups: Sequence[str]) -> list[ChunkPayload]:
        """Every live chunk payload of a document the groups may read, in order."""
        ...

    def purge_tombstones(self) -> None: ...

    def optimize(self) -> None:
        """Bring search structures up to date after a bulk write (a no-op where the server does it)."""
        ...

    def texts(self, limit: int) -> list[str]:
        """Up to ``limit`` live chunk texts, for corpus statistics (term rarity)."""
        ...

    def count(self) -> int: ...

    def version(self) -> str | None:
        """A token that changes with every write to the points (an upsert, a delete, a payload),
        read without touching them: what statistics derived from the texts are kept under.
        None where the engine cannot tell cheaply (a Qdrant server): they are read instead."""
        ...

    def metadata(self) -> dict[str, Any]:
        """What the index records about how it was built (BM25's parameters: ``ingest.sparse``)."""
        ...

    def set_metadata(self, values: dict[str, Any]) -> None:
        """Merge ``values`` into that record."""
        ...

    def close(self) -> None: ...


def allowed(groups: Sequence[str]) -> list[str]:
    """The ACL values a reader matches: their groups and the everybody marker."""
    return sorted({*groups, "*"} - {TOMBSTONE_ACL})


def reader_group_sets(q: HybridQuery) -> list[list[str]]:
    """One allowed-ACL list per distinct reader: a chunk must match every one of them."""
    return [list(g) for g in dict.fromkeys(tuple(allowed(g)) for g in [q.groups, *q.readers])]


def requested_vectors(vector: object, names: Sequence[str]) -> dict[str, list[float]]:
    """The dense vectors a query asked back for, out of what the engine returned for a point."""
    if not names or not isinstance(vector, dict):
        return {}
    return {n: list(vector[n]) for n in names if n in vector}
