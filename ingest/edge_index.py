"""The embedded index: a Qdrant Edge shard in a folder (no server, ~2 ms per hybrid query)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from qdrant_edge import (
    Distance,
    EdgeConfig,
    EdgeShard,
    EdgeSparseVectorParams,
    EdgeVectorParams,
    Expression,
    FieldCondition,
    Filter,
    Formula,
    Fusion,
    HasIdCondition,
    HnswIndexConfig,
    MatchAny,
    MatchValue,
    Memory,
    Modifier,
    MultiVectorComparator,
    MultiVectorConfig,
    PayloadSchemaType,
    Point,
    Prefetch,
    Query,
    QueryRequest,
    RangeDateTime,
    ScrollRequest,
    SparseVector,
    UpdateOperation,
)

from ingest.documents import ChunkPayload
from ingest.errors import ConfigError
from ingest.index import (
    TOMBSTONE_ACL,
    DocState,
    Hit,
    HybridQuery,
    PointData,
    allowed,
    is_sentences,
    reader_group_sets,
    requested_vectors,
)

if TYPE_CHECKING:
    from qdrant_edge import ConditionType  # a name of the stub only

_STATE_FIELDS = ["doc_id", "content_hash", "doc_chunks", "body_hash"]
# The index's own record (how it was built) sits next to the shard: Qdrant Edge has no collection
# metadata, and the folder is the index.
METADATA_FILE = "footnote-index.json"


class EdgeIndex:
    def __init__(self, path: Path, dims: dict[str, int]):
        self.path = Path(path)
        config = EdgeConfig(
            vectors={name: _vector_params(name, d) for name, d in dims.items()},
            sparse_vectors={"sparse": EdgeSparseVectorParams(modifier=Modifier.Idf)},
        )
        try:
            if (self.path / "edge_config.json").exists() or any(self.path.glob("segments*")):
                self.shard = EdgeShard.load(str(self.path), config)
            else:
                self.path.mkdir(parents=True, exist_ok=True)
                self.shard = EdgeShard.create(str(self.path), config)
                for key, kind in (
                    ("acl", PayloadSchemaType.Keyword),
                    ("doc_id", PayloadSchemaType.Keyword),
                ):
                    self.shard.update(UpdateOperation.create_field_index(key, kind))
        except Exception as exc:  # the engine's own errors are terse; name the fix
            if "WouldBlock" in str(exc):  # its write-ahead log is locked by another process
                raise ConfigError(
                    f"the index at {self.path} is in use by another process (Qdrant Edge allows "
                    "one per folder), most likely a running `footnote serve`: stop it and run "
                    "this again, or point FOOTNOTE_QDRANT__URL at a Qdrant server that both "
                    "processes share"
                ) from exc
            raise ConfigError(
                f"cannot open the index at {self.path}: {exc}. If the embedding models changed, "
                f"re-index into a fresh folder (set FOOTNOTE_DATA_DIR or delete {self.path})."
            ) from exc
        self.dims = dims

    # -- writes ---------------------------------------------------------------------------
    def upsert_document(
        self, doc_id: str, points: Sequence[PointData], stale_ids: Sequence[int]
    ) -> None:
        edge_points = [
            Point(
                p.id,
                {**p.dense, "sparse": SparseVector(p.sparse.indices, p.sparse.values)},
                dict(p.payload),
            )
            for p in points
        ]
        edge_points += [
            Point(i, {"sparse": SparseVector([], [])}, {"doc_id": doc_id, "acl": [TOMBSTONE_ACL]})
            for i in stale_ids
        ]
        self.shard.update(UpdateOperation.upsert_points(edge_points))

    def delete_document(self, doc_id: str) -> None:
        self.shard.update(UpdateOperation.delete_points_by_filter(_match("doc_id", doc_id)))

    def set_readers(self, point_ids: Sequence[int], acl: Sequence[str]) -> None:
        if point_ids:
            self.shard.update(UpdateOperation.set_payload(list(point_ids), {"acl": list(acl)}))

    def set_payloads(self, updates: Sequence[tuple[int, dict[str, Any]]]) -> None:
        for point, fields in updates:
            self.shard.update(UpdateOperation.set_payload([point], dict(fields)))

    def purge_tombstones(self) -> None:
        self.shard.update(UpdateOperation.delete_points_by_filter(_match("acl", TOMBSTONE_ACL)))

    def optimize(self) -> None:
        self.shard.optimize()

    # -- reads ----------------------------------------------------------------------------
    def query(self, q: HybridQuery) -> list[Hit]:
        f = _filter(q)
        prefetches, names = [], []
        for name, vector in q.dense.items():
            if q.weights.get(name, 1.0) > 0 and not is_sentences(name):
                prefetches.append(
                    Prefetch(q.prefetch, query=Query.Nearest(vector, using=name), filter=f)
                )
                names.append(name)
        if q.sparse is not None and q.sparse.indices and q.weights.get("sparse", 1.0) > 0:
            sv = SparseVector(q.sparse.indices, q.sparse.values)
            prefetches.append(
                Prefetch(q.prefetch, query=Query.Nearest(sv, using="sparse"), filter=f)
            )
            names.append("sparse")
        if not prefetches:
            return []
        weights = [q.weights.get(n, 1.0) for n in names]
        fusion: Formula | Fusion.Rrf
        if q.fusion == "sum":
            # Each signal rescores the union of the candidates, so every score in the sum is exact.
            # Sentence multivectors only rescore: they add a term, never a candidate. The union
            # is found once and passed by id: nested under every rescorer, each candidate search
            # would run once per rescorer (9 searches instead of 3 for an English question).
            found = self.shard.query(
                QueryRequest(
                    limit=q.prefetch * len(prefetches),
                    prefetches=prefetches,
                    query=Fusion.Rrf(k=q.rrf_k),  # type: ignore[arg-type]  # stub: Rrf is no Fusion
                    with_payload=False,
                    with_vector=False,
                )
            )
            if not found:
                return []
            rescorers = [p.query for p in prefetches]
            for name, vector in q.dense.items():
                if q.weights.get(name, 1.0) > 0 and is_sentences(name):
                    rescorers.append(Query.Nearest(vector, using=name))
                    names.append(name)
            # The ACL filter again: the ids came from filtered searches, and stay checked.
            union = _filter(q, HasIdCondition({p.id for p in found}))
            prefetches = [Prefetch(len(found), query=r, filter=union) for r in rescorers]
            weights = [q.weights.get(n, 1.0) for n in names]
            terms = [
                Expression.Mult([Expression.Constant(w), Expression.Variable(f"$score[{i}]")])
                for i, w in enumerate(weights)
            ]
            fusion = Formula(
                Expression.Sum(terms), defaults={f"$score[{i}]": 0.0 for i in range(len(weights))}
            )
        else:
            fusion = Fusion.Rrf(k=q.rrf_k, weights=weights)
        request = QueryRequest(
            limit=q.limit,
            with_payload=True,
            with_vector=list(q.with_vectors) if q.with_vectors else False,
            query=fusion,  # type: ignore[arg-type]  # the stub does not make Fusion.Rrf a Fusion
            prefetches=prefetches,
        )
        return [
            Hit(
                int(p.id),
                float(p.score),
                cast(ChunkPayload, dict(p.payload or {})),
                requested_vectors(p.vector, q.with_vectors),
            )
            for p in self.shard.query(request)
        ]

    def documents(self) -> dict[str, DocState]:
        states: dict[str, DocState] = {}
        f = Filter(must=[FieldCondition(key="seq", match=MatchValue(0))])
        for payload in self._scroll(f, _STATE_FIELDS):
            states[payload["doc_id"]] = DocState(
                payload["doc_id"],
                payload["content_hash"],
                payload["doc_chunks"],
                payload.get("body_hash") or "",
            )
        return states

    def chunks(self, doc_id: str, groups: Sequence[str]) -> list[ChunkPayload]:
        f = Filter(
            must=[
                _cond("doc_id", doc_id),
                FieldCondition(key="acl", match=MatchAny(allowed(groups))),
            ]
        )
        payloads = cast(list[ChunkPayload], self._scroll(f, True))
        return sorted(payloads, key=lambda p: p["seq"])

    def texts(self, limit: int) -> list[str]:
        f = Filter(must_not=[_cond("acl", TOMBSTONE_ACL)])
        return [p.get("text", "") for p in self._scroll(f, ["text"], limit)]

    def count(self) -> int:
        from qdrant_edge import CountRequest

        return self.shard.count(
            CountRequest(exact=True, filter=Filter(must_not=[_cond("acl", TOMBSTONE_ACL)]))
        )

    def version(self) -> str:
        """Every segment's id and the number of the last operation applied to it, as Qdrant
        Edge keeps them in each segment's ``segment.json`` (read from memory, well under a
        millisecond): any write moves one; a new segment (an optimize) gets a new id."""
        manifest = self.shard.snapshot_manifest()
        return ",".join(sorted(f"{sid}:{seg['segment_version']}" for sid, seg in manifest.items()))

    def metadata(self) -> dict[str, Any]:
        path = self.path / METADATA_FILE
        recorded: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
        return recorded

    def set_metadata(self, values: dict[str, Any]) -> None:
        path = self.path / METADATA_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.metadata() | values, sort_keys=True))
        os.replace(tmp, path)  # whole or not at all

    def close(self) -> None:
        self.shard.close()

    def _scroll(
        self, f: Filter, with_payload: bool | list[str], limit: int | None = None
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        offset = None
        while limit is None or len(out) < limit:
            records, offset = self.shard.scroll(
                ScrollRequest(offset=offset, limit=1000, filter=f, with_payload=with_payload)
            )
            out += [dict(r.payload or {}) for r in records]
            if offset is None:
                break
        return out[:limit] if limit is not None else out


def _vector_params(name: str, dim: int) -> EdgeVectorParams:
    if not is_sentences(name):
        return EdgeVectorParams(size=dim, distance=Distance.Cosine)
    return EdgeVectorParams(
        size=dim,
        distance=Distance.Cosine,
        multivector_config=MultiVectorConfig(MultiVectorComparator.MaxSim),
        hnsw_config=HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000),
        memory=Memory.Cold,  # ~5 vectors a chunk, read only for the few hundred candidates
    )


def _cond(key: str, value: str) -> FieldCondition:
    return FieldCondition(key=key, match=MatchValue(value))


def _match(key: str, value: str) -> Filter:
    return Filter(must=[_cond(key, value)])


def _filter(q: HybridQuery, *also: HasIdCondition) -> Filter:
    must: list[ConditionType] = [
        FieldCondition(key="acl", match=MatchAny(allowed(g))) for g in reader_group_sets(q)
    ]
    if q.doc_ids:
        must.append(FieldCondition(key="doc_id", match=MatchAny(list(q.doc_ids))))
    if q.updated_after:
        must.append(FieldCondition(key="updated", range=RangeDateTime(gte=q.updated_after)))
    return Filter(must=must + list(also))
