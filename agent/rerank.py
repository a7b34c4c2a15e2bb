"""Rerankers: reorder the passages search found, best first. One method to implement: ``rerank``.

``CohereReranker`` calls Cohere's hosted rerank (``POST /v2/rerank``). No local default ships:
the re-scorings measured with the local models, the answer model's cross-encoder included
(``benchmarks/bench_rerank.py``), did not beat the fused ranking (docs/retrieval.md).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from agent.passages import Passage

if TYPE_CHECKING:
    import httpx

    from agent.settings import CohereSettings


class Reranker(Protocol):
    def rerank(self, query: str, passages: list[Passage], top_n: int) -> list[Passage]:
        """The ``top_n`` most relevant of ``passages``, best first, each with ``scores.rerank``."""
        ...


class CohereReranker:
    """Cohere's rerank API (``rerank-v3.5`` is multilingual); a fresh passage list, inputs untouched."""

    def __init__(
        self,
        api_key: str,
        model: str = "rerank-v3.5",
        base_url: str = "https://api.cohere.com",
        client: httpx.Client | None = None,
    ):
        import httpx  # only with a Cohere key: not a cost every start pays

        self.model = model
        self._http = client or httpx.Client(base_url=base_url, timeout=30.0)
        self._headers = {"Authorization": f"Bearer {api_key}"}

    def rerank(self, query: str, passages: list[Passage], top_n: int) -> list[Passage]:
        if not passages:
            return []
        body = {
            "model": self.model,
            "query": query,
            "documents": [p.text for p in passages],
            "top_n": min(top_n, len(passages)),
        }
        resp = self._http.post("/v2/rerank", json=body, headers=self._headers)
        resp.raise_for_status()
        out = []
        for result in resp.json()["results"]:
            p = passages[result["index"]]
            score = float(result["relevance_score"])
            out.append(replace(p, scores=replace(p.scores, rerank=score)))
        return out


def build_reranker(c: CohereSettings | None) -> Reranker | None:
    """Cohere's reranker when a Cohere key is configured (``FOOTNOTE_COHERE__API_KEY``), else none."""
    return CohereReranker(c.api_key.get_secret_value(), c.rerank_model, c.base_url) if c else None
