"""Which audience a document is written for, from what the document itself says."""

from __future__ import annotations

import pytest

from ingest.audience import document_audience, document_names, section_audience
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


# Audiences are an open set: any group of people the document says it is written for.


def test_a_title_names_its_readers_at_its_end_whatever_the_group():
    assert audience("Nothing about scope.", title="Kayak Storage Rules for Interns") == {"interns"}
    # a group no word list knows: a plural at the end of a title names its readers
    assert audience("Nothing about scope.", title="Handbook for Lock Keepers (2027)") == {
        "lock keepers"
    }
    # what a title is about is no audience
    assert audience("Nothing about scope.", title="Guidelines for Using Shared Kayaks") == set()


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "These kayak rules apply to interns and working students in Harbourtown.",
            {
                "interns",
                "working students",
            },
        ),
        # a group the lexicon does not know, made people by what follows it
        ("This guide applies to lock keepers who work the night shift.", {"lock keepers"}),
        # things are not readers
        ("This policy applies to all purchases of kayak paddles.", set()),
        ("Ця інструкція поширюється на стажистів.", {"interns"}),
    ],
)
def test_a_scope_sentence_names_any_group_of_people(text, expected):
    assert audience(text) == frozenset(expected)


def test_metadata_names_an_audience_as_a_group_would_be_named():
    assert audience("Applies to everyone.", meta={"audience": "Intern"}) == {"interns"}
    assert audience("Applies to everyone.", meta={"audience": ["Freelancers"]}) == {"contractors"}


def test_an_audience_every_reader_belongs_to_narrows_nothing():
    """Only team leads may read it, so "for team leads" tells no reader apart."""
    title = "Rota Guide for Team Leads"
    assert audience("Nothing about scope.", title=title, acl=["team-leads"]) == set()
    assert audience("Nothing about scope.", title=title, acl=["*"]) == {"team leads"}


def test_a_heading_names_a_group_the_document_is_written_for():
    sections = [
        Section(["Kayak Shed", "1. Scope"], "These rules apply to employees and interns."),
        Section(["Kayak Shed", "2. Interns"], "Interns book a kayak through their mentor."),
        Section(["Kayak Shed", "3. Booking"], "Book a kayak a day ahead."),
    ]
    doc = document_audience("Kayak Shed", sections, {}, ["*"])
    assert doc == frozenset()  # employees and interns: everyone
    names = document_names("Kayak Shed", sections, {})
    assert section_audience(sections[1].path, doc, names) == {"interns"}
    assert section_audience(sections[2].path, doc, names) == frozenset()
    # a heading that says whom it is for, in a document that named nobody
    assert section_audience(["Kayak Shed", "Rules for interns"], frozenset()) == {"interns"}


def test_chinese_and_japanese_words_match_inside_a_run_of_characters():
    """Neither script puts spaces between words: "员工" is found inside "办公室员工手册"."""
    assert audience("没有范围说明。", title="北京办公室员工手册") == {"employees"}
    assert audience("本规定适用于承包商。") == {"contractors"}
