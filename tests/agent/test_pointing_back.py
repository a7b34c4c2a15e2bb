"""A sentence that opens by pointing back ("After that, …") is quoted with the one it points at,
and its citation opens at the sentence that answers. Made-up documents, the real index and the
offline reasoner."""

from __future__ import annotations

import pytest

from tests.agent.made_up import ask, assistant_over

KILN = """# Kiln rules

## Failed firings

Members book the kiln by the shelf. A firing that cracks is fired again once at no charge when
the glaze sheet was followed. After that, a member who wants another firing pays the shelf rate.

## Glazes

Glazes are kept in the back room and mixed by the studio lead.
"""


@pytest.fixture(scope="module")
def assistant(tmp_path_factory, embedders):
    files = {"kiln.md": KILN, "_access.yaml": 'acl: ["*"]\n'}
    with assistant_over(files, tmp_path_factory, embedders) as made_up:
        yield made_up


def test_the_sentence_pointed_at_is_quoted_first_and_the_answer_is_cited(assistant):
    a = ask(assistant, "Does a member pay for another firing?")
    assert a.status == "answered", a.text
    before = a.text.index("fired again once at no charge")
    assert before < a.text.index("After that, a member who wants another firing"), a.text
    assert a.citations[0].quote.startswith("After that, a member"), a.citations[0].quote
