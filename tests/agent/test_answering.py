"""Whether the best unit answers the question, on hand-made extracts (no models)."""

from __future__ import annotations

import numpy as np

from agent.extract import Extract, Scored
from agent.offline import OfflineReasoner
from agent.questions import asks
from agent.terms import TermStats
from agent.units import Unit

QUESTION = "What bonus do I get if a person I recommended is hired?"


def answers(score: float, meaning: float) -> bool:
    unit = Unit("For every referred candidate we hire, you receive a bonus.", 0, 0, "sentence")
    toks = frozenset({"bonus", "hire", "refer", "candid", "receiv"})
    best = Scored(unit, score, 0.6, meaning, toks, context=toks)
    extract = Extract(
        [],
        [best],
        {"bonus": 4.0, "person": 2.0, "hire": 3.0},
        unseen=0.34,  # "recommended": no document uses it
        unseen_words=["recommended"],
        question=QUESTION,
        asked={"bonus": 4.0, "person": 2.0, "hire": 3.0, "recommend": 4.7},
    )
    reasoner = OfflineReasoner(lambda: TermStats.from_texts([unit.text]))
    return reasoner._answers(extract, asks(QUESTION))


def test_a_unit_close_in_meaning_says_the_unseen_word_in_its_own_words():
    """ "referred" says "recommended": the sentence is close to the question in meaning, so the
    word no document uses costs it little."""
    assert answers(score=0.52, meaning=0.65)


def test_a_unit_far_in_meaning_pays_for_the_unseen_word():
    assert not answers(score=0.52, meaning=0.2)


def says(text: str, context: set[str], meaning: float) -> bool:
    question = "Who has to approve a salary offer above the band maximum?"
    unit = Unit(text, 0, 0, "sentence")
    weights = {"approv": 1.5, "salari": 2.0, "offer": 2.7, "abov": 2.5, "band": 2.7}
    best = Scored(unit, 0.6, 0.35, meaning, frozenset(context), context=frozenset(context))
    extract = Extract([], [best], weights, 0.0, question=question, asked=weights)
    reasoner = OfflineReasoner(lambda: TermStats.from_texts([text]))
    return reasoner._answers(extract, asks(question))


def test_a_unit_sharing_two_small_words_of_the_question_and_far_in_meaning_does_not_answer():
    """An expense rule ("Requests above 1,000 EUR are approved by …") shares "above" and
    "approve" with a question about salary offers: a third of its weight, and another subject."""
    text = "Requests above 1,000 EUR are approved by the engaging manager and then by Finance."
    assert not says(text, {"abov", "approv", "request", "manag"}, meaning=0.33)
    assert says(text, {"abov", "approv", "request", "manag"}, meaning=0.7)  # a paraphrase
    # two of five words (and the two weightiest), a little closer: "Rail: 2nd class." for a
    # train ride is the kind of answer this must leave alone
    assert says(text, {"abov", "approv", "offer"}, meaning=0.42)
    full = {"abov", "approv", "salari", "offer", "band"}
    assert says("Offers above the band maximum are approved by the CFO.", full, meaning=0.33)


class CountingEmbedder:
    """A made-up embedder: a text's vector is its letters' counts; it records every text it is
    asked to embed."""

    name = "minilm"
    dim = 26

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts, kind="document"):  # type: ignore[no-untyped-def]
        self.seen += texts
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for ch in text.lower():
                if "a" <= ch <= "z":
                    out[row, ord(ch) - ord("a")] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_a_text_is_embedded_once_however_often_it_is_compared() -> None:
    """Every round and every part of a question scores the same units again: each text's vector
    is kept, and the similarities stay what a fresh embedding gives."""
    embedder = CountingEmbedder()
    reasoner = OfflineReasoner(lambda: TermStats.from_texts(["x"]), [embedder])
    texts = ["Parking is free on weekends.", "Badges open the side door."]
    first = reasoner._sentence_sims("en", "Is parking free?", texts)
    again = reasoner._sentence_sims("en", "Is parking free?", [*texts, "Bikes go in the yard."])
    assert again[:2] == first and first[0] > first[1]
    assert sorted(embedder.seen) == sorted(["Is parking free?", *texts, "Bikes go in the yard."])


def test_a_cache_cleared_by_another_turn_meanwhile_loses_no_vector() -> None:
    """The cache is shared by every turn of the process and cleared when full: a turn whose
    texts another turn's clearing removed between its lookup and its reading still gets each
    vector (it raised KeyError)."""
    reasoner = OfflineReasoner(lambda: TermStats.from_texts(["x"]))

    class ClearingEmbedder(CountingEmbedder):
        def embed(self, texts, kind="document"):  # type: ignore[no-untyped-def]
            out = super().embed(texts, kind)
            reasoner._vectors.clear()  # what another turn's full cache does meanwhile
            return out

    question = "Is parking free?"
    reasoner._vectors["minilm", question] = CountingEmbedder().embed([question])[0]
    embedder = ClearingEmbedder()
    reasoner._embedders = {embedder.name: embedder}
    sims = reasoner._sentence_sims("en", question, ["Parking is free on weekends."])
    assert embedder.seen == ["Parking is free on weekends."]  # the question's vector was kept
    assert len(sims) == 1 and sims[0] > 0.5
