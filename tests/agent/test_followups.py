"""A message read against the conversation (no models): a greeting or thanks around it asks nothing."""

from __future__ import annotations

from agent.followups import resolve, without_courtesies
from agent.turns import Message


def test_a_greeting_that_opens_a_message_is_not_part_of_the_question():
    assert without_courtesies("Hello there, I have some questions about ferry passes.") == (
        "I have some questions about ferry passes."
    )
    assert without_courtesies("hi all - when does the ferry leave?") == "when does the ferry leave?"
    assert without_courtesies("Good morning. How many crossings a day?") == (
        "How many crossings a day?"
    )
    assert without_courtesies("Привіт! Коли відходить пором?") == "Коли відходить пором?"


def test_a_word_that_only_begins_like_a_greeting_and_a_message_that_is_only_one_stay():
    assert without_courtesies("Hiking permits on the island: where?") == (
        "Hiking permits on the island: where?"
    )
    assert without_courtesies("Hello!") == "Hello!"
    assert without_courtesies("Hi5 passes for the ferry?") == "Hi5 passes for the ferry?"
    assert without_courtesies("Hi-fi on the ferry: allowed?") == "Hi-fi on the ferry: allowed?"


def test_a_follow_up_does_not_carry_the_greeting_of_the_message_before_it():
    earlier = [Message("user", "Hello, I wonder where I buy a ferry pass?")]
    resolved = resolve("and for bikes?", earlier)
    assert resolved.follow_up and "hello" not in resolved.question.lower(), resolved


def test_thanks_before_or_after_the_question_is_not_part_of_it():
    assert without_courtesies("When does the last ferry leave? Thanks!") == (
        "When does the last ferry leave?"
    )
    assert without_courtesies("Hi, thanks. And for bikes?") == "And for bikes?"
    assert without_courtesies("Danke! Und für Fahrräder?") == "Und für Fahrräder?"


def test_thanks_for_something_and_a_message_that_is_only_thanks_stay():
    assert without_courtesies("Thanks for the timetable. Is there a night ferry?") == (
        "Thanks for the timetable. Is there a night ferry?"
    )
    assert without_courtesies("Thank you!") == "Thank you!"


def test_a_follow_up_after_thanks_is_read_against_the_question_before_it():
    earlier = [Message("user", "How long does the ferry to the island take?")]
    resolved = resolve("Thanks! And the night ferry?", earlier)
    assert resolved.follow_up, resolved
    assert "ferry to the island" in resolved.question and "night" in resolved.question, resolved


def test_a_message_that_is_only_courtesies_is_smalltalk_and_one_with_a_question_is_not():
    import asyncio

    from agent.offline import OfflineReasoner
    from agent.terms import TermStats

    reasoner = OfflineReasoner(lambda: TermStats.from_texts(["a ferry timetable"]))

    def kind(text: str) -> str:
        return asyncio.run(reasoner.route(text, [])).kind

    for text in (
        "Hi!",
        "hello there",
        "Thanks a lot!",
        "thank you",
        "Hi, thanks.",
        "Danke!",
        "Привіт",
        "谢谢",
        "Who are you?",
        "help",
    ):
        assert kind(text) == "smalltalk", text
    for text in ("Hi, when does the ferry leave?", "Thanks for the timetable", "Helpdesk hours?"):
        assert kind(text) == "question", text
