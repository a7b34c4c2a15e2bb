"""A message in a conversation is also searched within the document the conversation is about:
made-up documents, the real index and the offline reasoner (no LLM, no mocks)."""

from __future__ import annotations

import pytest

from agent.turns import Message, Turn
from tests.agent import made_up
from tests.agent.made_up import assistant_over

GLIMBERS = """---
acl: ["keepers"]
---

# Glimber keeping licence

## Who needs a licence

Anyone who keeps more than three glimbers on Varnholm needs a glimber keeping licence.

## After you apply

Expect the island office's answer 20 working days after you write to it.
"""

# other permits whose pages say more of the follow-up's words than the glimber page does
PERMIT = """# {thing} permit

## Applying for a {thing} permit

Every application for a {thing} permit is decided by the {office}; the decision is sent by post.
A {thing} permit is valid until 30 days after the decision.
"""
THINGS = [
    ("Mooring", "harbour master"),
    ("Fishing", "fisheries desk"),
    ("Market stall", "market warden"),
    ("Bonfire", "fire warden"),
    ("Sheep grazing", "commons board"),
    ("Boat hire", "harbour master"),
    ("Ferry freight", "ferry office"),
    ("Street music", "town clerk"),
    ("Well digging", "water board"),
    ("Kite flying", "airfield desk"),
    ("Beach hut", "shore board"),
    ("Horse riding", "bridleway office"),
    ("Drone", "airfield desk"),
    ("Camping", "commons board"),
    ("Peat cutting", "bog warden"),
    ("Oyster bed", "fisheries desk"),
    ("Signboard", "town clerk"),
    ("Scaffold", "works office"),
    ("Skip", "works office"),
    ("Parade", "town clerk"),
]


@pytest.fixture(scope="module")
def assistant(tmp_path_factory, embedders):
    files = {"glimbers.md": GLIMBERS, "_access.yaml": 'acl: ["*"]\n'}
    for thing, office in THINGS:
        files[f"{thing.lower().replace(' ', '-')}.md"] = PERMIT.format(thing=thing, office=office)
    with assistant_over(files, tmp_path_factory, embedders) as made_up:
        yield made_up


def ask(assistant, text: str, history: tuple[Message, ...] = (), groups=("keepers",)):
    return made_up.ask(assistant, text, groups, history)


def read(answer) -> set[str]:
    """The chunks the turn's searches brought to the answer step (graded kept or dropped)."""
    return {c.split(": ")[0] for t in answer.trace if t.step == "grade" for c in t.kept + t.dropped}


def test_a_message_in_a_conversation_is_also_searched_in_the_document_it_is_about(assistant):
    """Asked alone, "how many days until my application is decided?" brings twenty permit pages
    that say "application", "decided", "days" and "until", and not the glimber page; after a
    question about glimbers, the glimber page is searched too and its passage reaches the answer
    step, under the asker's access like every search."""
    first = "Do I need a licence to keep five glimbers?"
    said = ask(assistant, first)
    assert said.status == "answered" and "three glimbers" in said.text, said.text
    history = (Message("user", first), Message("assistant", said.text))
    question = "How many days until my application is decided?"
    alone = ask(assistant, question)
    assert not any("glimbers.md" in c for c in read(alone)), read(alone)
    followed = ask(assistant, question, history)
    assert any("glimbers.md" in c for c in read(followed)), read(followed)
    searched = [t for t in followed.trace if t.step == "search"]
    assert "glimbers.md" in searched[0].reason, searched[0]
    # the same conversation, continued by someone who may not read the glimber page: the
    # conversation's document is looked for under their access, so the page is not searched
    other = ask(assistant, question, history, groups=("staff",))
    assert not any("glimbers.md" in c for c in read(other)), read(other)
    assert all("glimbers" not in t.reason for t in other.trace), other.trace


def test_the_conversations_document_takes_every_other_place_among_the_passages_read():
    """Ten permit pages graded above both glimber passages would fill the eight places the
    answer step reads; the conversation's document takes every other place, each side best
    first."""
    from dataclasses import replace

    from agent.loop import Run, _selected
    from agent.reasoning import Grade
    from tests.agent.made_up import passage

    def page(doc: str, n: int = 0):
        p = passage(doc, doc, "2026-01-01", f"Text {n} of {doc}.")
        return replace(p, chunk_id=f"{doc}#{n}")

    permits = [page(f"permit-{k}.md") for k in range(10)]
    glimbers = [page("glimbers.md", 0), page("glimbers.md", 1)]
    run = Run(turn=Turn(user_id="u1", text="q", groups=("keepers",)), tools=None, progress=None)
    run.subquestions = ["q"]
    run.pool = {"q": {p.chunk_id: p for p in [*permits, *glimbers]}}
    grades = {p.chunk_id: Grade("relevant", 0.9 - k / 100) for k, p in enumerate(permits)}
    grades |= {"glimbers.md#0": Grade("relevant", 0.6), "glimbers.md#1": Grade("partial", 0.5)}
    run.grades = {"q": grades}
    assert "glimbers.md" not in {p.doc_id for p in _selected(run)}
    run.topic = "glimbers.md"
    assert [p.chunk_id for p in _selected(run)] == [
        "glimbers.md#0",
        "permit-0.md#0",
        "glimbers.md#1",
        *(f"permit-{k}.md#0" for k in range(1, 6)),
    ]


def test_the_answer_step_is_told_the_conversations_document(assistant, monkeypatch):
    """The loop gives the reasoner the document the conversation is about, found under the
    asker's access; outside a conversation, none."""
    told: list[str] = []
    reasoner = assistant.loop.reasoner
    answer = reasoner.answer

    async def spy(*args, **kwargs):
        told.append(kwargs["topic"])
        return await answer(*args, **kwargs)

    monkeypatch.setattr(reasoner, "answer", spy)
    first = "Do I need a licence to keep five glimbers?"
    said = ask(assistant, first)
    history = (Message("user", first), Message("assistant", said.text))
    ask(assistant, "How many days until my application is decided?", history)
    assert told and told[0] == "" and told[-1].endswith("glimbers.md"), told


def test_a_unit_of_the_conversations_document_is_weighed_up():
    """Two desks' return rules, the harbour's saying a little more of the question ("rented"):
    asked alone the harbour's leads; in a conversation about the library's bicycles, the
    library's rule does (``Calibration.conversation_bonus``)."""
    from agent.extract import score_units
    from agent.questions import asks
    from agent.terms import TermStats
    from tests.agent.made_up import passage

    def page(doc: str, title: str, text: str):
        return passage(doc, title, "2026-01-01", text)

    library = page(
        "library.md",
        "Bicycle lending",
        "A borrowed bicycle goes back to the front desk within two weeks.",
    )
    harbour = page(
        "harbour.md",
        "Kayak rental",
        "A rented kayak goes back to the harbour desk within three hours.",
    )
    others = [
        page("door.md", "Opening hours", "The front door opens at nine."),
        page("rooms.md", "Cleaning", "Rooms are cleaned daily."),
        page("parking.md", "Parking", "Bicycles are parked behind the hall."),
    ]
    found = [harbour, library, *others]
    stats = TermStats.from_texts([p.text for p in found])
    question = "When does a rented thing go back to the front desk?"

    def first(topic: str) -> str:
        ranked = score_units(
            question, asks(question), found, stats, frozenset(), topic=topic
        ).ranked
        return found[ranked[0].unit.passage].doc_id

    assert first("") == "harbour.md"
    assert first("library.md") == "library.md"
