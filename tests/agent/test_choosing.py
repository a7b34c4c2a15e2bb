"""What an answer is made of, chosen from the units of the passages found (no models): the list a
sentence introduces, and abbreviations the documents define."""

from __future__ import annotations

from agent.extract import abbreviations, choose, score_units
from agent.questions import asks
from agent.terms import TermStats
from tests.agent.test_conflicts import EVERYONE, passage

CRITERIA = passage(
    "managers/promotions.md",
    "Promotion Guide",
    "2026-02-01",
    "Promotions are decided twice a year. A promotion case is considered when all of the "
    "following criteria are met:\n\n"
    "1. At least 12 months in the current level.\n"
    "2. A rating of 4 or 5 in the two most recent review cycles.\n"
    "3. Support from the department head.\n\n"
    "The HR business partner checks each case.",
    crumbs="Promotion Guide > 4. Promotion criteria",
)


def chosen(question: str, passages: list) -> list[str]:
    stats = TermStats.from_texts([p.text for p in passages])
    wants = asks(question)
    extract = score_units(question, wants, passages, stats, EVERYONE)
    return [s.unit.text for s in choose(extract, wants, passages)]


def test_a_sentence_that_introduces_a_list_comes_with_its_items():
    """ "… when all of the following criteria are met:" alone says nothing; the numbered items
    under it (each split from its number by the sentence splitter) are the answer."""
    texts = chosen("What is needed before a promotion case is considered?", [CRITERIA])
    assert texts[0].endswith("criteria are met:"), texts
    assert texts[1:] == [
        "At least 12 months in the current level.",
        "A rating of 4 or 5 in the two most recent review cycles.",
        "Support from the department head.",
    ], texts


def test_a_list_of_short_items_comes_whole_with_the_sentence_that_introduces_it():
    """Items too short to answer alone ("Mentor", "Buddy") are still what the sentence ending in
    ":" introduces: without them "… can be a:" says nothing."""
    roles = passage(
        "people/onboarding.md",
        "Onboarding Guide",
        "2026-02-01",
        "Every new starter is introduced to the team in their first week.\n\n"
        "During the first month a new starter can be supported by a:\n\n"
        "- mentor\n"
        "- buddy\n"
        "- team lead\n\n"
        "Ask People Operations if nobody has been named.",
        crumbs="Onboarding Guide > 2. Support in the first month",
    )
    texts = chosen("Who can support a new starter during the first month?", [roles])
    assert texts == [
        "During the first month a new starter can be supported by a:",
        "mentor",
        "buddy",
        "team lead",
    ], texts


PURCHASING = passage(
    "finance/purchasing.txt",
    "Purchasing Policy",
    "2026-03-01",
    "Every purchase needs an approved purchase order (PO) before the supplier starts.\n"
    "Order value: 10,001 - 50,000 EUR · Approved by: Department head and CFO",
    crumbs="Purchasing Policy > 3.1 Who approves a purchase order",
)
RELOCATION = passage(
    "hr/relocation.pdf",
    "Relocation Handbook",
    "2026-03-01",
    "Estimated total cost: up to 15,000 EUR · Approval: Head of People",
    crumbs="Relocation Handbook > 12. Approvals",
)


def test_an_abbreviation_a_document_defines_is_said_by_its_long_form():
    """ "Who approves the PO?": the row under "Who approves a purchase order" says PO in full;
    without the definition, another document's approval row for the same amount won."""
    assert set(abbreviations([PURCHASING])) == {"po"}
    texts = chosen("Who needs to approve the PO for 12,000 EUR?", [RELOCATION, PURCHASING])
    assert texts[0].startswith("Order value: 10,001 - 50,000 EUR"), texts


def test_only_a_long_form_whose_initials_spell_it_defines_an_abbreviation():
    text = passage("x.md", "X", "2026-01-01", "Ask the team lead (HR) or paid time off (PTO).")
    assert set(abbreviations([text])) == {"pto"}


