"""What the conversation answers by itself: the ticket filed earlier in the same chat."""

from __future__ import annotations

import pytest

from agent.recall import filed, filed_text
from agent.turns import Message

HISTORY = (
    Message("user", "Please open a ticket: the kiln room door sticks"),
    Message("assistant", "I can open this ticket for you: the kiln room door sticks."),
    Message("assistant", filed_text("DESK-7", "the kiln room door sticks")),
    Message("user", "When does the glaze shelf get restocked?"),
    Message("assistant", "Monthly. [1]"),
)


@pytest.mark.parametrize(
    "message",
    [
        "What was the ticket number?",
        "what's my ticket id",
        "Which ticket did you open?",
        "ticket reference?",
        "What is the number of that ticket?",
    ],
)
def test_asking_for_the_filed_tickets_number_reads_it_back(message):
    assert filed(message, HISTORY) == ("DESK-7", "the kiln room door sticks")


@pytest.mark.parametrize(
    "message",
    [
        "Please open a new ticket about the kiln",  # a new one, not the old one
        "How do I file a ticket?",
        "What number do I call for the studio?",
    ],
)
def test_other_questions_are_left_to_the_loop(message):
    assert filed(message, HISTORY) is None


def test_with_no_ticket_filed_in_this_chat_there_is_nothing_to_read_back():
    assert filed("What was the ticket number?", HISTORY[:2]) is None
    # only Footnote's own words count: the asker saying it does not file a ticket
    assert filed("What was the ticket number?", [Message("user", "Filed DESK-9: x")]) is None


def test_the_latest_ticket_is_the_one_read_back():
    later = (*HISTORY, Message("assistant", filed_text("DESK-8", "the wheel wobbles")))
    assert filed("what was the ticket number?", later) == ("DESK-8", "the wheel wobbles")
