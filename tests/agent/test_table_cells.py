"""A table row as the question asks it: the row's name and the cell asked for, not every column.
Made-up documents, the real index and the offline reasoner."""

from __future__ import annotations

import pytest

from tests.agent import made_up
from tests.agent.made_up import assistant_over

BOATS = """# Boat hire on Lake Orvel

## Boats and rates

| Boat | Price per day | Seats | Fuel included |
|---|---|---|---|
| Skiff | 40 EUR | 2 | no |
| Cutter | 95 EUR | 6 | yes |
| Ketch | 180 EUR | 10 | yes |
"""

RULES = """# Lake Orvel harbour rules

## Revision history

| Revision | Effective | Changes | Drafted by |
|---|---|---|---|
| 3 | 2026-05-14 | Night mooring now needs a permit from the harbour master. | Ilse Varga |
"""


@pytest.fixture(scope="module")
def assistant(tmp_path_factory, embedders):
    files = {"boats.md": BOATS, "rules.md": RULES, "_access.yaml": 'acl: ["*"]\n'}
    with assistant_over(files, tmp_path_factory, embedders) as made_up:
        yield made_up


def ask(assistant, text: str) -> str:
    answer = made_up.ask(assistant, text)
    assert answer.status == "answered", answer.text
    return answer.text


def test_the_cell_asked_for_is_quoted_with_the_rows_name(assistant):
    text = ask(assistant, "How many seats does the Cutter have?")
    assert "Cutter" in text and "Seats: 6" in text, text
    assert "95 EUR" not in text and "Fuel" not in text, text


def test_a_row_asked_about_as_a_whole_is_quoted_whole(assistant):
    text = ask(assistant, "What are the price per day, the seats and the fuel of the Ketch?")
    assert "180 EUR" in text and "10" in text and "Fuel included: yes" in text, text


def test_the_cell_that_holds_the_kind_of_answer_asked_joins_the_cell_asked_for(assistant):
    """ "When … and what changed?": the changes are asked by name, the date by "when"."""
    text = ask(assistant, "When did the harbour rules change, and what was changed?")
    assert "2026-05-14" in text and "Night mooring" in text, text
    assert "Ilse Varga" not in text, text
