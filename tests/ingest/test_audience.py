"""Which audience a document is written for, from what the document itself says."""

from __future__ import annotations

import pytest

from ingest.audience import document_audience, section_audience
from ingest.documents import Section


def audience(text: str, title: str = "Policy", meta: dict | None = None, acl=("*",)):
    return document_audience(title, [Section(["Scope"], text)], meta or {}, acl)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("This policy applies to independent contractors and freelancers.", {"contractors"}),
        ("This policy applies to all employees.", set()),  # the general case
        # everyone, contractors included: general too, not a contractors-only document
        (
            "This policy applies to everyone who works with our data: employees, contractors and "
            "interns.",
            set(),
        ),
        ("It applies to contractors. It does not apply to employees.", {"contractors"}),
        ("Ця політика поширюється на підрядників.", {"contractors"}),
    ],
)
def test_a_scope_sentence_ties_a_document_to_one_audience_only_when_it_is_not_everyone(
    text, expected
):
    assert audience(text) == frozenset(expected)


def test_metadata_then_title_then_access_list():
    assert audience("Applies to contractors.", meta={"audience": "employees"}) == {"employees"}
    assert audience("Nothing about scope.", title="Expense Policy for Contractors") == {
        "contractors"
    }
    assert audience("Nothing about scope.", acl=["contractors"]) == {"contractors"}
    assert audience("Nothing about scope.", acl=["contractors", "hr"]) == frozenset()


def test_a_section_heading_names_its_own_audience():
    assert section_audience(["Travel", "Contractors"], frozenset()) == {"contractors"}
    assert section_audience(["Travel", "Rail"], frozenset({"employees"})) == {"employees"}


def test_a_scope_for_employees_that_sends_contractors_elsewhere_is_the_employees_rule():
    text = (
        "This policy applies to all employees travelling on business. Contractors do not book "
        "their own travel; they follow the Expense Policy for Contractors."
    )
    assert audience(text) == {"employees"}
    # a scope that merely mentions employees is still general
    assert audience("This policy applies to all employees. Questions go to HR.") == frozenset()


def test_an_eligibility_section_that_shuts_contractors_out_leaves_the_document_to_employees():
    sections = [
        Section(["Relocation Handbook", "1. Welcome"], "Moving to Berlin is a big step."),
        Section(
            ["Relocation Handbook", "2. Who is eligible"],
            "You are eligible if we hire you into a role in Berlin. Relocation support is not "
            "available to contractors, freelancers or agency staff.",
        ),
    ]
    assert document_audience("Relocation Handbook", sections, {}, ["*"]) == {"employees"}
    # the same sentence outside a scope or eligibility section does not decide
    sections[1].path[-1] = "2. Money"
    assert document_audience("Relocation Handbook", sections, {}, ["*"]) == frozenset()
