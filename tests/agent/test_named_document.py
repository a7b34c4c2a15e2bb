"""A message that names a document by its whole title is answered from that document: made-up
documents, the real index and the offline reasoner (no LLM, no mocks)."""

from __future__ import annotations

import pytest

from tests.agent import made_up
from tests.agent.made_up import assistant_over, passage

# two clubs' rules; the harbour club's says more of the question's words than the lakeside's
LAKESIDE = """# Lakeside Rowing Club rules

## Joining

The membership fee is 25 crowns a year, paid in March.
Boats may be taken out from sunrise to sunset.
"""

HARBOUR = """# Harbour Rowing Club rules

## Fees

The yearly membership fee of the club is 40 crowns for every rowing member.
Members keep their own oars in the boathouse.
"""


@pytest.fixture(scope="module")
def assistant(tmp_path_factory, embedders):
    files = {"lakeside.md": LAKESIDE, "harbour.md": HARBOUR, "_access.yaml": 'acl: ["*"]\n'}
    with assistant_over(files, tmp_path_factory, embedders) as made_up:
        yield made_up


def ask(assistant, text: str):
    return made_up.ask(assistant, text, groups=("rowers",))


def test_a_question_that_names_a_document_is_answered_from_it(assistant):
    """Asked of the lakeside club's rules, the fee is the lakeside club's, though the harbour
    club's sentence says more of the question's words; asked without naming either, the
    harbour's sentence answers, as before."""
    named = ask(assistant, "Lakeside Rowing Club rules: what is the yearly membership fee?")
    assert named.status == "answered", named.text
    assert "25 crowns" in named.text and "40 crowns" not in named.text, named.text
    assert all(c.doc_id.endswith("lakeside.md") for c in named.citations), named.citations
    searched = [t for t in named.trace if t.step == "search"]
    assert "lakeside.md" in searched[0].reason, searched[0]
    unnamed = ask(assistant, "What is the yearly membership fee of the rowing club?")
    assert "40 crowns" in unnamed.text, unnamed.text


def titled(*titles: str):
    return [passage(f"doc-{k}.md", t, "2026-01-01", "Some text.") for k, t in enumerate(titles)]


def test_a_title_is_named_whole_with_its_words_together_and_the_longer_of_two_wins():
    from agent.document_requests import documents_titled

    found = titled(
        "Expense Policy",
        "Expense Policy for Contractors",
        "Travel Policy 2026",
        "Kiln upload in Varnholm",
    )
    # a title's words together, in any order and ending
    assert documents_titled("What do the expense policies say about taxis?", found) == ["doc-0.md"]
    for asked in (
        "Does the expense policy for contractors cover meals?",
        "Do the contractors' expense policies cover meals?",
    ):
        assert documents_titled(asked, found) == ["doc-1.md"], asked
    assert documents_titled("The Varnholm kiln upload: who may use it?", found) == ["doc-3.md"]
    # a title's words in part, or spread over a sentence, do not name it
    assert documents_titled("Is there a travel policy?", found) == []
    assert documents_titled("Who approves my travel?", found) == []
    assert documents_titled("Can my kiln be uploaded through the Varnholm site?", found) == []