REFUNDS = passage(
    "sales/refunds.md",
    "Refund Policy",
    "2026-05-20",
    "Annual plans get a prorated refund within 60 days of the order date.",
    crumbs="Refund Policy > 2.2 Refund window for annual plans",
)
WORKED = passage(
    "sales/refunds.md",
    "Refund Policy",
    "2026-05-20",
    "- Annual Starter plan, request 75 days after the order date → outside the 60-day window, "
    "no refund.",
    crumbs="Refund Policy > 6. Worked examples",
)


def test_a_worked_example_gives_way_to_the_rule_it_illustrates():
    """The example says every word of the question, as the rule's heading does; the rule is what
    was asked."""
    assert chosen("What is the refund window for annual plans?", [WORKED, REFUNDS])[0] == (
        "Annual plans get a prorated refund within 60 days of the order date."
    )


def test_a_worked_example_is_the_answer_when_the_question_asks_for_one():
    texts = chosen("Is there an example of a refund window for annual plans?", [WORKED, REFUNDS])
    assert texts[0].startswith("Annual Starter plan"), texts


CASES = passage(
    "finance/contractors.pdf",
    "Expense Policy for Contractors",
    "2026-04-10",
    "1. A contractor books a flight to London on their own because it was cheaper. Not "
    "reimbursed: travel must be booked through TravelNest by the engaging manager.\n"
    "2. A contractor asks for a per diem. Not possible: meals are paid at cost.",
    crumbs="Expense Policy for Contractors > 7. Cases",
)


def test_a_list_item_of_several_sentences_is_quoted_whole():
    texts = chosen("Can a contractor book a flight to London on their own?", [CASES])
    assert texts[:2] == [
        "A contractor books a flight to London on their own because it was cheaper.",
        "Not reimbursed: travel must be booked through TravelNest by the engaging manager.",
    ], texts


LEGEND = passage(
    "general/lunch.md",
    "Team Lunch Menu",
    "2026-10-01",
    "Every dish is marked: (V) vegetarian, (VG) vegan, (GF) gluten-free.",
)
TUESDAY = passage(
    "general/lunch.md",
    "Team Lunch Menu",
    "2026-10-01",
    "- Main: Beef ragù with pappardelle\n"
    "- Veggie: Lentil ragù with pappardelle (VG)\n"
    "- Soup: Tomato soup with cream (V, GF)",
    crumbs="Team Lunch Menu > Tuesday",
)


def test_a_legend_says_what_its_marks_stand_for():
    """ "(VG) vegan": the dish marked VG is the vegan one, though no dish says "vegan"."""
    assert abbreviations([LEGEND]).get("vg") == frozenset({"vegan"})
    texts = chosen("Is there a vegan dish at Tuesday's lunch?", [LEGEND, TUESDAY])
    assert texts[0].startswith("Veggie: Lentil"), texts


TROUBLESHOOTING = passage(
    "it/vpn.docx",
    "VPN Guide",
    "2026-01-10",
    "Clients older than version 1.4 drop the connection every hour. To fix it:\n"
    "- Re-authenticate: click Disconnect, then Connect, and sign in again.\n"
    "- Update the client to 1.4 from the Company Portal.\n"
    "- Check the version under Help, About.",
    crumbs="VPN Guide > 6.1 The VPN drops every hour",
)


def test_what_to_do_is_answered_with_every_step_the_list_gives():
    """One step ("Re-authenticate …") answered "what should I do?" and left out the update that
    ends the drops; the list "To fix it:" introduces is the answer, with the sentence before."""
    texts = chosen("The VPN drops every hour. What should I do to fix it?", [TROUBLESHOOTING])
    assert texts[0].startswith("Clients older than version 1.4"), texts
    assert [t.split(":")[0].split()[0] for t in texts[1:]] == ["Re-authenticate", "Update", "Check"]


