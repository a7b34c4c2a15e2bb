"""Lines of a plain-text log belong to their record: one case, not a rule (no models)."""

from __future__ import annotations

from agent.extract import score_units
from agent.questions import asks
from agent.terms import TermStats
from tests.agent.test_conflicts import EVERYONE, passage

GUIDE = passage(
    "it/vpn.md",
    "VPN Guide",
    "2026-01-10",
    "If the VPN disconnects every hour, update the client to version 1.4.",
)
LOG = passage(
    "support/log.txt",
    "Case Log",
    "2026-10-06",
    "CASE-21 | 2026-09-02 | 3857 (Volta Mobility SAS) | Camille Laurent | P3 | resolved\n"
    "Summary: The VPN disconnects every hour for agents of the customer.\n"
    "Notes: The customer's VPN changed its public IP every hour.",
)


def best(question: str) -> str:
    passages = [LOG, GUIDE]  # on a tie, the log would come first
    stats = TermStats.from_texts([p.text for p in passages])
    return score_units(question, asks(question), passages, stats, EVERYONE).ranked[0].unit.text


def test_a_rule_beats_a_case_that_shares_more_of_the_questions_words():
    assert best("What should I do when the VPN disconnects every hour?").startswith("If the VPN")


def test_a_case_is_the_answer_when_the_question_names_it_or_its_parties():
    assert best("Why did the VPN disconnect every hour at Volta Mobility?").startswith("Summary:")
    assert best("What was CASE-21 about?").startswith(("Summary:", "CASE-21"))


def test_a_case_that_says_the_question_word_for_word_still_gives_way_to_the_guide():
    """The log's summary repeats every word of the question; the guide's step says what to do
    under a heading that names the problem. A case costs enough to leave the step first."""
    guide = passage(
        "it/vpn.md",
        "VPN Guide",
        "2026-01-10",
        "Update the VPN client to version 1.4.",
        crumbs="VPN Guide > 6.1 The VPN drops every hour",
    )
    passages = [LOG, guide]
    stats = TermStats.from_texts([p.text for p in passages])
    question = "What should I do when the VPN disconnects every hour?"
    ranked = score_units(question, asks(question), passages, stats, EVERYONE).ranked
    assert ranked[0].unit.text.startswith("Update the VPN client"), ranked[0].unit.text
