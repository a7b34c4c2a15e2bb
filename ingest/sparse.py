"""BM25 as a sparse vector: the document side carries the saturated term frequency, the query side
a 1 per term, and Qdrant multiplies in the IDF (``Modifier.Idf``) from the live collection.

``k1``, ``b`` and ``avgdl`` shape only the stored document vectors, so they are fixed when a
document is ingested. The index records them (``INDEX_KEY`` in its metadata) at the first write;
a later ingest or search configured differently stops with an error that says to re-ingest,
instead of mixing vectors scored two ways or pretending a new value took effect."""

from __future__ import annotations

import zlib
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ingest.errors import ConfigError
from ingest.index import Index, Sparse
from ingest.languages import tokenize
from ingest.settings import BM25Settings

INDEX_KEY = "bm25"
_VARIABLES = {"k1": "BM25_K1", "b": "BM25_B", "avgdl": "BM25_AVGDL"}


def token_id(token: str) -> int:
    return zlib.crc32(token.encode("utf-8"))


@dataclass(frozen=True)
class BM25Encoder:
    k1: float = 0.9
    b: float = 0.4
    avgdl: float = 120.0

    @classmethod
    def from_settings(cls, s: BM25Settings) -> BM25Encoder:
        return cls(k1=s.bm25_k1, b=s.bm25_b, avgdl=s.bm25_avgdl)

    def params(self) -> dict[str, float]:
        """What the index records about the vectors this encoder writes."""
        return {"k1": self.k1, "b": self.b, "avgdl": self.avgdl}

    def encode_document(self, text: str, lang: str | None = None) -> Sparse:
        counts = Counter(token_id(t) for t in tokenize(text, lang))
        length = sum(counts.values())
        norm = self.k1 * (1 - self.b + self.b * length / self.avgdl)
        ids = sorted(counts)
        return Sparse(ids, [counts[i] * (self.k1 + 1) / (counts[i] + norm) for i in ids])

    def encode_query(self, text: str, lang: str | None = None) -> Sparse:
        ids = sorted({token_id(t) for t in tokenize(text, lang)})
        return Sparse(ids, [1.0] * len(ids))


def record_in(index: Index, encoder: BM25Encoder) -> None:
    """Before an ingest writes: record the encoder's parameters in an index that has none (or
    holds no chunks); refuse to add vectors scored with other values than those it holds."""
    recorded = index.metadata().get(INDEX_KEY)
    if recorded == encoder.params():
        return
    if recorded is not None and index.count():
        raise ConfigError(_mismatch(index, recorded, encoder, "ingesting into it"))
    index.set_metadata({INDEX_KEY: encoder.params()})


def check_against(index: Index, encoder: BM25Encoder) -> None:
    """Before a search: the configured parameters must be those the index was built with, or a
    changed setting would silently do nothing. An index from before the record is trusted."""
    recorded = index.metadata().get(INDEX_KEY)
    if recorded is not None and recorded != encoder.params() and index.count():
        raise ConfigError(_mismatch(index, recorded, encoder, "searching it"))


def _mismatch(index: Index, recorded: dict[str, Any], encoder: BM25Encoder, doing: str) -> str:
    now = encoder.params()
    changed = [k for k in _VARIABLES if recorded.get(k) != now[k]]
    was = ", ".join(f"FOOTNOTE_RETRIEVAL__{_VARIABLES[k]}={recorded.get(k)}" for k in changed)
    said = ", ".join(f"{now[k]}" for k in changed)
    where = getattr(index, "path", None) or f"collection {getattr(index, 'collection', '?')}"
    return (
        f"the index ({where}) was built with {was} and the settings now say {said}; before "
        f"{doing}, set it back, or re-ingest every folder into a fresh index (another "
        "FOOTNOTE_QDRANT__COLLECTION, or an emptied one) so all stored BM25 vectors use it"
    )
