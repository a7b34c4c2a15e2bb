"""A sentence that opens by pointing back ("It has …") is about what the sentence before it names:
it is matched with that sentence's words, though it does not say them itself; and when the best
unit does not say the thing asked for, a unit near it that does leads. Made-up text."""

from __future__ import annotations

import pytest

from agent.extract import score_units
from agent.questions import asks
from agent.terms import TermStats
from tests.agent import made_up
from tests.agent.made_up import assistant_over, passage

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


ENGINE = (
    "The company Harbourline in Varnholm has made progress in using modern materials for its "
    "ferries. The efficiency of Harbourline's ferry engine reaches some 27-30% on long crossings. "
    "It is a single-step, 5-cylinder engine with superheated steam."
)


@pytest.fixture(scope="module")
def assistant(tmp_path_factory, embedders):
    files = {
        "harbourline.md": f"# Note 0\n\n{ENGINE}\n",
        **{f"{n}.md": f"# Harbour note {n}\n\n{t}\n" for n, t in OTHERS.items()},
        "_access.yaml": 'acl: ["*"]\n',
    }
    with assistant_over(files, tmp_path_factory, embedders) as made_up_assistant:
        yield made_up_assistant


def test_the_sentence_that_says_the_thing_asked_for_answers_though_the_one_before_leads(
    assistant,
):
    """The sentence on the engine's efficiency matches "How many cylinders does the Harbourline
    ferry engine have?" best and says no cylinder; the one after it says the cylinders of "it"
    (the engine) and is the answer, quoted with the sentence it points back to."""
    a = made_up.ask(assistant, "How many cylinders does the Harbourline ferry engine have?")
    assert a.status == "answered" and "5-cylinder" in a.text, a.text
