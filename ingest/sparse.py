"""BM25 as a sparse vector: the document side carries the saturated term frequency, the query side
a 1 per term, and Qdrant multiplies in the IDF (``Modifier.Idf``) from the live collection."""

from __future__ import annotations

import zlib
from collections import Counter
from dataclasses import dataclass

from ingest.languages import tokenize


def token_id(token: str) -> int:
    return zlib.crc32(token.encode("utf-8"))


@dataclass(frozen=True)
class Sparse:
    indices: list[int]
    values: list[float]


@dataclass(frozen=True)
class BM25Encoder:
    k1: float = 0.9
    b: float = 0.4
    avgdl: float = 120.0

    @classmethod
    def from_settings(cls, r) -> BM25Encoder:
        """From ``RetrievalSettings`` (its ``bm25_*`` fields)."""
        return cls(k1=r.bm25_k1, b=r.bm25_b, avgdl=r.bm25_avgdl)

    def encode_document(self, text: str, lang: str | None = None) -> Sparse:
        counts = Counter(token_id(t) for t in tokenize(text, lang))
        length = sum(counts.values())
        norm = self.k1 * (1 - self.b + self.b * length / self.avgdl)
        ids = sorted(counts)
        return Sparse(ids, [counts[i] * (self.k1 + 1) / (counts[i] + norm) for i in ids])

    def encode_query(self, text: str, lang: str | None = None) -> Sparse:
        ids = sorted({token_id(t) for t in tokenize(text, lang)})
        return Sparse(ids, [1.0] * len(ids))
