"""Questions in one language, documents in another: the names written in Latin letters (no
models: meaning across languages is what the embedders add on top)."""

from __future__ import annotations

from agent.extract import score_units
from agent.questions import asks, latin_names, names_all
from agent.terms import TermStats
from tests.agent.test_conflicts import EVERYONE, passage

PRICES = passage(
    "finance/prices.html",
    "Price List",
    "2026-06-01",
    "Plan: Starter · Price: 19 EUR per user per month\n"
    "Add-on: Smart Inbox · Price: 12 EUR per user per month · Available on: Team, Business\n"
    "Using your own car for business trips is reimbursed at 0.30 EUR per km.",
)


def test_the_latin_words_of_a_question_in_another_script_are_names_matched_as_written():
    assert latin_names("Сколько стоит дополнение Smart Inbox?", "ru") == ("Smart", "Inbox")
    assert latin_names("How much is Smart Inbox?", "en") == ()  # every word is Latin there
    assert names_all(("Business",), "Available on: Team, Business") == 1.0
    assert names_all(("Business",), "your own car for business trips") == 0.0


def test_the_row_that_names_what_a_russian_question_names_answers_it():
    question = "Сколько стоит дополнение Smart Inbox?"
    stats = TermStats.from_texts([PRICES.text])
    extract = score_units(question, asks(question), [PRICES], stats, EVERYONE)
    best = extract.ranked[0]
    assert best.cross and best.unit.text.startswith("Add-on: Smart Inbox"), best.unit.text
    assert best.score >= 0.45  # what the offline reasoner needs to answer across languages


def test_a_passage_that_names_everything_a_question_writes_in_latin_is_graded_relevant():
    import asyncio

    from agent.offline import OfflineReasoner

    reasoner = OfflineReasoner(lambda: TermStats.from_texts([PRICES.text]))
    grades = asyncio.run(reasoner.grade("Сколько стоит дополнение Smart Inbox?", [PRICES]))
    assert grades[0].label == "relevant", grades[0]
    other = asyncio.run(reasoner.grade("Сколько стоит дополнение Smart Reply?", [PRICES]))
    assert other[0].label != "relevant", other[0]  # half of the names is no match
