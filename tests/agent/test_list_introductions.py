"""A sentence that introduces a list of short items ("You'll need accurate copies of your:" over
"hull certificate") says with them what it alone does not, and is quoted with them: it is scored
with their words as its own. Made-up text."""

from __future__ import annotations

import pytest

from agent.extract import score_units
from agent.questions import asks
from agent.terms import TermStats
from ingest.languages import tokenize
from tests.agent import made_up
from tests.agent.made_up import assistant_over, passage

REGISTERING = (
    "You'll need accurate copies of your:\n\n"
    "- hull certificate\n"
    "- proof of mooring\n"
    "- skipper licence\n\n"
    "Registration costs 40 crowns a season.\n"
)


def _best(question: str, body: str):
    found = [passage("varn.md", "Boats on Lake Varn", "2026-01-01", body)]
    stats = TermStats.from_texts([p.text for p in found])
    return score_units(question, asks(question), found, stats, frozenset()).ranked[0]


def test_an_introduction_states_what_its_short_items_say():
    best = _best("Is proof of mooring required?", REGISTERING)
    assert best.unit.text == "You'll need accurate copies of your:"
    assert set(tokenize("proof of mooring", "en")) <= best.tokens and best.lexical == 1.0


def test_a_lone_item_number_is_no_item():
    """A step's number the splitter cut from its sentences ("1. It installs …") says nothing the
    introduction could be scored or quoted with."""
    body = (
        "The setup script does a number of things:\n\n1. It installs the runtime. Then it starts.\n"
    )
    intro = _best("What does the setup script do?", body)
    assert intro.unit.text.endswith("things:") and "1" not in intro.tokens, intro.tokens


def test_items_that_answer_alone_stay_their_own():
    """A long item is a unit of its own, scored alone; the introduction does not take its words."""
    body = REGISTERING.replace(
        "- proof of mooring", "- proof of a mooring at a harbour of the lake"
    )
    best = _best("Is proof of mooring required?", body)
    assert best.unit.text.startswith("proof of a mooring"), best.unit.text
    intro = _best("What copies do I need?", body)
    assert not set(tokenize("mooring", "en")) & intro.tokens, intro.tokens
    assert set(tokenize("hull certificate", "en")) <= intro.tokens


@pytest.fixture(scope="module")
def assistant(tmp_path_factory, embedders):
    files = {
        "varn.md": f"# Boats on Lake Varn\n\n## Registering a boat\n\n{REGISTERING}",
        "harbour.md": (
            "# Varn harbour\n\nThe harbour office opens at nine and closes at five. "
            "Visiting skippers report to the harbour office on arrival.\n"
        ),
        "_access.yaml": 'acl: ["*"]\n',
    }
    with assistant_over(files, tmp_path_factory, embedders) as made_up_assistant:
        yield made_up_assistant


@pytest.mark.parametrize(
    "question", ["Do I need a hull certificate?", "Is proof of mooring required?"]
)
def test_an_introduction_answers_by_its_items(assistant, question):
    a = made_up.ask(assistant, question)
    assert a.status == "answered", a.text
    assert a.text.startswith("You'll need accurate copies of your:") and "mooring" in a.text, a.text


def test_an_introduction_whose_items_do_not_say_it_is_refused(assistant):
    a = made_up.ask(assistant, "Do I need an insurance certificate?")
    assert a.status == "unknown", a.text


HARBOURS = "Skippers may renew a season permit at any of these harbours:\n\n" + "".join(
    f"- {name}\n"
    for name in ("Tern", "Skarv", "Ran", "Varnholm", "Osk", "Brenne", "Lille Holm", "Nordvik")
)


def test_of_a_long_list_the_items_the_question_names_are_quoted_with_their_introduction():
    from agent.extract import choose

    question = "Can I renew my season permit at Brenne?"
    found = [passage("permits.md", "Season permits", "2026-01-01", HARBOURS)]
    stats = TermStats.from_texts([p.text for p in found])
    wants = asks(question)
    extract = score_units(question, wants, found, stats, frozenset())
    quoted = [s.unit.text for s in choose(extract, wants, found)]
    assert quoted == ["Skippers may renew a season permit at any of these harbours:", "Brenne"]
