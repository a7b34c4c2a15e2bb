"""One contract, every index: Qdrant Edge (embedded) and qdrant-client's server API (`:memory:`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from ingest.edge_index import EdgeIndex
from ingest.index import HybridQuery, PointData
from ingest.server_index import ServerIndex
from ingest.sparse import BM25Encoder

DIMS = {"minilm": 8, "use": 8, "use_sentences": 8}
enc = BM25Encoder()


@pytest.fixture(params=["edge", "server"])
def index(request, tmp_path):
    ix = (
        EdgeIndex(tmp_path / "edge", DIMS)
        if request.param == "edge"
        else ServerIndex.connect(":memory:", None, "t", DIMS)
    )
    yield ix
    ix.close()


def vec(seed: int) -> list[float]:
    v = np.random.default_rng(seed).normal(size=8)
    return (v / np.linalg.norm(v)).tolist()


def points(
    doc_id: str, texts: list[str], acl: list[str], content_hash: str = "h1", base: int = 0
) -> list[PointData]:
    return [
        PointData(
            id=base + i,
            dense={"minilm": vec(base + i), "use": vec(100 + base + i)},
            sparse=enc.encode_document(t),
            payload={
                "doc_id": doc_id,
                "chunk_id": f"{doc_id}#{i}",
                "seq": i,
                "text": t,
                "acl": acl,
                "content_hash": content_hash,
                "doc_chunks": len(texts),
                "updated": "2026-01-01",
            },
        )
        for i, t in enumerate(texts)
    ]


def query(text: str, groups: list[str], seed: int = 0, **kw) -> HybridQuery:
    return HybridQuery(
        groups=groups,
        dense={"minilm": vec(seed), "use": vec(100 + seed)},
        sparse=enc.encode_query(text),
        limit=kw.pop("limit", 10),
        **kw,
    )


def test_hybrid_query_finds_by_words_and_by_vector(index):
    index.upsert_document(
        "hr/leave",
        points("hr/leave", ["vacation days carry over", "parental leave weeks"], ["*"]),
        [],
    )
    index.upsert_document(
        "eng/run", points("eng/run", ["rollback the deploy", "pager rotation"], ["*"], base=10), []
    )
    hits = index.query(query("carry over vacation", ["bob"], seed=999))
    assert hits[0].payload["chunk_id"] == "hr/leave#0"
    hits = index.query(
        HybridQuery(
            groups=["bob"], dense={"minilm": vec(11), "use": vec(111)}, weights={"sparse": 0}
        )
    )
    assert hits[0].payload["chunk_id"] == "eng/run#1"


def test_acl_filter_hides_documents_even_for_a_verbatim_quote(index):
    index.upsert_document(
        "hr/bands",
        points("hr/bands", ["L4 senior engineer salary band 78000 96000 EUR"], ["hr"]),
        [],
    )
    index.upsert_document("pub", points("pub", ["lunch menu wednesday"], ["*"], base=10), [])
    quote = "L4 senior engineer salary band 78000 96000 EUR"
    assert [h.payload["doc_id"] for h in index.query(query(quote, ["engineering"], seed=0))] == [
        "pub"
    ]
    assert index.query(query(quote, ["hr"], seed=0))[0].payload["doc_id"] == "hr/bands"
    assert index.chunks("hr/bands", ["engineering"]) == []
    assert len(index.chunks("hr/bands", ["hr"])) == 1


def test_set_payloads_relabels_points_and_keeps_their_vectors_and_other_fields(index):
    quote = "L4 senior engineer salary band 78000 96000 EUR"
    index.upsert_document("hr/bands", points("hr/bands", [quote, "second part"], ["hr"]), [])
    before = index.query(query(quote, ["hr"], seed=0, with_vectors=["minilm"]))[0]

    index.set_payloads(
        [(1, {"acl": ["engineering"]}), (0, {"acl": ["engineering"], "content_hash": "h2"})]
    )

    assert index.query(query(quote, ["hr"], seed=0)) == []
    after = index.query(query(quote, ["engineering"], seed=0, with_vectors=["minilm"]))[0]
    assert after.id == before.id and after.vectors == before.vectors
    assert after.payload["text"] == quote and after.payload["acl"] == ["engineering"]
    assert index.documents()["hr/bands"].content_hash == "h2"


def test_set_readers_relabels_every_point_given_and_no_other(index):
    quote = "L4 senior engineer salary band 78000 96000 EUR"
    index.upsert_document("hr/bands", points("hr/bands", [quote, "second", "third"], ["*"]), [])
    index.upsert_document("pub/x", points("pub/x", ["open text"], ["*"], base=10), [])

    index.set_readers([0, 1, 2], ["hr"])

    assert len(index.chunks("hr/bands", ["hr"])) == 3 and not index.chunks("hr/bands", ["sales"])
    assert index.chunks("pub/x", ["sales"])  # only the points given
    assert index.chunks("hr/bands", ["hr"])[0]["text"] == quote  # the rest of the payload kept
    assert index.documents()["hr/bands"].content_hash == "h1"


def test_replacing_with_fewer_chunks_hides_then_purges_the_rest(index):
    index.upsert_document("d", points("d", ["alpha one", "beta two", "gamma three"], ["*"]), [])
    assert index.documents()["d"].chunks == 3
    index.upsert_document(
        "d", points("d", ["alpha new"], ["*"], content_hash="h2"), stale_ids=[1, 2]
    )
    texts = [h.payload["text"] for h in index.query(query("beta gamma alpha", ["x"]))]
    assert texts == ["alpha new"]
    assert index.documents()["d"].content_hash == "h2"
    index.purge_tombstones()
    assert index.count() == 1


def test_delete_and_metadata_filters(index):
    index.upsert_document("a", points("a", ["shared words here"], ["*"]), [])
    index.upsert_document("b", points("b", ["shared words there"], ["*"], base=10), [])
    assert {
        h.payload["doc_id"] for h in index.query(query("shared words", ["x"], doc_ids=["b"]))
    } == {"b"}
    assert index.query(query("shared words", ["x"], updated_after="2026-06-01T00:00:00Z")) == []
    index.delete_document("a")
    assert set(index.documents()) == {"b"}
    assert {h.payload["doc_id"] for h in index.query(query("shared words", ["x"]))} == {"b"}


def test_channel_readers_see_only_what_every_member_may_read(index):
    index.upsert_document("hr", points("hr", ["travel budget rules"], ["hr"]), [])
    index.upsert_document(
        "both", points("both", ["travel budget rules"], ["engineering", "hr"], base=10), []
    )
    index.upsert_document("pub", points("pub", ["travel budget rules"], ["*"], base=20), [])
    hits = index.query(
        query("travel budget", ["hr"], readers=[["engineering"], ["hr", "managers"]])
    )
    assert {h.payload["doc_id"] for h in hits} == {"both", "pub"}


def test_query_returns_requested_vectors_for_grading(index):
    index.upsert_document("a", points("a", ["some words"], ["*"]), [])
    hit = index.query(query("some words", ["x"], with_vectors=["use"]))[0]
    assert set(hit.vectors) == {"use"}
    assert np.allclose(hit.vectors["use"], vec(100), atol=1e-5)


def test_sum_fusion_adds_exact_weighted_scores_over_every_candidate(index):
    index.upsert_document(
        "d",
        points("d", ["vacation days carry over", "parental leave weeks", "rollback"], ["*"]),
        [],
    )
    q = HybridQuery(
        groups=["x"],
        dense={"minilm": vec(2)},
        sparse=enc.encode_query("vacation"),
        fusion="sum",
        weights={"minilm": 0.5, "sparse": 1.0},
        prefetch=1,
    )
    hits = index.query(q)
    score = {h.payload["seq"]: h.score for h in hits}
    cosine = {i: float(np.dot(vec(i), vec(2))) for i in range(3)}
    # Dense found point 2 (cosine 1), BM25 found point 0 (the only one with "vacation"); each is
    # scored by both signals, though point 0 is far outside the dense top 1.
    assert [h.payload["seq"] for h in hits] == [0, 2]
    assert score[2] == pytest.approx(0.5, abs=1e-4)  # no query word: BM25 adds 0
    assert score[0] - 0.5 * cosine[0] == pytest.approx(
        index.query(replace(q, weights={"minilm": 0.0, "sparse": 1.0}))[0].score, abs=1e-4
    )
    assert score[0] - 0.5 * cosine[0] > 0.6


def test_sentence_vectors_rescore_the_candidates_by_their_best_sentence(index):
    cosine = {i: float(np.dot(vec(100 + i), vec(7))) for i in range(3)}
    *candidates, outsider = sorted(cosine, key=cosine.get, reverse=True)
    sentences = {candidates[0]: [vec(50), vec(51)], candidates[1]: [vec(52)], outsider: [vec(7)]}
    pts = points("d", ["one", "two", "three"], ["*"])
    for p in pts:
        p.dense["use_sentences"] = sentences[p.id]
    index.upsert_document("d", pts, [])
    q = HybridQuery(
        groups=["x"],
        dense={"use": vec(7), "use_sentences": [vec(7)]},
        fusion="sum",
        weights={"use": 0.5, "use_sentences": 0.5},
        prefetch=2,
    )
    hits = {h.id: h.score for h in index.query(q)}
    # Only what the chunk vectors found is scored: a perfect sentence elsewhere adds no candidate.
    assert sorted(hits) == sorted(candidates)
    for i in candidates:
        best = max(float(np.dot(s, vec(7))) for s in sentences[i])
        assert hits[i] == pytest.approx(0.5 * cosine[i] + 0.5 * best, abs=1e-4)


def test_texts_skips_tombstones(index):
    index.upsert_document("a", points("a", ["one", "two"], ["*"]), [])
    index.upsert_document("a", points("a", ["three"], ["*"], content_hash="h2"), stale_ids=[1])
    assert sorted(index.texts(limit=10)) == ["three"]


def test_the_index_keeps_its_own_record_of_how_it_was_built(index, tmp_path):
    assert index.metadata() == {}
    index.set_metadata({"bm25": enc.params()})
    index.set_metadata({"other": 1})  # merged, not replaced
    assert index.metadata() == {"bm25": {"k1": 0.9, "b": 0.4, "avgdl": 120.0}, "other": 1}
    if isinstance(index, EdgeIndex):  # survives a reopen of the folder
        index.close()
        reopened = EdgeIndex(tmp_path / "edge", DIMS)
        assert reopened.metadata()["bm25"] == enc.params()
        reopened.close()


def test_the_version_moves_with_every_write_and_survives_a_reopen(index, tmp_path):
    """What the term statistics are kept under: equal means the texts are as they were."""
    if isinstance(index, ServerIndex):
        assert index.version() is None  # the server has no such counter: statistics read texts
        return
    seen = [index.version()]
    index.upsert_document("a", points("a", ["one", "two"], ["*"]), [])
    seen.append(index.version())
    index.set_payloads([(0, {"text": "one, edited"})])  # same count, other text
    seen.append(index.version())
    index.delete_document("a")
    seen.append(index.version())
    assert len(set(seen)) == 4
    assert index.version() == seen[-1]  # reading moves nothing
    index.close()
    reopened = EdgeIndex(tmp_path / "edge", DIMS)
    assert reopened.version() == seen[-1]
    reopened.close()
