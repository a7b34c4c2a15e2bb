"""A message read against the conversation (no models): the greeting it opens with asks nothing."""

from __future__ import annotations

from agent.followups import resolve, without_greeting
from agent.turns import Message


def test_a_greeting_that_opens_a_message_is_not_part_of_the_question():
    assert without_greeting("Hello there, I have some questions about ferry passes.") == (
        "I have some questions about ferry passes."
    )
    assert without_greeting("hi all - when does the ferry leave?") == "when does the ferry leave?"
    assert without_greeting("Good morning. How many crossings a day?") == (
        "How many crossings a day?"
    )
    assert without_greeting("Привіт! Коли відходить пором?") == "Коли відходить пором?"


def test_a_word_that_only_begins_like_a_greeting_and_a_message_that_is_only_one_stay():
    assert without_greeting("Hiking permits on the island: where?") == (
        "Hiking permits on the island: where?"
    )
    assert without_greeting("Hello!") == "Hello!"
    assert without_greeting("Hi5 passes for the ferry?") == "Hi5 passes for the ferry?"


def test_a_follow_up_does_not_carry_the_greeting_of_the_message_before_it():
    earlier = [Message("user", "Hello, I wonder where I buy a ferry pass?")]
    resolved = resolve("and for bikes?", earlier)
    assert resolved.follow_up and "hello" not in resolved.question.lower(), resolved
