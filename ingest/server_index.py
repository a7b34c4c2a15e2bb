"""The scale-out index: a Qdrant server or cluster through qdrant-client's Query API.

Hybrid search is one request (dense and sparse prefetches, each under the ACL filter, fused by
weighted RRF on the server). LlamaIndex's QdrantVectorStore was not used here: its hybrid mode
sends two requests and fuses in Python, and it cannot carry per-prefetch weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from qdrant_client import QdrantClient, models

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


class ServerIndex:
    def __init__(
        self,
        client: QdrantClient,
        collection: str,
        dims: dict[str, int],
        shard_number: int = 1,
        replication_factor: int = 1,
    ):
        self.client, self.collection, self.dims = client, collection, dims
        try:
            exists = client.collection_exists(collection)
        except Exception as exc:
            raise ConfigError(f"cannot reach Qdrant ({exc}); check FOOTNOTE_QDRANT__URL") from exc
        if not exists:
            client.create_collection(
                collection,
                vectors_config={name: _vector_params(name, d) for name, d in dims.items()},
                sparse_vectors_config={
                    "sparse": models.SparseVectorParams(modifier=models.Modifier.IDF)
                },
                shard_number=shard_number,
                replication_factor=replication_factor,
            )
            for key in ("acl", "doc_id"):
                client.create_payload_index(collection, key, models.PayloadSchemaType.KEYWORD)

    @classmethod
    def connect(
        cls, url: str, api_key: str | None, collection: str, dims: dict[str, int], **kw: Any
    ) -> ServerIndex:
        client = (
            QdrantClient(location=url, api_key=api_key)
            if url == ":memory:"
            else QdrantClient(url=url, api_key=api_key)
        )
        return cls(client, collection, dims, **kw)

    def upsert_document(
        self, doc_id: str, points: Sequence[PointData], stale_ids: Sequence[int]
    ) -> None:
        structs = [
            models.PointStruct(
                id=p.id,
                vector={
                    **p.dense,
                    "sparse": models.SparseVector(indices=p.sparse.indices, values=p.sparse.values),
                },
                payload=dict(p.payload),
            )
            for p in points
        ]
        structs += [
            models.PointStruct(
                id=i,
                vector={"sparse": models.SparseVector(indices=[], values=[])},
                payload={"doc_id": doc_id, "acl": [TOMBSTONE_ACL]},
            )
            for i in stale_ids
        ]
        self.client.upsert(self.collection, structs, wait=True)

    def delete_document(self, doc_id: str) -> None:
        self.client.delete(
            self.collection, models.FilterSelector(filter=_match("doc_id", doc_id)), wait=True
        )

    def set_readers(self, point_ids: Sequence[int], acl: Sequence[str]) -> None:
        if point_ids:
            self.client.set_payload(
                self.collection, payload={"acl": list(acl)}, points=list(point_ids), wait=True
            )

    def set_payloads(self, updates: Sequence[tuple[int, dict[str, Any]]]) -> None:
        if not updates:
            return
        operations = [
            models.SetPayloadOperation(
                set_payload=models.SetPayload(payload=dict(fields), points=[point])
            )
            for point, fields in updates
        ]
        self.client.batch_update_points(self.collection, operations, wait=True)

    def purge_tombstones(self) -> None:
        self.client.delete(
            self.collection, models.FilterSelector(filter=_match("acl", TOMBSTONE_ACL)), wait=True
        )

    def optimize(self) -> None:
        """The server optimises in the background."""

    def query(self, q: HybridQuery) -> list[Hit]:
        f = _filter(q)
        prefetch, names = [], []
        for name, vector in q.dense.items():
            if q.weights.get(name, 1.0) > 0 and not is_sentences(name):
                prefetch.append(
                    models.Prefetch(query=vector, using=name, filter=f, limit=q.prefetch)
                )
                names.append(name)
        if q.sparse is not None and q.sparse.indices and q.weights.get("sparse", 1.0) > 0:
            sv = models.SparseVector(indices=q.sparse.indices, values=q.sparse.values)
            prefetch.append(models.Prefetch(query=sv, using="sparse", filter=f, limit=q.prefetch))
            names.append("sparse")
        if not prefetch:
            return []
        weights = [q.weights.get(n, 1.0) for n in names]
        fusion: models.Query
        if q.fusion == "sum":
            # Each signal rescores the union of the candidates, so every score in the sum is exact.
            # Sentence multivectors only rescore: they add a term, never a candidate.
            union = q.prefetch * len(prefetch)
            rescorers = [(p.query, p.using) for p in prefetch]
            for name, vector in q.dense.items():
                if q.weights.get(name, 1.0) > 0 and is_sentences(name):
                    rescorers.append((vector, name))
                    names.append(name)
            prefetch = [
                models.Prefetch(query=query, using=using, prefetch=prefetch, limit=union)
                for query, using in rescorers
            ]
            weights = [q.weights.get(n, 1.0) for n in names]
            terms: list[models.Expression] = [
                models.MultExpression(mult=[w, f"$score[{i}]"]) for i, w in enumerate(weights)
            ]
            defaults = {f"$score[{i}]": 0.0 for i in range(len(weights))}
            fusion = models.FormulaQuery(formula=models.SumExpression(sum=terms), defaults=defaults)
        else:
            fusion = models.RrfQuery(rrf=models.Rrf(k=q.rrf_k, weights=weights))
        response = self.client.query_points(
            self.collection,
            prefetch=prefetch,
            query=fusion,
            limit=q.limit,
            with_payload=True,
            with_vectors=list(q.with_vectors) if q.with_vectors else False,
        )
        return [
            Hit(
                int(p.id),
                float(p.score),
                cast(ChunkPayload, dict(p.payload or {})),
                requested_vectors(p.vector, q.with_vectors),
            )
            for p in response.points
        ]

    def documents(self) -> dict[str, DocState]:
        f = models.Filter(must=[models.FieldCondition(key="seq", match=models.MatchValue(value=0))])
        return {
            p["doc_id"]: DocState(
                p["doc_id"], p["content_hash"], p["doc_chunks"], p.get("body_hash") or ""
            )
            for p in self._scroll(f, ["doc_id", "content_hash", "doc_chunks", "body_hash"])
        }

    def chunks(self, doc_id: str, groups: Sequence[str]) -> list[ChunkPayload]:
        f = models.Filter(
            must=[
                models.FieldCondition(key="doc_id", match=models.MatchValue(value=doc_id)),
                models.FieldCondition(key="acl", match=models.MatchAny(any=allowed(groups))),
            ]
        )
        payloads = cast(list[ChunkPayload], self._scroll(f, True))
        return sorted(payloads, key=lambda p: p["seq"])

    def texts(self, limit: int) -> list[str]:
        f = models.Filter(
            must_not=[
                models.FieldCondition(key="acl", match=models.MatchValue(value=TOMBSTONE_ACL))
            ]
        )
        return [p.get("text", "") for p in self._scroll(f, ["text"], limit)]

    def version(self) -> None:
        """A collection has no operation counter that covers every shard and replica."""
        return None

    def count(self) -> int:
        f = models.Filter(
            must_not=[
                models.FieldCondition(key="acl", match=models.MatchValue(value=TOMBSTONE_ACL))
            ]
        )
        return self.client.count(self.collection, count_filter=f, exact=True).count

    def metadata(self) -> dict[str, Any]:
        """The collection's own metadata (Qdrant 1.16+), shared by every replica that opens it."""
        return dict(self.client.get_collection(self.collection).config.metadata or {})

    def set_metadata(self, values: dict[str, Any]) -> None:
        self.client.update_collection(self.collection, metadata=self.metadata() | values)

    def close(self) -> None:
        self.client.close()

    def _scroll(
        self, f: models.Filter, with_payload: bool | list[str], limit: int | None = None
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        offset = None
        while limit is None or len(out) < limit:
            records, offset = self.client.scroll(
                self.collection,
                scroll_filter=f,
                limit=1000,
                offset=offset,
                with_payload=with_payload,
            )
            out += [dict(r.payload or {}) for r in records]
            if offset is None:
                break
        return out[:limit] if limit is not None else out


def _match(key: str, value: str) -> models.Filter:
    return models.Filter(
        must=[models.FieldCondition(key=key, match=models.MatchValue(value=value))]
    )


def _filter(q: HybridQuery) -> models.Filter:
    must: list[models.Condition] = [
        models.FieldCondition(key="acl", match=models.MatchAny(any=g)) for g in reader_group_sets(q)
    ]
    if q.doc_ids:
        must.append(models.FieldCondition(key="doc_id", match=models.MatchAny(any=list(q.doc_ids))))
    if q.updated_after:
        must.append(
            models.FieldCondition(
                key="updated",
                range=models.DatetimeRange(gte=datetime.fromisoformat(q.updated_after)),
            )
        )
    return models.Filter(must=must)


def _vector_params(name: str, dim: int) -> models.VectorParams:
    if not is_sentences(name):
        return models.VectorParams(size=dim, distance=models.Distance.COSINE)
    return models.VectorParams(
        size=dim,
        distance=models.Distance.COSINE,
        multivector_config=models.MultiVectorConfig(
            comparator=models.MultiVectorComparator.MAX_SIM
        ),
        hnsw_config=models.HnswConfigDiff(m=0),
        on_disk=True,  # ~5 vectors a chunk, read only for the few hundred candidates
    )
