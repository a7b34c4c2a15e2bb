"""A sentence that opens by pointing back ("It has …") is about what the sentence before it names:
it is matched with that sentence's words, though it does not say them itself. Made-up text."""

from __future__ import annotations

from agent.extract import score_units
from agent.questions import asks
from agent.terms import TermStats
from tests.agent.made_up import passage

SKARV = (
    "The ferry Skarv was built at the Varnholm yard in 1931 and carries 300 passengers on summer "
    "crossings. It has four decks and a copper hull."
)
OTHERS = {
    "tern": "The ferry Tern has two decks for cars and one deck for bicycles.",
    "gull": "The ferry Gull has decks of teak, laid in 1950.",
    "yard": "The Varnholm yard repaired the ferry Skarv after the storm of 1962.",
}


def _ranked(question: str):
    found = [
        passage(f"{name}.md", "Harbour fleet", "2026-01-01", text)
        for name, text in {"skarv": SKARV, **OTHERS}.items()
    ]
    stats = TermStats.from_texts([p.text for p in found])
    return score_units(question, asks(question), found, stats, frozenset()).ranked


def test_a_sentence_that_points_back_is_matched_with_the_words_of_the_one_before():
    """ "It has four decks" names neither the Skarv nor a ferry; with the sentence before it, it
    matches the question better than the other ferries' deck sentences do, and what it says itself
    (``context``, which the refusal gates read) is still its own words and headings."""
    ranked = _ranked("How many decks does the ferry Skarv have?")
    texts = [s.unit.text for s in ranked]
    four = texts.index("It has four decks and a copper hull.")
    assert four < texts.index(OTHERS["tern"]) and four < texts.index(OTHERS["gull"]), texts
    assert "skarv" not in ranked[four].context and "deck" in ranked[four].context


def test_a_sentence_that_does_not_point_back_is_matched_with_its_own_words():
    ranked = _ranked("Which ferry has decks of teak?")
    assert ranked[0].unit.text == OTHERS["gull"]
