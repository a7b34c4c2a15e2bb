"""What follows from a CRM record and a rule, and how the answer reads, on made-up text (no
models): the conclusion first, then the rule it applied, then the record it rests on, and none of
the rule's other cases."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest

from agent.conclusions import read_words, tool_passage
from agent.offline import OfflineReasoner
from agent.passages import Passage
from agent.terms import TermStats
from ingest.errors import ConfigError
from tests.agent.test_conflicts import passage

TODAY = date(2031, 5, 30)
RULE = (
    "Monthly subscriptions can be refunded within 14 days of the order date. "
    "The buyer then gets all of that payment back. Older monthly payments stay with us."
)


def rule_passage() -> Passage:
    return passage(
        "shop/returns.md", "Returns", "2031-01-01", RULE, crumbs="Returns > Subscriptions"
    )


def draft(order_date: str):
    record = {
        "id": 9001,
        "company": "Quill & Ink",
        "orders": [{"order_id": "Q-77", "billing": "monthly", "order_date": order_date}],
    }
    passages = [tool_passage(record, TODAY, "en"), rule_passage()]
    reasoner = OfflineReasoner(lambda: TermStats.from_texts([RULE]))
    question = "Can customer 9001 still get a refund?"
    return asyncio.run(reasoner.answer(question, [question], passages, []))


def test_a_conclusion_leads_then_its_rule_then_the_record_and_no_other_case_of_the_rule():
    out = draft("2031-04-01")  # 59 days before TODAY: outside the 14 days
    texts = [s.text for s in out.sentences]
    assert out.sentences[0].note and "59 days" in texts[0] and "14-day" in texts[0], texts
    assert texts[1].startswith("Monthly subscriptions can be refunded within 14 days"), texts
    assert texts[-1].startswith(
        "Order Q-77: billing monthly, order date 2031-04-01 (59 days ago)"
    ), texts
    assert not any("gets all of that payment back" in t for t in texts), texts


def test_inside_the_window_the_conclusion_says_so():
    out = draft("2031-05-25")  # 5 days
    assert out.sentences[0].note and "5 days" in out.sentences[0].text, out.sentences


def test_the_words_of_a_question_come_from_a_file_per_language(tmp_path):
    """A language is a file: its words join every other language's, stems are found inside a
    word, and a list the code does not read names the file to fix."""
    (tmp_path / "nl.yaml").write_text("refund: [geld terug, terugbetal-]\nmonthly: [maandelijks]\n")
    words = read_words(tmp_path)
    assert words.refund.search("Krijgt klant 12 zijn geld  terug?")
    assert words.refund.search("Is een terugbetaling mogelijk?")  # the stem, inside a word
    assert not words.refund.search("Can I get a refund?")  # only the folder's languages
    assert words.billing["monthly"].search("maandelijks") and not words.total.search("x")
    (tmp_path / "nl.yaml").write_text("refunds: [geld terug]\n")
    with pytest.raises(ConfigError, match=r"agent/words/nl\.yaml: unknown list"):
        read_words(tmp_path)


def test_a_record_that_answers_is_not_joined_by_a_document_that_adds_no_word_asked():
    """ "Which tier is customer 9001 on?": the record's "tier" field answers; a roadmap line that
    shares the words ("tiered", "customer") adds nothing asked, while a line with a word asked
    that the record lacks ("discount") still joins."""
    record = {"id": 9001, "company": "Quill & Ink", "tier": "gold"}
    roadmap = "Tiered pricing for every customer is planned for the autumn."
    offers = "Gold tier customers get a 5% discount on renewals."
    passages = [
        tool_passage(record, TODAY, "en"),
        passage("shop/roadmap.md", "Roadmap", "2031-01-01", roadmap, crumbs="Roadmap"),
        passage("shop/offers.md", "Offers", "2031-01-01", offers, crumbs="Offers"),
    ]
    reasoner = OfflineReasoner(lambda: TermStats.from_texts([roadmap, offers, "Other things."]))

    def texts(question: str) -> list[str]:
        out = asyncio.run(reasoner.answer(question, [question], passages, []))
        return [s.text for s in out.sentences]

    plain = texts("Which tier is customer 9001 on?")
    assert plain == ["Customer 9001: company Quill & Ink, tier gold"], plain
    more = texts("Which tier is customer 9001 on, and what discount does it get?")
    assert more[0] == plain[0] and any("5% discount" in t for t in more), more


def test_a_field_the_question_names_is_asked_with_the_records_value():
    """ "How many free returns does the tier of customer 9001 allow?": the record's tier (gold)
    chooses the rule, not the first tier listed."""
    record = {"id": 9001, "company": "Quill & Ink", "tier": "gold"}
    tiers = (
        "Silver tier customers get 2 free returns a year. "
        "Gold tier customers get 5 free returns a year."
    )
    passages = [
        tool_passage(record, TODAY, "en"),
        passage("shop/tiers.md", "Tiers", "2031-01-01", tiers, crumbs="Tiers"),
    ]
    reasoner = OfflineReasoner(lambda: TermStats.from_texts([tiers, "Other things."]))
    question = "How many free returns does the tier of customer 9001 allow?"
    texts = [
        s.text for s in asyncio.run(reasoner.answer(question, [question], passages, [])).sentences
    ]
    assert any(t.startswith("Gold tier customers get 5") for t in texts), texts
    assert not any(t.startswith("Silver") for t in texts), texts
