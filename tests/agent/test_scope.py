"""Whose rule applies: documents written for a group, ingested for real, meet askers through
their directory groups. The groups and rules here are made up; no word list names "kayak"."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from agent.passages import Passage
from agent.scope import applicable, audiences_of, told_apart
from ingest.edge_index import EdgeIndex
from ingest.index import vector_dims
from ingest.pipeline import Ingester
from ingest.settings import IngestSettings
from ingest.sparse import BM25Encoder

RULES = {
    "employees.md": ("Kayak Shed Rules for Employees", "Employees borrow a kayak for three days."),
    "interns.md": ("Kayak Shed Rules for Interns", "Interns borrow a kayak for one day."),
    "contractors.md": ("Kayak Shed Rules for Contractors", "Contractors bring their own kayak."),
    "hours.md": ("Kayak Shed Opening Hours", "The shed opens at seven."),
}


class SeededEmbedder:
    """Vectors from a hash of the text: the index needs vectors, this test needs no model."""

    name, dim = "seeded", 8

    def embed(self, texts, kind="document"):
        rows = [
            np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).normal(
                size=self.dim
            )
            for t in texts
        ]
        out = np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def passages(tmp_path_factory: pytest.TempPathFactory) -> list[Passage]:
    """Every chunk of the four rules, as search gives them back."""
    root = tmp_path_factory.mktemp("kayaks")
    for name, (title, body) in RULES.items():
        (root / name).write_text(f"---\nacl: ['*']\n---\n# {title}\n\n{body}\n")
    embedders = [SeededEmbedder()]
    index = EdgeIndex(root.parent / "index", vector_dims(embedders))
    try:
        Ingester(index, embedders, BM25Encoder(), IngestSettings(), ["admins"]).ingest(root)
        return [
            Passage.from_payload(chunk)
            for doc_id in sorted(index.documents())
            for chunk in index.chunks(doc_id, ["admins"])
        ]
    finally:
        index.close()


def rules_for(passages: list[Passage], *readers: tuple[str, ...], question: str = "") -> set[str]:
    return {p.title for p in applicable(passages, readers, question)}


def test_an_intern_gets_the_interns_rule_and_the_staff_rules(passages):
    assert rules_for(passages, ("interns",)) == {
        "Kayak Shed Rules for Interns",
        "Kayak Shed Rules for Employees",  # interns are staff: where no interns' rule says more
        "Kayak Shed Opening Hours",
    }
    # the interns' rule is the intern's own: a DM gets it unlabelled, one rule
    written_for = {a for p in passages for a in p.audience}
    assert told_apart([audiences_of(["intern"], written_for)]) == {"interns"}


def test_nobody_outside_the_group_gets_its_rule(passages):
    """Before audiences were an open set the interns' rule was read as everyone's."""
    assert rules_for(passages, ("engineering",)) == {
        "Kayak Shed Rules for Employees",
        "Kayak Shed Opening Hours",
    }
    assert rules_for(passages, ("contractors",)) == {
        "Kayak Shed Rules for Contractors",
        "Kayak Shed Opening Hours",
    }


def test_a_question_that_names_a_group_brings_its_rule(passages):
    assert "Kayak Shed Rules for Interns" in rules_for(
        passages, ("engineering",), question="How long can interns keep a kayak?"
    )


def test_a_channel_tells_each_members_own_rule_apart(passages):
    written_for = {a for p in passages for a in p.audience}
    intern, engineer = audiences_of(["interns"], written_for), audiences_of(["engineering"])
    assert told_apart([intern, engineer]) == {"interns", "employees"}
    assert rules_for(passages, ("interns",), ("contractors",)) == set(
        title for title, _ in RULES.values()
    )


def test_an_asker_of_no_known_group_is_held_to_no_audience():
    """Someone the directory knows nothing of (a public corpus's reader, a CLI user with no
    groups) gets the rule that answers, whoever it was written for: no audience's rule is
    marked down for them, as one for another group is for an asker whose groups are known."""
    from dataclasses import replace

    from agent.extract import score_units
    from agent.questions import asks
    from agent.terms import TermStats
    from tests.agent.test_conflicts import passage

    rule = replace(
        passage(
            "guides/deposits.md",
            "Deposits for landlords",
            "2026-01-10",
            "A tenancy deposit must be protected within 30 days of receiving it.",
        ),
        audience=("landlords",),
    )
    other = passage(
        "guides/moving.md", "Moving house", "2026-01-10", "Tell the council when you move house."
    )
    question = "How many days do I have to protect a tenancy deposit?"
    stats = TermStats.from_texts([rule.text, other.text])

    def best(asker: frozenset[str], written_for: tuple[str, ...] = ("landlords",)):
        scoped = replace(rule, audience=written_for)
        top = score_units(question, asks(question), [scoped, other], stats, asker).ranked[0]
        return top.unit.text, top.score

    unknown, for_everyone = best(frozenset()), best(frozenset(), written_for=())
    assert unknown == for_everyone and "30 days" in unknown[0]
    assert best(frozenset({"tenants"}))[1] < unknown[1]  # a known other group's rule gives way


def test_someone_given_no_group_at_all_has_every_rule(passages):
    """A reader of no directory (a public corpus's) is no one's staff: no rule gives way for
    them. A person of the directory with no group but their own id is staff, as before."""
    assert audiences_of([]) == frozenset()
    assert rules_for(passages, ()) == {title for title, _ in RULES.values()}
    assert audiences_of(["user:ana@example.org"]) == {"employees"}
    assert rules_for(passages, ("user:ana@example.org",)) == {
        "Kayak Shed Rules for Employees",
        "Kayak Shed Opening Hours",
    }


DEPOSITS = """---
audience: landlords
---
# Deposit rules for landlords

A tenancy deposit must be protected in a government scheme within 30 days of receiving it.
"""

MOVING = """# Moving house

When you move out, your tenancy deposit is returned within 10 days of the tenancy ending.
Tell the council about your new address.
"""


def test_a_rule_for_landlords_answers_a_reader_of_no_known_group(tmp_path_factory, embedders):
    """The whole loop: the landlords' rule neither gives way to the page for everyone nor is
    marked down as someone else's when the asker's groups are unknown."""
    import asyncio

    from agent.turns import Turn
    from tests.agent.made_up import assistant_over

    files = {"deposits.md": DEPOSITS, "moving.md": MOVING, "_access.yaml": 'acl: ["*"]\n'}
    with assistant_over(files, tmp_path_factory, embedders) as assistant:
        question = "How long do I have to protect a tenancy deposit?"
        a = asyncio.run(assistant.answer(Turn(user_id="reader", text=question, groups=())))
    assert a.status == "answered" and "30 days" in a.text, (a.status, a.text)


MONITORS_FOR_STAFF = """# Desk equipment

Staff may order one external monitor for their desk.
"""

MONITORS_FOR_ENGINEERING = """---
audience: engineering
---
# Desk equipment for engineering

Engineers may order two external monitors for their desk.
"""


def test_a_group_a_document_is_written_for_is_the_askers_audience(tmp_path_factory, embedders):
    """The whole loop: "engineering", no audience the lexicon sorts people by, is the asker's
    because a passage at hand is written for it, so that rule is theirs and does not give way to
    the one for everyone (the passages were chosen without it)."""
    import asyncio

    from agent.turns import Turn
    from tests.agent.made_up import assistant_over

    files = {
        "desk.md": MONITORS_FOR_STAFF,
        "desk-engineering.md": MONITORS_FOR_ENGINEERING,
        "_access.yaml": 'acl: ["*"]\n',
    }
    with assistant_over(files, tmp_path_factory, embedders) as assistant:
        turn = Turn(
            user_id="eng", text="How many external monitors may I order?", groups=("engineering",)
        )
        a = asyncio.run(assistant.answer(turn))
    assert a.status == "answered" and "two external monitors" in a.text, (a.status, a.text)


def test_a_channel_of_a_group_the_catalogue_has_no_word_for_labels_it_by_its_name(passages):
    """Audiences are an open set: in a channel of interns and staff, each rule is labelled with
    the group as the directory names it ("For interns:"), not only the two groups Footnote's
    own messages translate."""
    import asyncio

    from agent.offline import OfflineReasoner
    from agent.terms import TermStats

    question = "For how long can I borrow a kayak?"
    rules = [p for p in passages if "borrow" in p.text]
    reasoner = OfflineReasoner(lambda: TermStats.from_texts([p.text for p in passages]))
    draft = asyncio.run(
        reasoner.answer(question, [question], rules, [], asker=frozenset({"interns", "employees"}))
    )
    said = [s.text for s in draft.sentences]
    assert "For interns: Interns borrow a kayak for one day." in said, said
    assert "For employees: Employees borrow a kayak for three days." in said, said
