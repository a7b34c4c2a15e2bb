"""CohereReranker against a local server speaking Cohere's v2 rerank wire format, and the
Retriever's reranker seam (a deeper candidate list in, ``top_k`` reranked passages out)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from agent.passages import Passage, Scores
from agent.rerank import CohereReranker, build_reranker
from agent.retrieval import Retriever
from agent.settings import CohereSettings, RetrievalSettings
from bot.settings import Settings
from ingest.edge_index import EdgeIndex
from ingest.index import PointData
from ingest.sparse import BM25Encoder


class FakeCohere:
    """POST /v2/rerank: scores each document by how many query words it contains, records bodies."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.bodies.append(body)
                fake.headers.append(dict(self.headers))
                words = set(body["query"].lower().split())
                scores = [
                    len(words & set(d.lower().split())) / len(words) for d in body["documents"]
                ]
                order = sorted(range(len(scores)), key=lambda i: -scores[i])[: body["top_n"]]
                reply = {
                    "id": "r1",
                    "results": [{"index": i, "relevance_score": scores[i]} for i in order],
                    "meta": {"billed_units": {"search_units": 1}},
                }
                data = json.dumps(reply).encode()
                self.send_response(200 if self.path == "/v2/rerank" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def cohere():
    fake = FakeCohere()
    yield fake
    fake.close()


def passage(i: int, text: str) -> Passage:
    return Passage(
        doc_id=f"d{i}",
        chunk_id=f"d{i}#0",
        parent_id="",
        title="",
        breadcrumbs="",
        text=text,
        source="",
        link="",
        anchor="",
        page=None,
        updated="",
        owner="",
        lang="en",
        score=1.0 / (i + 1),
        scores=Scores(cosine={"use": 0.5}),
    )


def test_cohere_reranker_sends_the_wire_format_and_reorders(cohere):
    texts = ["lunch menu", "parental leave is sixteen weeks", "leave policy overview"]
    reranker = CohereReranker("secret-key", model="rerank-v3.5", base_url=cohere.base_url)
    out = reranker.rerank(
        "how many weeks of parental leave", [passage(i, t) for i, t in enumerate(texts)], top_n=2
    )
    assert cohere.bodies == [
        {
            "model": "rerank-v3.5",
            "query": "how many weeks of parental leave",
            "documents": texts,
            "top_n": 2,
        }
    ]
    assert cohere.headers[0]["Authorization"] == "Bearer secret-key"
    assert [p.doc_id for p in out] == ["d1", "d2"]
    assert out[0].scores.cosine == {"use": 0.5}
    assert out[0].scores.rerank == pytest.approx(0.5)  # 3 of 6 query words


def test_cohere_reranker_skips_the_call_without_passages(cohere):
    assert CohereReranker("k", base_url=cohere.base_url).rerank("q", [], top_n=5) == []
    assert cohere.bodies == []


def test_build_reranker_only_with_a_cohere_key(cohere, tmp_path):
    assert build_reranker(Settings(data_dir=tmp_path).cohere) is None
    reranker = build_reranker(CohereSettings(api_key="k", base_url=cohere.base_url))
    assert [
        p.doc_id
        for p in reranker.rerank("leave", [passage(0, "menu"), passage(1, "leave")], top_n=1)
    ] == ["d1"]
    assert cohere.bodies[0]["model"] == "rerank-v3.5"


class OneHot:
    """A tiny deterministic embedder: enough for the index to hold a dense vector."""

    name, dim = "use", 4

    def embed(self, texts, kind="document"):
        return np.tile(np.array([1.0, 0.0, 0.0, 0.0], np.float32), (len(texts), 1))


def test_retriever_reranks_a_deeper_list_and_returns_top_k(cohere, tmp_path):
    index = EdgeIndex(tmp_path / "index", {"use": 4})
    sparse = BM25Encoder()
    texts = [f"leave leave leave policy {n}" for n in "abcde"] + [
        "parental leave lasts sixteen weeks"
    ]
    for i, t in enumerate(texts):
        index.upsert_document(
            f"d{i}",
            [
                PointData(
                    i,
                    {"use": [1.0, 0, 0, 0]},
                    sparse.encode_document(t),
                    {"doc_id": f"d{i}", "chunk_id": f"d{i}#0", "text": t, "acl": ["*"]},
                )
            ],
            [],
        )
    reranker = CohereReranker("k", base_url=cohere.base_url)
    retriever = Retriever(
        index,
        [OneHot()],
        sparse,
        RetrievalSettings(rerank_depth=30, weights_en=(0.2, 0.0, 1.0, 0.0)),
        reranker=reranker,
    )
    out = retriever.search("parental leave weeks", ["*"], top_k=2)
    assert len(cohere.bodies[0]["documents"]) == 6 and cohere.bodies[0]["top_n"] == 2
    assert [p.doc_id for p in out][0] == "d5"
    assert len(out) == 2 and out[0].scores.rerank is not None and "use" in out[0].scores.cosine
    index.close()
