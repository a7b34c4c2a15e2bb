"""What the asker says besides the question, over rules written to the reader: "he", "his",
"she" and "her" of a situation told in the third person ("my brother … his licence"), and the
"yes" that answers a rule's follow-up question, are no words of the question that no document
uses. Made-up documents, the real index and the offline reasoner."""

from __future__ import annotations

import pytest

from tests.agent.made_up import ask, assistant_over

# written to the reader ("you"), as rules usually are: no he, his, she or her
LICENCE = """# Glimber keeping licence

## Renewing a licence

You can renew a glimber keeping licence at the island office up to 30 days before it ends.

## Moving glimbers

Glimbers may leave Varnholm only in a closed crate approved by the island office.
"""

FERRY = """# Ferry timetable

## Winter

The winter ferry to Varnholm leaves the mainland at 7:15 and at 16:40.
"""


@pytest.fixture(scope="module")
def assistant(tmp_path_factory, embedders):
    files = {"licence.md": LICENCE, "ferry.md": FERRY, "_access.yaml": 'acl: ["*"]\n'}
    with assistant_over(files, tmp_path_factory, embedders) as made_up:
        yield made_up


@pytest.mark.parametrize(
    "question",
    [
        "My brother keeps glimbers and his licence ends soon. Can he renew his licence?",
        "My sister is abroad and her licence ends soon. Can she renew her licence herself?",
    ],
)
def test_a_question_about_someone_else_is_answered_by_the_rule_written_to_you(assistant, question):
    a = ask(assistant, question)
    assert a.status == "answered" and "30 days" in a.text, a.text


def test_the_askers_yes_is_no_word_of_the_question(assistant):
    """The asker's answer to a rule's follow-up question, written into the message: no document
    says "yes", and it is not a word of what is asked."""
    a = ask(assistant, "Can I renew my licence? Do you keep glimbers? Yes.")
    assert a.status == "answered" and "30 days" in a.text, (a.status, a.text)


def test_follow_up_questions_the_asker_answered_are_not_reported_as_unanswered(assistant):
    """ "Is your licence still valid? Yes." answers a question the rule would ask: it is the
    asker's case, and the reply is whole, not "partial" with "I found nothing on" about it."""
    a = ask(
        assistant,
        "Can I renew my glimber keeping licence? Do you keep glimbers? Yes. "
        "Is your licence still valid? Yes.",
    )
    assert a.status == "answered" and "30 days" in a.text, (a.status, a.text)


def test_a_follow_up_the_asker_answered_answers_the_question_it_conditions(assistant):
    """When the rule found is the one the asker's answered follow-up question came from, the
    question before it is answered by that rule, not reported as unanswered."""
    a = ask(
        assistant,
        "I booked the morning boat for my pet. Will that be fine? "
        "Is your glimber in a closed crate approved by the island office? Yes.",
    )
    assert a.status == "answered" and "closed crate" in a.text, (a.status, a.text)
    later = ask(
        assistant,
        "I booked the morning boat for my pet. Will that be fine? "
        "Is your glimber in a closed crate approved by the island office? Yes. "
        "Which vaccinations does a glimber need?",
    )
    assert later.status == "partial" and "vaccinations" in later.text, later.text


def test_a_long_situation_does_not_outweigh_the_short_question_it_leads(assistant):
    """A message that tells its case at length and then asks briefly: the situation's words
    ("winter ferry", "mainland", "7:15") are found in another document, and weighed as much as
    the question's own they chose the timetable. The question ("renew my licence") says what is
    asked; the situation weighs no more than it."""
    a = ask(
        assistant,
        "Every winter morning I take the ferry from the mainland at 7:15 and come back at "
        "16:40 to feed my glimbers. Can I renew my licence?",
    )
    assert a.status == "answered" and "30 days" in a.text, (a.status, a.text)
    assert "16:40" not in a.text, a.text
