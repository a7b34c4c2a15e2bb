"""PDFs laid out the way word processors export them: wrapped and hyphenated lines, a running
header and a page number on every page, a paragraph that runs on to the next page, a ruled table.
What comes out must be whole paragraphs and sentences, rows with their header, and the title of
the document — never its running header."""

from __future__ import annotations

from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas
from reportlab.platypus import Table, TableStyle

from ingest.parse import parse_file
from ingest.sentences import sentences

LIMIT = 10 * 1024 * 1024
HEADER = "ACME Health Plan · Member Handbook 2026"
WIDTH, HEIGHT = A4

# Each page: (heading or "", body lines exactly as wrapped on the page).
PAGE_1 = [
    ("Prior authorization", 16),
    "Prior authorization is a process used by the plan to make sure that a covered",
    "service is medically necessary before you receive it. Your doctor asks for it on",
    "your behalf; you do not need to file anything yourself.",
    "",
    "Services that need prior authorization are listed in the appendix. If you receive",
    "such a service without authorization, the cost is not reim-",
    "bursed, even when the service itself is covered. Emergency care never needs",
    "prior authorization, and neither do visits to your primary care doctor. When the",
    "plan approves a request, the approval is valid for ninety days from the date on",
]
PAGE_2 = [
    "the approval letter, and for the number of visits it names.",
    "",
    ("Costs of care", 13),
    "The table shows what you pay for common services:",
    "TABLE",
    "Out-of-network care is covered only in an emergency.",
]
ROWS = [
    ["Service", "In network", "Out of network"],
    ["Primary care visit", "20 EUR copay", "not covered"],
    ["Specialist visit", "40 EUR copay", "not covered"],
    ["Emergency room", "150 EUR copay", "150 EUR copay"],
]


def word_export(path: Path, *, title: str | None) -> Path:
    c = canvas.Canvas(str(path), pagesize=A4)
    if title:
        c.setTitle(title)
    pages = [PAGE_1, PAGE_2]
    for number, lines in enumerate(pages, 1):
        c.setFont("Helvetica", 8)
        c.drawString(57, HEIGHT - 30, HEADER)  # the running header
        c.drawRightString(WIDTH - 57, 30, f"Page {number} of {len(pages)}")  # the footer
        y = HEIGHT - 80
        for line in lines:
            if isinstance(line, tuple):
                text, size = line
                c.setFont("Helvetica-Bold", size)
                c.drawString(63, y, text)
                y -= size + 10
            elif line == "TABLE":
                table = Table(ROWS)
                table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, "black")]))
                _, h = table.wrapOn(c, WIDTH, HEIGHT)
                table.drawOn(c, 63, y - h + 10)
                y -= h + 12
            elif not line:
                y -= 8
            else:
                c.setFont("Helvetica", 10)
                c.drawString(63, y, line)
                y -= 13
        c.showPage()
    c.save()
    return path


def parsed_text(path: Path) -> tuple[str, list]:
    parsed = parse_file(path, max_bytes=LIMIT)
    return parsed.title, parsed.sections


def test_paragraphs_are_whole_and_hyphenated_words_mended(tmp_path):
    title, sections = parsed_text(word_export(tmp_path / "handbook.pdf", title=None))
    text = "\n\n".join(s.text for s in sections)
    assert (
        "Prior authorization is a process used by the plan to make sure that a covered "
        "service is medically necessary before you receive it." in sentences(text)
    )
    assert "the cost is not reimbursed, even when the service itself is covered." in text
    assert "reim-" not in text


def test_running_headers_footers_and_page_numbers_are_gone(tmp_path):
    title, sections = parsed_text(word_export(tmp_path / "handbook.pdf", title=None))
    text = "\n".join(s.text for s in sections)
    assert "ACME Health Plan" not in text and "Page 1" not in text and "of 2" not in text
    assert title == "Prior authorization"  # the first heading, not the running header
    _, titled = parsed_text(word_export(tmp_path / "meta.pdf", title="Member Handbook 2026"))
    assert parse_file(tmp_path / "meta.pdf", max_bytes=LIMIT).title == "Member Handbook 2026"


def test_a_paragraph_that_runs_on_to_the_next_page_stays_whole_where_it_starts(tmp_path):
    _, sections = parsed_text(word_export(tmp_path / "handbook.pdf", title=None))
    whole = (
        "When the plan approves a request, the approval is valid for ninety days from the date "
        "on the approval letter, and for the number of visits it names."
    )
    (home,) = [s for s in sections if whole in s.text]
    assert home.page == 1 and home.anchor == "page=1"
    assert not any(s.text.startswith("the approval letter") for s in sections)


def test_tables_become_rows_that_keep_their_header_under_their_heading(tmp_path):
    _, sections = parsed_text(word_export(tmp_path / "handbook.pdf", title=None))
    (costs,) = [s for s in sections if s.path == ["Costs of care"]]
    assert costs.page == 2
    assert (
        "Service: Specialist visit · In network: 40 EUR copay · Out of network: not covered"
        in costs.text.splitlines()
    )
    assert "Out-of-network care is covered only in an emergency." in costs.text


