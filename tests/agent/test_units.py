"""What a passage's lines are as units: sentences, items, rows, and the headings over them."""

from __future__ import annotations

from agent.units import units_of
from tests.agent.made_up import passage


def _kinds(body: str) -> list[tuple[str, str]]:
    p = passage("guide.md", "Harbour guide", "2026-01-01", body)
    return [(u.kind, u.text) for u in units_of(p, 0)]


def test_a_numbered_section_heading_joined_into_a_passage_is_a_heading_not_an_answer():
    body = (
        "This guide is for everyone who visits the harbour office.\n\n"
        "2. Getting there\n"
        "The office is at Quay Street 12, on the second floor.\n\n"
        "3. Opening hours\n"
        "It opens at eight and closes at six."
    )
    kinds = _kinds(body)
    assert ("label", "2. Getting there") in kinds
    assert ("label", "3. Opening hours") in kinds
    assert not any(k == "item" for k, _ in kinds)
    address = next(
        u for u in units_of(passage("g.md", "G", "2026-01-01", body), 0) if "Quay" in u.text
    )
    assert address.label == "2. Getting there"  # the heading says what the line under it is about


def test_a_numbered_list_stays_a_list():
    body = "To book the boat:\n\n1. Fill in the request form\n2. Send it to the harbour master\n3. Wait for the reply"
    kinds = _kinds(body)
    assert all(k == "item" for k, _ in kinds[1:])
    assert ("item", "Wait for the reply") in kinds
