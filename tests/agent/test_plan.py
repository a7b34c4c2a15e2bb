"""The offline plan: what a message asks, apart from what it tells (no models)."""

from __future__ import annotations

import asyncio

from agent.offline import OfflineReasoner, _documents_named
from agent.passages import Passage
from agent.terms import TermStats
from tests.agent.made_up import passage


def plan(question: str) -> list[str]:
    reasoner = OfflineReasoner(lambda: TermStats.from_texts(["a policy"]))
    return asyncio.run(reasoner.plan(question))


def test_a_statement_before_one_question_is_context_whose_names_and_amount_it_keeps():
    """ "We want a designer to build a website for about 12,000 EUR net." tells the case; only
    the question is searched for, with the amount that chooses the row (the designer and the
    website are words no rule about approvals uses)."""
    got = plan(
        "We want a designer to build a website for about 12,000 EUR net. Who needs to approve the PO?"
    )
    assert got == ["Who needs to approve the PO (12,000 EUR)?"]
    assert plan("I fly to Shanghai next week. How much per diem do I get per day?") == [
        "How much per diem do I get per day (Shanghai)?"
    ]


def test_a_question_that_needs_its_context_is_led_by_it():
    assert plan("My VPN disconnects every hour. What should I do?") == [
        "My VPN disconnects every hour. — What should I do?"
    ]
    assert plan("How many vacation days do I get?") == ["How many vacation days do I get?"]


def test_a_title_the_question_names_more_of_is_the_one_named():
    """ "the zorblat policy for contractors" names that document, not its sibling for employees,
    whose words the question shares are all the contractors' title's too; a title named by a
    word of its own (travel) and two titles named alike (the zorblat policies) all stay."""

    def doc(doc_id: str, title: str) -> Passage:
        return passage(doc_id, title, "2026-01-01", "This policy applies to someone.")

    found = [
        doc("employees", "Zorblat Policy for Employees"),
        doc("contractors", "Zorblat Policy for Contractors"),
        doc("travel", "Business Travel Policy"),
    ]
    assert _documents_named("Summarize the zorblat policy for contractors", found) == [
        "contractors"
    ]
    assert _documents_named("Compare the zorblat policies", found) == ["employees", "contractors"]
    assert _documents_named(
        "Compare the travel policy and the zorblat policy for contractors", found
    ) == ["contractors", "travel"]
