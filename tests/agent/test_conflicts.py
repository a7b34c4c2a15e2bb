"""When two sources disagree: only the same thing, in the same scope, by meaning (no models)."""

from __future__ import annotations

from agent.extract import conflict, score_units
from agent.passages import Passage
from agent.questions import asks
from agent.terms import TermStats
from tests.agent.made_up import passage

EVERYONE = frozenset({"employees", "contractors"})


POLICY = passage(
    "finance/claims.md",
    "Claims Policy",
    "2025-09-01",
    "Claims above 5,000 EUR are approved by the department head and Finance.",
)
LOG = passage(
    "support/log.txt",
    "Case Log",
    "2026-10-06",
    "CASE-17 | 2026-09-02 | 4100 (Acme Ltd) | Ann Lee | P3 | resolved\n"
    "Summary: Refund request for an annual plan.\n"
    "Notes: Claims above 1,000 EUR are approved by the department head and Finance.",
)
NEWER_POLICY = passage(
    "finance/claims-2026.md",
    "Claims Policy 2026",
    "2026-02-01",
    "Claims above 1,000 EUR are approved by the department head and Finance.",
)


def found(question: str, passages: list[Passage], same=None):
    stats = TermStats.from_texts([p.text for p in passages])
    extract = score_units(question, asks(question), passages, stats, EVERYONE)
    if same is None:
        return conflict(extract, extract.ranked[:1], passages, EVERYONE)
    return conflict(extract, extract.ranked[:1], passages, EVERYONE, same)


QUESTION = "Above what amount do claims need the department head and Finance?"


def test_two_policies_with_different_amounts_for_the_same_rule_conflict():
    newer, older, note = found(QUESTION, [POLICY, NEWER_POLICY])
    assert "5,000 EUR" in note.text and "Claims Policy 2026" in note.text
    assert note.sources == [0, 1]


def test_a_case_in_a_log_is_no_rule_and_never_conflicts_with_one():
    """The log's note repeats the policy's words with another amount: it tells what happened in
    one case (under its record line), which overrides no policy however new the log is."""
    assert found(QUESTION, [POLICY, LOG]) is None
    assert found(QUESTION, [LOG, POLICY]) is None


def test_rules_that_do_not_say_the_same_thing_by_meaning_do_not_conflict():
    assert found(QUESTION, [POLICY, NEWER_POLICY], same=lambda a, b, lang: False) is None
    assert found(QUESTION, [POLICY, NEWER_POLICY], same=lambda a, b, lang: True) is not None


def test_the_lines_under_a_record_belong_to_it_up_to_a_blank_line():
    from agent.units import units_of

    body = LOG.body + "\n\nEnd of export. Maintained by Support Operations."
    units = units_of(passage("support/log.txt", "Case Log", "2026-10-06", body), 0)
    by_text = {u.text: u.record for u in units}
    first = "CASE-17 | 2026-09-02 | 4100 (Acme Ltd) | Ann Lee | P3 | resolved"
    assert by_text["Summary: Refund request for an annual plan."] == first
    assert by_text["End of export."] == ""


def test_a_conflict_notes_markers_read_in_order_when_the_newer_source_was_cited_first():
    from agent.loop import Run, _compose
    from agent.reasoning import Draft, Sentence
    from agent.turns import Turn

    older = passage("studio/kiln-2024.md", "Kiln rules 2024", "2024-03-01", "Firing is on Fridays.")
    newer = passage("studio/kiln.md", "Kiln rules", "2026-03-01", "Firing is on Thursdays.")
    draft = Draft(
        [
            Sentence("Firing is on Thursdays.", [1]),
            Sentence(
                "Kiln rules 2024 (2024-03-01) says Fridays; the newer Kiln rules applies.",
                [0, 1],
                note=True,
                conflict=True,
            ),
        ]
    )
    run = Run(Turn("ann", "When is firing?", ("studio",)), None, None)  # type: ignore[arg-type]
    answer = _compose(run, draft, [older, newer], answered=True)
    assert [c.doc_id for c in answer.citations] == ["studio/kiln.md", "studio/kiln-2024.md"]
    assert answer.text == (
        "Firing is on Thursdays. [1] "
        "Kiln rules 2024 (2024-03-01) says Fridays; the newer Kiln rules applies. [1][2]"
    )


def restated(question: str, passages: list[Passage], same=None):
    """The units the answer quotes, and no note."""
    from agent.extract import newest_first

    stats = TermStats.from_texts([p.text for p in passages])
    wants = asks(question)
    extract = score_units(question, wants, passages, stats, EVERYONE)
    picked, note = newest_first(extract, wants, passages, EVERYONE, same)
    assert note is None
    return picked


OLD_FAQ = passage(
    "studio/faq-2023.md",
    "Studio FAQ 2023",
    "2023-05-02",
    "Members may book the kiln for 3 firings a month.",
)
KILN_RULES = passage(
    "studio/kiln-rules.md",
    "Kiln Rules",
    "2026-01-10",
    "Each member may book the kiln for 3 firings a month, on the booking sheet.",
)
KILN_QUESTION = "How many kiln firings a month may members book?"


def test_two_sources_that_agree_are_quoted_from_the_newer():
    """The old FAQ words it closer to the question, yet the rules of this year say the same
    figure for the same thing: the answer quotes and cites the one in force."""
    picked = restated(KILN_QUESTION, [OLD_FAQ, KILN_RULES])
    assert [p.unit.text for p in picked] == [KILN_RULES.body]
    assert [p.unit.text for p in restated(KILN_QUESTION, [KILN_RULES, OLD_FAQ])] == [
        KILN_RULES.body
    ]


def test_agreeing_sources_stay_as_ranked_when_not_the_same_thing_or_not_dated_apart():
    unlike = restated(KILN_QUESTION, [OLD_FAQ, KILN_RULES], same=lambda a, b, lang: False)
    assert unlike[0].unit.text == OLD_FAQ.body
    same_day = passage("studio/kiln-rules.md", "Kiln Rules", "2023-05-02", KILN_RULES.body)
    assert restated(KILN_QUESTION, [OLD_FAQ, same_day])[0].unit.text == OLD_FAQ.body


def test_an_item_of_a_list_keeps_its_place_though_a_newer_source_agrees():
    """A list is quoted whole, items in order: an item is not swapped for another document's
    sentence."""
    from agent.extract import restated_newer

    listed = passage(
        "studio/faq-2023.md",
        "Studio FAQ 2023",
        "2023-05-02",
        "Members may book:\n\n- the kiln for 3 firings a month\n- the wheel for 2 hours a day\n",
    )
    found = [listed, KILN_RULES]
    stats = TermStats.from_texts([p.text for p in found])
    extract = score_units(KILN_QUESTION, asks(KILN_QUESTION), found, stats, EVERYONE)
    item = next(s for s in extract.ranked if s.unit.kind == "item" and "kiln" in s.unit.text)
    assert restated_newer(extract, [item], found, EVERYONE) == [item]