def test_a_name_no_document_uses_costs_no_unit_anything():
    """ "I live in Narnia": a name the asker gives of their own situation that no document
    uses is missing from every unit alike; it tells none apart, so it marks none down. A name
    the documents do use ("Lisbon") still counts against the unit that does not say it."""
    offices = passage(
        "facilities/desks.md",
        "Desk Booking",
        "2026-03-01",
        "Desks are booked in the app up to two weeks ahead. "
        "The Lisbon office books desks at the front desk instead.",
    )
    stats = TermStats.from_texts([offices.text])

    def top(question: str) -> tuple[str, float]:
        best = score_units(question, asks(question), [offices], stats, EVERYONE).ranked[0]
        return best.unit.text, best.score

    plain = top("How far ahead can desks be booked?")
    assert top("I live in Narnia. How far ahead can desks be booked?") == plain
    text, _ = top("How far ahead can desks be booked in Lisbon?")
    assert text.startswith("The Lisbon office")


def test_the_sentence_after_joins_by_what_it_shares_not_by_a_unit():
    """The next sentence joins the best when it carries on the same fact (it names a key term
    of the question again); a unit both happen to use ("weeks") does not tie them."""

    def loans(text: str) -> list[str]:
        return chosen(
            "For how many weeks is a loan?", [passage("l.md", "Loans", "2026-01-01", text)]
        )

    unrelated = loans("A loan is for 3 weeks. Renovation of the hall takes 6 weeks.")
    assert unrelated == ["A loan is for 3 weeks."], unrelated
    renewal = loans("A loan is for 3 weeks. Renewing a loan adds 2 weeks.")
    assert renewal == ["A loan is for 3 weeks.", "Renewing a loan adds 2 weeks."], renewal


def test_a_line_that_only_points_to_an_address_is_never_the_answer():
    """ "Source: <address>" shares the question's words through the address ("…/export-ferry-
    tickets") and says nothing; an address in a sentence that says something stays quotable."""
    rules = passage(
        "harbour/tickets.md",
        "Ferry tickets",
        "2026-02-01",
        "Ferry tickets can be refunded up to 24 hours before sailing.\n\n"
        "Source: https://harbour.example/guidance/refund-ferry-tickets-before-sailing",
    )
    assert chosen("Can ferry tickets be refunded before sailing?", [rules]) == [
        "Ferry tickets can be refunded up to 24 hours before sailing."
    ]
    desk = passage(
        "harbour/desk.md",
        "Harbour desk",
        "2026-02-01",
        "Refunds are asked for at https://harbour.example/refunds within a week.",
    )
    assert chosen("Where are refunds asked for?", [desk]) == [
        "Refunds are asked for at https://harbour.example/refunds within a week."
    ]


KILN = passage(
    "studio/kiln.md",
    "Kiln Rules",
    "2026-02-01",
    "Members book the kiln by the shelf. "
    "A firing that cracks is fired again once at no charge when the glaze sheet was followed. "
    "After that, a member who wants another firing pays the shelf rate. "
    "Glazes are kept in the back room.",
    crumbs="Kiln Rules > 3. Failed firings",
)


def test_a_sentence_that_points_back_comes_with_the_one_it_points_at():
    """ "After that, a member … pays the shelf rate" says nothing of when unless the sentence
    before it is quoted too: "that" is the free second firing."""
    texts = chosen("Who pays for another firing of a pot?", [KILN])
    assert texts[:2] == [
        "A firing that cracks is fired again once at no charge when the glaze sheet was followed.",
        "After that, a member who wants another firing pays the shelf rate.",
    ], texts


def test_a_sentence_that_names_its_subject_comes_alone():
    """The rule sentence names what it is about: the one before it does not join for "that"
    deep inside it."""
    texts = chosen("When is a cracked firing fired again at no charge?", [KILN])
    assert texts[0].startswith("A firing that cracks"), texts
    assert "Members book the kiln by the shelf." not in texts, texts
