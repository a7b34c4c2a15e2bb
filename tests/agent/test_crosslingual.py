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


# made up: an English rule, asked in Chinese, with the multilingual cosines a question in another
# language typically has with the sentence that answers it (XQuAD: about 0.36) and its passage
BICYCLES = passage(
    "hr/bicycles.md",
    "Cycling",
    "2026-01-01",
    "Staff who cycle to work receive a monthly bicycle allowance of 30 EUR. "
    "The bicycle shed opens at 7 am.",
)
ASKED_IN_CHINESE = "骑车上班的员工每月补贴多少钱？"


def _with_cosines(passage_cosine: float, sentences: list[float]):
    from dataclasses import replace

    p = replace(BICYCLES)
    p.scores = replace(
        p.scores, cosine={"use": passage_cosine}, sentence_cosines={"use": sentences}
    )
    return p


def test_a_cosine_across_languages_is_read_as_the_same_question_in_the_documents_language():
    import asyncio

    from agent.offline import OfflineReasoner

    reasoner = OfflineReasoner(lambda: TermStats.from_texts([BICYCLES.text]))
    near = asyncio.run(reasoner.grade(ASKED_IN_CHINESE, [_with_cosines(0.26, [0.36, 0.05])]))
    assert near[0].label != "off_topic", near[0]  # off topic when read as a same-language cosine
    far = asyncio.run(reasoner.grade(ASKED_IN_CHINESE, [_with_cosines(0.18, [0.28, 0.05])]))
    assert far[0].label == "off_topic", far[0]


def test_the_sentence_that_answers_across_languages_scores_enough_to_answer():
    from agent.calibration import Calibration

    p = _with_cosines(0.3, [0.43, 0.05])
    extract = score_units(
        ASKED_IN_CHINESE, asks(ASKED_IN_CHINESE), [p], TermStats.from_texts([p.text]), EVERYONE
    )
    best = extract.ranked[0]
    assert best.cross and "allowance" in best.unit.text, best.unit.text
    assert best.score >= Calibration.answer_at, best.score


def test_the_shift_is_read_only_for_a_question_in_another_language_over_english():
    import asyncio
    from dataclasses import replace

    from agent.extract import across
    from agent.offline import OfflineReasoner

    assert across(0.3, "en", "zh") == across(0.3, "uk", "zh") == 0.3  # measured over English only
    assert across(0.3, "zh", "en") > 0.3
    # the same cosines as above, an English question over a passage written in Chinese
    chinese = replace(_with_cosines(0.26, [0.36, 0.05]), lang="zh")
    reasoner = OfflineReasoner(lambda: TermStats.from_texts([chinese.text]))
    asked = "How much is the monthly allowance for cycling?"
    grades = asyncio.run(reasoner.grade(asked, [chinese]))
    assert grades[0].label == "off_topic", grades[0]