def test_the_handbook_pdfs_lose_their_running_headers(tmp_path):
    root = Path(__file__).resolve().parents[2] / "examples" / "handbook"
    parsed = parse_file(root / "hr" / "salary-bands.pdf", max_bytes=LIMIT)
    assert parsed.title == "Salary Bands 2026"
    text = "\n".join(s.text for s in parsed.sections)
    assert "Page 2" not in text and "Strictly confidential – People Operations only" not in text
    rows = [line for s in parsed.sections for line in s.text.splitlines()]
    assert (
        "Level: L4 · Title: Senior Engineer · Range (EUR): 78,000 – 96,000 EUR · "
        "Midpoint (EUR): 87,000" in rows
    )


def schedule_export(path: Path) -> Path:
    """A paragraph that ends in ":" and a schedule under it drawn as short lines with no bullets
    (a column header, then one line per step), then a closing paragraph."""
    c = canvas.Canvas(str(path), pagesize=A4)
    y = HEIGHT - 80
    c.setFont("Helvetica-Bold", 16)
    c.drawString(63, y, "Leaving early")
    y -= 30
    c.setFont("Helvetica", 10)
    for line in [
        "The company pays for the training you choose in your first year, up to the budget",
        "your manager approves. The budget covers courses, books and the fees of any exam",
        "that leads to a certificate, and the travel the course needs. It is an investment in",
        "you, and we ask for part of it back if you leave soon after the training ends.",
        "If you resign within two years of your start date, you repay the training budget",
        "according to the following scale:",
    ]:
        c.drawString(63, y, line)
        y -= 13
    y -= 8
    c.setFont("Helvetica-Bold", 10)
    c.drawString(63, y, "You leave          Share you repay")
    y -= 24
    c.setFont("Helvetica", 10)
    for line in [
        "within the first 6 months    100%",
        "in months 7 to 24    40%",
        "later    nothing",
    ]:
        c.drawString(63, y, line)
        y -= 24
    y -= 8
    c.drawString(63, y, "Nothing is repaid when the company ends the contract.")
    c.showPage()
    c.save()
    return path


def test_short_lines_with_figures_under_a_colon_are_the_items_of_its_list(tmp_path):
    """Read as headings, the steps of a schedule were never quoted: they are list items of the
    sentence that introduces them; the column header stays a line of its own."""
    _, sections = parsed_text(schedule_export(tmp_path / "schedule.pdf"))
    lines = [line for s in sections for line in s.text.splitlines()]
    assert "- within the first 6 months 100%" in lines, lines
    assert "- in months 7 to 24 40%" in lines, lines
    assert "You leave Share you repay" in lines  # no figure: the columns' header
    assert "- later nothing" in lines  # the schedule goes on
    assert all(not s.path for s in sections)  # the header is no heading over the rest


def unruled_table_export(path: Path) -> Path:
    """A table drawn without rules, as word processors export one: its cells start at the same
    x positions, a header cell and a first-column cell wrap onto a second line (closer to the
    line above than the rows are apart), then a paragraph."""
    c = canvas.Canvas(str(path), pagesize=A4)
    c.setFont("Helvetica", 10)
    y = HEIGHT - 80
    c.drawString(63, y, "The allowance depends on where you move from:")
    y -= 26
    columns = (63, 250, 340)
    for lines, pitch in [
        ([("Move", "Moving", "Storage"), ("", "allowance", "")], 19),
        ([("Within the country", "2,000 EUR", "30 days")], 19),
        ([("From another EU country to", "4,000 EUR", "45 days"), ("the head office", "", "")], 19),
        ([("From outside the EU", "6,000 EUR", "60 days")], 19),
    ]:
        for k, cells in enumerate(lines):
            for x, text in zip(columns, cells, strict=True):
                if text:
                    c.drawString(x, y, text)
            y -= 13 if k + 1 < len(lines) else pitch
    y -= 12
    c.drawString(63, y, "The allowance is paid with your first salary.")
    c.showPage()
    c.save()
    return path


def test_a_table_drawn_without_rules_becomes_rows_with_wrapped_cells_joined(tmp_path):
    """Read line by line, the row of a wrapped cell was cut in two ("… EU country to 4,000 EUR
    45 days" and "the head office") and its header scattered over two lines."""
    _, sections = parsed_text(unruled_table_export(tmp_path / "allowance.pdf"))
    lines = [line for s in sections for line in s.text.splitlines()]
    assert (
        "Move: From another EU country to the head office · Moving allowance: 4,000 EUR · "
        "Storage: 45 days" in lines
    ), lines
    assert "Move: Within the country · Moving allowance: 2,000 EUR · Storage: 30 days" in lines
    assert "The allowance depends on where you move from:" in lines
    assert "The allowance is paid with your first salary." in lines


def test_the_relocation_handbook_allowance_table_keeps_its_rows(tmp_path):
    root = Path(__file__).resolve().parents[2] / "examples" / "handbook"
    parsed = parse_file(root / "hr" / "relocation-handbook.pdf", max_bytes=LIMIT)
    rows = [line for s in parsed.sections for line in s.text.splitlines()]
    assert (
        "Move: From another EU or EEA country to Berlin · Relocation allowance: 4,000 EUR · "
        "Household goods: up to 30 m³ · Temporary housing: up to 45 nights" in rows
    ), [r for r in rows if "·" in r]
