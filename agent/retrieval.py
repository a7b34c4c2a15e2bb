"""Hybrid search under the asker's groups: one index query, dense + BM25, fused in the index.

The default fusion adds up raw scores: weight × cosine for each dense model plus weight × BM25
divided by the number of distinct query terms (so long and short questions weigh BM25 alike).
The weights follow the query's language: MiniLM is strong in English and useless elsewhere, the
multilingual USE carries other languages and cross-lingual questions, where BM25 finds nothing
and the cosines decide. Weighted RRF remains as a setting (``fusion="rrf"``). An optional
``Reranker`` reorders a deeper candidate list (``rerank_depth``) before ``top_k`` are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np

from agent.passages import Passage, one_of_each
from agent.rerank import Reranker
from agent.settings import RetrievalSettings
from ingest.embed import Embedder
from ingest.index import SENTENCES, Hit, HybridQuery, Index, is_sentences
from ingest.languages import detect_lang
from ingest.sparse import BM25Encoder, check_against


@dataclass
class Filters:
    doc_ids: Sequence[str] | None = None
    updated_after: str | None = None


class Retriever:
    def __init__(
        self,
        index: Index,
        embedders: Sequence[Embedder],
        sparse: BM25Encoder,
        settings: RetrievalSettings,
        reranker: Reranker | None = None,
    ):
        self.index, self.embedders, self.sparse, self.settings = (
            index,
            list(embedders),
            sparse,
            settings,
        )
        self.reranker = reranker
        check_against(index, sparse)  # BM25's parameters are the index's, fixed at ingest
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="query-embed")

    def _embed(self, query: str, embedders: list[Embedder]) -> dict[str, list[float]]:
        """The query's vector from each model, the models side by side on the two cores. Each
        embedder caps its own threads for a query (USE takes one BLAS thread)."""

        def one(e: Embedder) -> list[float]:
            vector: list[float] = e.embed([query], kind="query")[0].tolist()
            return vector

        if len(embedders) < 2:
            return {e.name: one(e) for e in embedders}
        others = {e.name: self._pool.submit(one, e) for e in embedders[1:]}
        return {embedders[0].name: one(embedders[0])} | {n: f.result() for n, f in others.items()}

    def weights(self, lang: str) -> dict[str, float]:
        bm25, minilm, use, use_sentences = (
            self.settings.weights_en if lang == "en" else self.settings.weights_other
        )
        if "use" + SENTENCES not in self.index.dims:  # the whole chunk stands in for its sentences
            use, use_sentences = use + use_sentences, 0.0
        by_name = {"minilm": minilm, "use": use, "use" + SENTENCES: use_sentences}
        names = [n for n in self.index.dims if n in by_name or not is_sentences(n)]
        return {n: by_name.get(n, 1.0) for n in names} | {"sparse": bm25}

    def search(
        self,
        query: str,
        groups: Sequence[str],
        filters: Filters | None = None,
        top_k: int = 10,
        readers: Sequence[Sequence[str]] = (),
    ) -> list[Passage]:
        """Passages the asker (and, in a channel, every member listed in ``readers``) may read."""
        s = self.settings
        lang = detect_lang(query)
        weights = self.weights(lang)
        needed = [
            e
            for e in self.embedders
            if weights.get(e.name, 0) + weights.get(e.name + SENTENCES, 0) > 0
        ]
        dense = self._embed(query, needed)
        sparse = self.sparse.encode_query(query, lang)
        if s.fusion == "sum" and sparse.indices:
            weights["sparse"] /= len(sparse.indices)
        limit = max(top_k, s.rerank_depth) if self.reranker else top_k
        vectors: dict[str, list[float] | list[list[float]]] = {**dense}
        vectors |= {
            n + SENTENCES: [v] for n, v in dense.items() if weights.get(n + SENTENCES, 0) > 0
        }
        q = HybridQuery(
            groups=list(groups),
            dense=vectors,
            sparse=sparse,
            weights=weights,
            limit=limit,
            prefetch=max(s.prefetch, limit),
            fusion=s.fusion,
            rrf_k=s.rrf_k,
            doc_ids=filters.doc_ids if filters else None,
            updated_after=filters.updated_after if filters else None,
            readers=[list(r) for r in readers],
            # each model's vector (for its cosine), and the sentence vectors: the answer step
            # reads how close each sentence is to the question without embedding it again
            with_vectors=[
                *dense,
                *(n + SENTENCES for n in dense if n + SENTENCES in self.index.dims),
            ],
        )
        hits = self.index.query(q)
        if s.fusion == "rrf" and lang != "en" and "use" in dense:
            # Ranks know nothing of scores: give documents in other languages, which no query
            # word matches, a second, dense-only chance, interleaved with the hybrid ranking.
            cross = self.index.query(replace(q, weights={**weights, "sparse": 0.0}))
            hits = _interleave(hits, cross, limit)
        passages = [Passage.from_hit(hit) for hit in hits]
        # Cosine of query and passage per model: a confidence fused scores cannot give.
        for name, vector in dense.items():
            found = [i for i, hit in enumerate(hits) if name in hit.vectors]
            if found:
                cosines = np.array([hits[i].vectors[name] for i in found]) @ np.array(vector)
                for i, cosine in zip(found, cosines.tolist(), strict=True):
                    passages[i].scores.cosine[name] = cosine
            for i, hit in enumerate(hits):
                rows = hit.vectors.get(name + SENTENCES)
                if rows:  # the cosine of each sentence of the chunk, in order
                    sims = (
                        np.asarray(rows, dtype=np.float32) @ np.asarray(vector, dtype=np.float32)
                    ).tolist()
                    passages[i].scores.sentence_cosines[name] = sims
        passages = one_of_each(passages)
        if self.reranker and passages:
            passages = self.reranker.rerank(query, passages, top_k)
        return passages[:top_k]


def _interleave(a: list[Hit], b: list[Hit], limit: int) -> list[Hit]:
    out: dict[int, Hit] = {}
    for pair in zip(a, b, strict=False):
        for h in pair:
            out.setdefault(h.id, h)
    for h in a[len(b) :] + b[len(a) :]:
        out.setdefault(h.id, h)
    return list(out.values())[:limit]
