"""The offline plan: what a message asks, apart from what it tells (no models)."""

from __future__ import annotations

import asyncio

from agent.offline import OfflineReasoner, _asked_and_answered, _documents_named
from agent.passages import Passage
from agent.questions import message_sentences
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


def test_a_typed_message_whose_sentences_begin_in_lower_case_is_read_sentence_by_sentence():
    """Chat is typed in lower case: "… was denied. can i appeal …?" tells the case and then asks;
    read as one sentence, the case's words were taken as the question's."""
    assert plan("the lighthouse tour was cancelled twice. can i get my ticket refunded?") == [
        "can i get my ticket refunded?"
    ]
    assert plan("my kayak was damaged at the pier. what should i do?") == [
        "my kayak was damaged at the pier. — what should i do?"
    ]


def test_message_sentences_keep_abbreviations_initials_and_dotted_words_whole():
    assert message_sentences("It costs approx. five crowns. and the ferry?") == [
        "It costs approx. five crowns.",
        "and the ferry?",
    ]
    assert message_sentences("Ask J. smith at the harbour.") == ["Ask J. smith at the harbour."]
    assert message_sentences("Do boats from the U.S. or Canada pay the fee?") == [
        "Do boats from the U.S. or Canada pay the fee?"
    ]
    assert message_sentences("how do i book? is it online?") == ["how do i book?", "is it online?"]


def test_a_message_that_asks_nothing_with_a_question_mark_is_searched_once_as_written():
    """Without a "?" the message is the question: it is not led by itself ("I mean the lake. Not
    the river. — I mean the lake. Not the river.")."""
    message = "I meant the lake near the town. Not that river."
    assert plan(message) == [message]


def test_a_question_the_message_answers_itself_is_asked_and_answered_apart_from_the_one_it_asks():
    """A rule's follow-up question with the asker's reply ("Do you keep glimbers? Yes.") is the
    asker's case, in any of the languages listed; "No." opening the next sentence is a reply,
    not the abbreviation; a question followed by another question is asked."""
    message = "Can a glimber leave Varnholm by ferry? Is it crated? No. Do you keep glimbers? Yes."
    assert _asked_and_answered(message) == ["Is it crated", "Do you keep glimbers"]
    assert not any("No. Do you" in p for p in plan(message)), plan(message)
    assert _asked_and_answered(
        "Darf ein Glimber mit der Fähre reisen? Ist er in einer Kiste? Nein."
    ) == ["Ist er in einer Kiste"]
    assert (
        _asked_and_answered("Can a glimber leave Varnholm by ferry? Who approves the crate?") == []
    )
    assert _asked_and_answered("Is there a fee? Nothing was said.") == []
    # written without spaces, a reply ends with the ideographic full stop
    assert _asked_and_answered("我可以带格林伯上渡轮吗？它在箱子里吗？是的。") == ["它在箱子里吗"]
    assert _asked_and_answered("フェリーに乗れますか？箱に入っていますか？はい。") == [
        "箱に入っていますか"
    ]


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


def answer(question: str, found: list[Passage]) -> tuple[list[str], list[str]]:
    """The quotes and the parts left unanswered, from the rules alone (no models)."""
    reasoner = OfflineReasoner(lambda: TermStats.from_texts([p.text for p in found]))
    parts = asyncio.run(reasoner.plan(question))
    draft = asyncio.run(reasoner.answer(question, parts, found, []))
    return [s.text for s in draft.sentences], draft.missing


def test_a_name_of_the_askers_situation_that_no_passage_states_is_not_asked_of_them():
    """ "Our boats sail from Varnholm." sets up the asker's case; the rule found is the same for
    every port and never names it, so the name tells nothing apart and must not count against
    the rule. Where a passage does state the name (a row per port), it still chooses the row."""
    rule = passage(
        "checks", "Hull checks", "2026-01-01", "Hull checks must be repeated every two years."
    )
    question = "Our boats sail from Varnholm and Ostrava. How often must hull checks be repeated?"
    assert plan(question) == ["How often must hull checks be repeated (Varnholm, Ostrava)?"]
    quotes, missing = answer(question, [rule])
    assert quotes == ["Hull checks must be repeated every two years."] and missing == []
    # a name inside another word is not stated: "Vel" is not in "level"
    levelled = passage(
        "checks",
        "Hull checks",
        "2026-01-01",
        "Hull checks must be repeated every two years at any level.",
    )
    quotes, missing = answer(
        "Our boats sail from Vel. How often must hull checks be repeated?", [levelled]
    )
    assert quotes == ["Hull checks must be repeated every two years at any level."]

    per_port = passage(
        "ports",
        "Hull checks by port",
        "2026-01-01",
        "In Varnholm hull checks must be repeated every year.\n\n"
        "In Kessel hull checks must be repeated every three years.",
    )
    quotes, _ = answer(
        "Our boats sail from Varnholm. How often must hull checks be repeated?", [per_port]
    )
    assert quotes[0] == "In Varnholm hull checks must be repeated every year."
