"""Values in questions and in rules: the amount a question is about, the range a row covers."""

from __future__ import annotations

import pytest

from agent.questions import asks, required_terms
from agent.values import quantities, ranges, spans


@pytest.mark.parametrize(
    "text, value, unit",
    [
        ("a vendor we spend over 50k a year with", 50_000, ""),  # "a year" counts, it is no unit
        ("a 2-hour flight", 2, "hour"),
        ("a 700 EUR claim", 700, "eur"),
        ("98.7% uptime", 98.7, "%"),
        ("12,000 EUR net", 12_000, "eur"),
    ],
)
def test_the_value_a_text_names(text, value, unit):
    (q,) = quantities(text)
    assert (q.value, q.unit) == (value, unit)


def test_over_a_value_lies_inside_the_row_that_starts_above_it():
    q = asks("How long do we take to pay a vendor we spend over 50k a year with?").quantity
    (row,) = ranges("Large vendors (over 50,000 EUR a year) · Payment term: 45 days")
    assert row.contains(q)
    under = asks("What if we spend under 10k a year with them?").quantity
    assert not row.contains(under)


def test_a_percentage_is_a_value_not_an_identifier_but_a_version_is():
    identifiers, _ = required_terms("A customer had 98.7% uptime. What credit do they get?", "en")
    assert identifiers == frozenset()
    identifiers, _ = required_terms("What did release 2.3.1 fix?", "en")
    assert identifiers == {"2.3.1"}


def test_the_part_of_a_period_a_text_speaks_of():
    assert spans("During probation the notice period is 2 weeks.") == [("during", "probation")]
    assert spans("What applies once the probation is over?") == [("after", "probation")]
    assert spans("Book the hotel before the trip.") == [("before", "trip")]
    assert spans("The notice period is one month.") == []
