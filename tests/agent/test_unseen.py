"""Words no document uses, against a unit that says the rest (no models)."""

from __future__ import annotations

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
