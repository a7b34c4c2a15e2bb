"""A year the question names picks out the case it asks about, as a release number does: a sentence
that names another year answers another question; one that names none may be about the year its
paragraph sets. Made-up text."""

from __future__ import annotations

import pytest

from agent.extract import score_units
from agent.questions import asked_years, asks
from agent.terms import TermStats
from tests.agent import made_up
from tests.agent.made_up import assistant_over, passage


@pytest.mark.parametrize(
    "question, required",
    [
        ("How many passengers did the ferry carry in 1962?", {"1962"}),
        # the situation's year is the asker's own; the rule they ask about need not name it
        ("I moved to Varnholm in 2019. — Can I buy a season ticket?", set()),
        ("I moved to Varnholm in 2019. — What did a season ticket cost in 2021?", {"2021"}),
        # a decade names a span, which a sentence names otherwise ("in 1962", "the late 1950s")
        ("Which region grew fastest in the 2000s?", set()),
        # a number with a unit or a currency is a value, matched as one, not a year
        ("Is a 1500 EUR fare refunded?", set()),
        ("Who crewed the ferry for 1200 hours?", set()),
    ],
)
def test_a_year_of_the_question_is_asked_and_a_value_s_a_decade_s_or_the_situation_s_is_not(
    question, required
):
    assert asked_years(question) == required


HISTORY = (
    "In 1931 the ferry Skarv carried 300 passengers a day between Varnholm and Tern Island. "
    "Its hull was of copper. By 1962 the ferry Skarv carried 450 passengers a day on the same crossing."
)


def _ranked(question: str):
    found = [passage("skarv.md", "Skarv crossings", "2026-01-01", HISTORY)]
    stats = TermStats.from_texts([p.text for p in found])
    return score_units(question, asks(question), found, stats, frozenset()).ranked


def test_a_sentence_that_names_another_year_lacks_the_year_asked():
    """Both sentences say the ferry's passengers a day; only the year tells them apart."""
    ranked = _ranked("How many passengers a day did the ferry Skarv carry in 1962?")
    assert "450" in ranked[0].unit.text and not ranked[0].missing, ranked[0].unit.text
    old = next(s for s in ranked if "300" in s.unit.text)
    assert old.missing == {"1962"}
    assert all(
        s.missing == {"1975"}
        for s in _ranked("How many passengers did it carry in 1975?")
        if "passengers" in s.unit.text
    )


@pytest.fixture(scope="module")
def assistant(tmp_path_factory, embedders):
    files = {
        "skarv.md": f"# Skarv crossings\n\n{HISTORY}\n",
        "tern.md": (
            "# Tern Island\n\nTern Island has a harbour, a chapel and a lighthouse. "
            "In 1958 a storm flooded the island. "
            "The flooded area of Tern Island was 12 square kilometres, against 5 in the storm of "
            "1931.\n"
        ),
        "ran.md": "# The ferry Ran\n\nThe ferry Ran can carry 40 cars and 200 passengers.\n",
        "_access.yaml": 'acl: ["*"]\n',
    }
    with assistant_over(files, tmp_path_factory, embedders) as made_up_assistant:
        yield made_up_assistant


def test_the_sentence_of_the_year_asked_answers(assistant):
    a = made_up.ask(assistant, "How many passengers a day did the ferry Skarv carry in 1962?")
    assert a.status == "answered" and "450" in a.text and "300" not in a.text, a.text


def test_a_year_no_sentence_names_is_not_answered_with_another_year(assistant):
    """The rules refuse both sentences (each names another year); the answer model, sure that
    either answers "how many passengers", may not answer with them either."""
    a = made_up.ask(assistant, "How many passengers a day did the ferry Skarv carry in 1975?")
    assert a.status == "unknown", a.text


def test_the_year_may_be_said_by_the_sentence_before(assistant):
    """A paragraph tells one year's events: the sentence after the year's is about it too, though
    it names another year in passing."""
    a = made_up.ask(assistant, "How large was the area of Tern Island flooded by the 1958 storm?")
    assert a.status == "answered" and "12 square kilometres" in a.text, a.text


def test_a_sentence_that_names_no_year_may_be_about_the_year_asked(assistant):
    """ "The ferry Ran can carry 40 cars" names no year: a paragraph often sets its year once,
    before the sentence that answers, so it is about no other year than the one asked."""
    a = made_up.ask(assistant, "How many cars could the ferry Ran carry in 1962?")
    assert a.status == "answered" and "40 cars" in a.text, a.text


def test_of_two_years_asked_a_sentence_says_one(assistant):
    """ "between 1931 and 1962" spans two years, and each sentence of the span names one of them:
    a sentence that names either answers (before, each lacked the other year and was refused)."""
    a = made_up.ask(
        assistant, "By how many passengers a day did the ferry Skarv grow between 1931 and 1962?"
    )
    assert a.status == "answered" and "passengers a day" in a.text, a.text
