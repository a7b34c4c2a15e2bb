"""What a passage's lines are as units: sentences, items, rows, and the headings over them."""

from __future__ import annotations

from agent.units import points_back, units_of
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


def _pairs(body: str) -> list[bool]:
    """For each sentence after the first, whether it points back at the one before it."""
    found = units_of(passage("kiln.md", "Kiln", "2026-01-01", body), 0)
    return [points_back(u, b) for b, u in zip(found, found[1:], strict=False)]


def test_a_sentence_that_opens_by_pointing_back_points_at_the_one_before():
    body = (
        "A cracked firing is fired again once for free. After that, the shelf rate applies. "
        "A firing that cracks twice is not fired again."
    )
    assert _pairs(body) == [True, False]  # "that" after the first words is no pointer


def test_in_chinese_only_the_opening_points_back():
    """Written without spaces, a sentence is no list of words: a pronoun in its middle ("它")
    points at nothing before it; one that opens it does."""
    body = "窑炉每周四装窑。它由工作室负责人操作。会员把作品放在它旁边的推车上。"
    assert _pairs(body) == [True, False]
