"""Copies of one passage in several documents are one passage: the newest, then the first by
document id, whichever copy the rounding of their vectors ranks first."""

from __future__ import annotations

import numpy as np

from agent.passages import Passage, one_of_each
from agent.retrieval import Retriever
from agent.settings import RetrievalSettings
from ingest.edge_index import EdgeIndex
from ingest.index import PointData
from ingest.sparse import BM25Encoder


def passage(doc_id: str, text: str, updated: str = "", audience: tuple[str, ...] = ()) -> Passage:
    return Passage.from_payload(
        {
            "doc_id": doc_id,
            "chunk_id": f"{doc_id}#0",
            "title": "Badges",
            "breadcrumbs": "Badges › Lost",
            "text": text,
            "updated": updated,
            "audience": list(audience),
        }
    )


def test_copies_keep_the_newest_then_the_first_document_at_the_best_rank():
    lost = "A lost badge is replaced at the front desk within two days."
    ranked = [
        passage("b", lost),
        passage("x", "Visitors sign in at the front desk."),
        passage("a", lost),
        passage("c", lost, updated="2026-01-01"),  # a copy saved later than the others
        passage("d", "A lost badge is replaced at the front desk within two days!"),
    ]
    assert [p.doc_id for p in one_of_each(ranked)] == ["c", "x", "d"]
    assert [p.doc_id for p in one_of_each(ranked[:3])] == ["a", "x"]


def test_passages_for_other_audiences_are_no_copies():
    rule = "Overtime is paid at one and a half times the hourly rate."
    out = one_of_each([passage("a", rule, audience=("interns",)), passage("b", rule)])
    assert [p.doc_id for p in out] == ["a", "b"]


class Fixed:
    """An embedder whose query vector is fixed: the index's vectors alone order the hits."""

    name, dim = "use", 2

    def embed(self, texts, kind="document"):
        return np.tile(np.array([1.0, 0.0], np.float32), (len(texts), 1))


def test_search_returns_one_copy_whichever_the_rounding_ranks_first(tmp_path):
    index = EdgeIndex(tmp_path / "index", {"use": 2})
    sparse = BM25Encoder()
    text = "A lost badge is replaced at the front desk within two days."
    # the same text, its vectors a rounding apart: "d2" ranks first
    for i, (doc_id, x) in enumerate([("d1", 0.9999), ("d2", 1.0), ("d3", 0.5)]):
        body = text if doc_id != "d3" else "Visitors sign in at the front desk."
        vector = [x, float(np.sqrt(1 - x * x))]
        payload = {"doc_id": doc_id, "chunk_id": f"{doc_id}#0", "text": body, "acl": ["*"]}
        index.upsert_document(
            doc_id, [PointData(i, {"use": vector}, sparse.encode_document(body), payload)], []
        )
    retriever = Retriever(
        index, [Fixed()], sparse, RetrievalSettings(weights_en=(0.0, 0.0, 1.0, 0.0))
    )
    assert [p.doc_id for p in retriever.search("lost badge", ["*"], top_k=3)] == ["d1", "d3"]
    index.close()
