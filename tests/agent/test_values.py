"""Values in questions and in rules: the amount a question is about, the range a row covers."""

from __future__ import annotations

import pytest

from agent.questions import asks, required_terms
from agent.values import dates, durations, numbers_said, quantities, ranges


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
    assert (q.value, q.measure) == (value, unit)


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


def test_a_version_written_another_way_is_the_same_identifier():
    """ "release 2_3_1" named no identifier, so the notes under the 2.3.1 heading earned nothing
    over a sentence elsewhere that mentions the hotfix."""
    for spelled in ("2_3_1", "v2.3.1", "V2.3.1"):
        identifiers, _ = required_terms(f"What did release {spelled} fix?", "en")
        assert identifiers == {"2.3.1"}, spelled


@pytest.mark.parametrize(
    "text, days",
    [
        ("two weeks", 14),
        ("2 weeks", 14),
        ("zwei Wochen", 14),
        ("два тижні", 14),
        ("一个工作日", 1),
        ("三个月", 91.32),
        ("within a week", 7),
    ],
)
def test_a_span_of_time_is_read_however_its_number_is_written(text, days):
    (d,) = durations(text)
    assert d.days == pytest.approx(days)


def test_dates_and_floors_are_no_spans_of_time():
    assert durations("5月1日至5月5日") == [] and durations("15 楼前台") == []
    assert durations("2026 年法定节假日") == []


def test_an_ordinal_and_a_number_in_words_say_the_same_number_as_the_figure():
    def said(text: str) -> set[tuple[float, str]]:
        return {(q.value, q.measure) for q in numbers_said(text)}

    assert (5, "year") in said("from 1 January after your fifth full year")
    assert (5, "year") in said("after five years with the company")
    assert (5, "year") in said("from the 5th year")
    assert (2, "week") in said("two weeks") and (2, "week") in said("2 weeks")
    assert (5, "year") not in said("based on a five-day week")


def test_may_the_verb_is_no_date():
    assert dates("Up to 10 may be carried over.", 2026) == []
    assert dates("Paid on 10 May.", 2026)[0].month == 5


def test_every_part_of_a_compound_question_keeps_the_amount_it_is_about():
    """The amount is said once, before the questions; each part is a rule for that amount and
    must choose the row whose range holds it, not only the first part."""
    import asyncio

    from agent.offline import OfflineReasoner

    reasoner = OfflineReasoner(stats=lambda: None)  # type: ignore[arg-type,return-value]
    parts = asyncio.run(
        reasoner.plan(
            "We want a consultant to run a workshop for roughly 8,500 EUR. Who signs the "
            "order, and how many offers must I gather?"
        )
    )
    assert len(parts) == 2, parts
    for part in parts:
        q = asks(part).quantity
        assert q is not None and (q.value, q.measure) == (8_500, "eur"), part
    # a part with an amount of its own keeps it
    own = asyncio.run(
        reasoner.plan("Who approves a 700 EUR claim, and who approves a 3,000 EUR one?")
    )
    assert [asks(p).quantity.value for p in own] == [700, 3_000], own  # type: ignore[union-attr]


def test_a_second_question_may_open_with_a_preposition_before_its_question_word():
    import asyncio

    from agent.offline import OfflineReasoner

    reasoner = OfflineReasoner(stats=lambda: None)  # type: ignore[arg-type,return-value]
    parts = asyncio.run(
        reasoner.plan("Who signs a hotel booking, and up to what amount is a night covered?")
    )
    assert parts == ["Who signs a hotel booking?", "up to what amount is a night covered?"]


@pytest.mark.parametrize(
    "text, inside, outside",
    [
        ("in months 13 to 24 50%", 18, 25),  # the unit before the numbers
        ("within the first 12 months 100%", 11, 13),
        ("after 24 months nothing", 30, 20),  # past a span of time
    ],
)
def test_a_schedule_of_months_is_a_range_of_months(text, inside, outside):
    (r,) = ranges(text)
    (q_in,), (q_out,) = quantities(f"{inside} months"), quantities(f"{outside} months")
    assert r.contains(q_in) and not r.contains(q_out)


def test_a_table_header_names_the_currency_of_its_bare_figures():
    from agent.extract import _ranges
    from agent.units import Unit

    row = "Order value (EUR, net): 10,001 - 50,000 · Approved by: Finance"
    unit = Unit(row, 0, 0, "row", cells={"Order value (EUR, net)": "10,001 - 50,000"})
    (r,) = _ranges(unit, "en")
    assert r.contains(quantities("12,000 EUR")[0])
    assert not r.contains(quantities("60,000 EUR")[0])


@pytest.mark.parametrize(
    "text, value, measure",
    [
        ("a lunch allowance of £12.50", 12.5, "gbp"),  # a sign of one currency: its code
        ("₹ 500 a day for meals", 500, "inr"),
        ("a deposit of ¥3000", 3000, "¥"),  # a sign of several currencies stands for itself
        ("CHF 1'200 per month", 1200, "chf"),  # an ISO code before its number; Swiss thousands
        ("up to 1’200 SEK", 1200, "sek"),
        ("the 2,500 NOK grant", 2500, "nok"),
    ],
)
def test_any_currency_sign_or_iso_code_beside_a_number_is_money(text, value, measure):
    [q] = quantities(text)
    assert (q.value, q.measure, q.money) == (value, measure, True)


def test_a_code_that_is_also_a_word_is_money_only_after_its_number():
    assert [q.measure for q in quantities("TOP 10 reasons to upgrade to PHP 8")] == ["", ""]
    assert [q.measure for q in quantities("a fee of 300 ALL")] == ["all"]
    assert quantities("valid at all 12 sites")[0].measure == ""  # a code is read in capitals only


def test_a_sign_is_the_unit_of_the_number_it_touches():
    found = quantities("a €40 bonus and $50 more")
    assert [(q.value, q.measure) for q in found] == [(40, "eur"), (50, "usd")]


def test_the_currency_signs_are_unicodes_whole_category():
    import sys
    import unicodedata

    from agent.values import CURRENCY_SIGNS

    signs = (chr(c) for c in range(sys.maxunicode + 1))
    assert "".join(c for c in signs if unicodedata.category(c) == "Sc") == CURRENCY_SIGNS


@pytest.mark.parametrize(
    "text, days", [("sixteen weeks of leave", 112), ("twenty-five days a year", 25)]
)
def test_english_counts_in_words_are_read_however_large(text, days):
    [q] = quantities(text)
    assert q.days == days


def test_a_range_and_a_table_header_in_any_currency():
    from agent.values import measure_named

    [r] = ranges("from CHF 1'000 to CHF 2'000")
    assert (r.low, r.high, r.measure) == (1000, 2000, "chf")
    assert measure_named("Order value (GBP, net)") == "gbp"
    assert measure_named("Cost in ₹") == "inr"
    assert measure_named("Sites (ALL)") == ""
