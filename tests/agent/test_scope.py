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
