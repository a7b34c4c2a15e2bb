"""Real parsers on real files, written to tmp_path by the tests themselves."""

from __future__ import annotations

import os
import random
from pathlib import Path

import docx
import pytest
from reportlab.lib import pdfencrypt
from reportlab.pdfgen import canvas

from ingest.errors import BadDocument
from ingest.parse import SUFFIXES, parse_file, slugify

LIMIT = 10 * 2**20
JUNK = random.Random(7).randbytes(4096)  # fixed bytes, so a failure can be replayed


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def make_pdf(
    path: Path,
    pages: list[str],
    title: str | None = None,
    bookmarks: bool = False,
    heading: str = "",
    **kw,
) -> Path:
    c = canvas.Canvas(str(path), **kw)
    if title:
        c.setTitle(title)
    for number, text in enumerate(pages, 1):
        y = 720
        if heading and number == 1:
            c.setFont("Helvetica-Bold", 16)
            c.drawString(72, y + 30, heading)
            c.setFont("Helvetica", 12)
        for line in text.splitlines():
            c.drawString(72, y, line)
            y -= 16
        if bookmarks:
            c.bookmarkPage(f"p{number}")
            c.addOutlineEntry(f"Chapter {number}", f"p{number}", level=0)
        c.showPage()
    c.save()
    return path


def reason(path: Path, max_bytes: int = LIMIT) -> str:
    with pytest.raises(BadDocument) as info:
        parse_file(path, max_bytes=max_bytes)
    return str(info.value)


# --- Markdown ---------------------------------------------------------------------------------

HANDBOOK_MD = """\
---
title: Employee handbook
owner: hr@example.com
updated: 2024-05-01
acl: [staff, contractors]
url: https://wiki.example.com/handbook
---
Welcome to the company.

# Leave

Everyone gets leave.

## Carry-over

You can carry over **five days** into the next year.
This line was wrapped in the source.

- ask your manager
- fill in the form

| Type | Days |
|------|------|
| Annual | 25 |
| Sick | 10 |

## Відпустка по догляду

Текст українською.

# Travel

Book early.
"""


def test_markdown_front_matter_becomes_meta_and_title(tmp_path):
    parsed = parse_file(write(tmp_path, "handbook.md", HANDBOOK_MD), max_bytes=LIMIT)
    assert parsed.title == "Employee handbook"
    assert parsed.meta == {
        "title": "Employee handbook",
        "owner": "hr@example.com",
        "updated": "2024-05-01",  # a YAML date, kept as ISO text
        "acl": ["staff", "contractors"],
        "url": "https://wiki.example.com/handbook",
    }


def test_markdown_headings_build_paths_and_anchors(tmp_path):
    sections = parse_file(write(tmp_path, "handbook.md", HANDBOOK_MD), max_bytes=LIMIT).sections
    assert [(s.path, s.anchor) for s in sections] == [
        ([], ""),
        (["Leave"], "leave"),
        (["Leave", "Carry-over"], "carry-over"),
        (["Leave", "Відпустка по догляду"], "відпустка-по-догляду"),
        (["Travel"], "travel"),
    ]
    assert sections[0].text == "Welcome to the company."
    assert "front-matter" not in sections[0].text and "owner" not in sections[0].text


def test_markdown_text_keeps_paragraphs_lists_and_tables(tmp_path):
    carry_over = parse_file(write(tmp_path, "handbook.md", HANDBOOK_MD), max_bytes=LIMIT).sections[
        2
    ]
    assert carry_over.text == (
        "You can carry over five days into the next year. This line was wrapped in the source.\n\n"
        "- ask your manager\n"
        "- fill in the form\n\n"
        "Type: Annual · Days: 25\n"
        "Type: Sick · Days: 10"
    )


def test_markdown_title_falls_back_to_first_h1_then_file_name(tmp_path):
    assert (
        parse_file(write(tmp_path, "a.md", "Intro.\n\n# Expenses\n\nText."), max_bytes=LIMIT).title
        == "Expenses"
    )
    assert (
        parse_file(
            write(tmp_path, "travel-guide.markdown", "## Only h2\n\nText."), max_bytes=LIMIT
        ).title
        == "travel-guide"
    )


def test_markdown_repeated_headings_get_numbered_slugs(tmp_path):
    sections = parse_file(
        write(tmp_path, "faq.md", "# FAQ\n\na\n\n# FAQ\n\nb\n\n# 休假 政策!\n\nc"), max_bytes=LIMIT
    ).sections
    assert [s.anchor for s in sections] == ["faq", "faq-1", "休假-政策"]


def test_broken_front_matter_is_reported_not_ignored(tmp_path):
    # It may carry the ACL: indexing the file without it would show it to everyone.
    assert reason(write(tmp_path, "x.md", "---\nacl: [staff\n---\nText.")).startswith(
        "front-matter is not valid YAML"
    )


def test_slugify_is_github_style():
    assert slugify("Carry-over & Leave (2024)!") == "carry-over--leave-2024"
    assert slugify("Відпустка та лікарняні") == "відпустка-та-лікарняні"


# --- HTML -------------------------------------------------------------------------------------

TRAVEL_HTML = """<!doctype html>
<html><head><title>Travel policy</title><style>p { color: red }</style></head>
<body>
<nav><a href="/">Home</a> | <a href="/hr">HR</a></nav>
<script>var tracking = "do not index";</script>
<h1 id="travel">Travel</h1>
<p>Book <b>early</b>.<br>Economy class only.</p>
<!-- a comment -->
<h2>Per diem</h2>
<table>
  <tr><th>City</th><th>Rate</th></tr>
  <tr><td>Paris</td><td>80 EUR</td></tr>
  <tr><td>Kyiv</td><td>50 EUR</td></tr>
</table>
<ul><li>Taxi<ul><li>only at night</li></ul></li><li>Train</li></ul>
<h3 id="receipts-anchor">Receipts</h3>
<div>Keep <span>every</span> receipt.</div>
</body></html>
"""


def test_html_structure_tables_lists_and_anchors(tmp_path):
    parsed = parse_file(write(tmp_path, "travel.html", TRAVEL_HTML), max_bytes=LIMIT)
    assert parsed.title == "Travel policy"
    assert parsed.meta == {}
    assert [(s.path, s.anchor) for s in parsed.sections] == [
        (["Travel"], "travel"),
        (["Travel", "Per diem"], "per-diem"),
        (["Travel", "Per diem", "Receipts"], "receipts-anchor"),
    ]
    assert parsed.sections[0].text == "Book early.\nEconomy class only."
    assert parsed.sections[1].text == (
        "City: Paris · Rate: 80 EUR\nCity: Kyiv · Rate: 50 EUR\n\n- Taxi\n  - only at night\n- Train"
    )
    assert parsed.sections[2].text == "Keep every receipt."


def test_html_drops_script_style_nav_and_comments(tmp_path):
    text = " ".join(
        s.text for s in parse_file(write(tmp_path, "t.htm", TRAVEL_HTML), max_bytes=LIMIT).sections
    )
    for junk in ("tracking", "color", "Home", "a comment"):
        assert junk not in text


def test_html_title_falls_back_to_h1(tmp_path):
    parsed = parse_file(
        write(tmp_path, "t.html", "<h1>Onboarding</h1><p>Day one.</p>"), max_bytes=LIMIT
    )
    assert parsed.title == "Onboarding"


# --- PDF --------------------------------------------------------------------------------------


def test_pdf_one_section_per_page(tmp_path):
    pages = ["Passwords rotate yearly.", "Laptops are encrypted.", "Report incidents to IT."]
    path = make_pdf(tmp_path / "security.pdf", pages, heading="Security policy")
    parsed = parse_file(path, max_bytes=LIMIT)
    assert [(s.page, s.anchor, s.path) for s in parsed.sections] == [
        (1, "page=1", []),
        (2, "page=2", []),
        (3, "page=3", []),
    ]
    assert [s.text for s in parsed.sections] == pages
    assert parsed.title == "Security policy"  # no metadata title: the first heading


def test_pdf_metadata_title_and_bookmarks(tmp_path):
    path = make_pdf(tmp_path / "h.pdf", ["One.", "Two."], title="IT handbook", bookmarks=True)
    parsed = parse_file(path, max_bytes=LIMIT)
    assert parsed.title == "IT handbook"
    assert [s.path for s in parsed.sections] == [["Chapter 1"], ["Chapter 2"]]


def test_pdf_skips_blank_pages_but_keeps_numbers(tmp_path):
    parsed = parse_file(make_pdf(tmp_path / "p.pdf", ["First.", "", "Third."]), max_bytes=LIMIT)
    assert [s.page for s in parsed.sections] == [1, 3]


# --- DOCX -------------------------------------------------------------------------------------


def make_docx(path: Path, title: str = "") -> Path:
    document = docx.Document()
    document.core_properties.title = title
    document.add_heading("Expenses", 0)  # the "Title" style
    document.add_paragraph("What we pay back.")
    document.add_heading("Meals", 1)
    document.add_paragraph("Keep receipts.")
    document.add_paragraph("breakfast", style="List Bullet")
    document.add_paragraph("dinner", style="List Number")
    table = document.add_table(rows=3, cols=2)
    for r, (city, limit) in enumerate([("City", "Limit"), ("Paris", "50 EUR"), ("Kyiv", "30 EUR")]):
        table.cell(r, 0).text, table.cell(r, 1).text = city, limit
    document.add_heading("Hotels", 2)
    document.add_paragraph("Book through the portal.")
    document.add_heading("Travel", 1)
    document.add_paragraph("See the travel policy.")
    document.save(str(path))
    return path


def test_docx_headings_lists_and_tables(tmp_path):
    parsed = parse_file(make_docx(tmp_path / "expenses.docx"), max_bytes=LIMIT)
    assert parsed.title == "Expenses"  # no core title: the first heading
    assert [s.path for s in parsed.sections] == [
        ["Expenses"],
        ["Expenses", "Meals"],
        ["Expenses", "Meals", "Hotels"],
        ["Expenses", "Travel"],
    ]
    assert parsed.sections[1].text == (
        "Keep receipts.\n\n- breakfast\n- dinner\n\nCity: Paris · Limit: 50 EUR\nCity: Kyiv · Limit: 30 EUR"
    )
    assert parsed.sections[1].anchor == "meals"


def test_docx_core_title_wins(tmp_path):
    assert (
        parse_file(
            make_docx(tmp_path / "e.docx", title="Expense policy 2024"), max_bytes=LIMIT
        ).title
        == "Expense policy 2024"
    )


# --- TXT --------------------------------------------------------------------------------------


def test_txt_without_headings_is_one_section(tmp_path):
    parsed = parse_file(
        write(tmp_path, "notes.txt", "Line one.\nLine two.\n\nSecond paragraph.\n"), max_bytes=LIMIT
    )
    assert parsed.title == "notes"
    assert [(s.path, s.text) for s in parsed.sections] == [
        ([], "Line one.\nLine two.\n\nSecond paragraph.")
    ]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        (
            "Greenhouse watering rota\n\nThe ferns are watered on Mondays.\n",
            "Greenhouse watering rota",
        ),
        (
            "Greenhouse watering rota\nThe ferns are watered on Mondays.\n",
            "Greenhouse watering rota",
        ),
        ("\n  Kiln safety notes \n\nWear gloves.\n", "Kiln safety notes"),
        ("The ferns are watered on Mondays.\nThe cacti monthly.\n", "rota"),  # a sentence
        ("Ask the gardener first: she knows\n\nWhich pots drain.\n", "rota"),  # a clause
        ("- ferns\n- cacti\n", "rota"),  # a list item
        ("Room: B12\n\nThe shelf by the door.\n", "rota"),  # a field
        ("Plant    Water\nFern     Weekly\n", "rota"),  # a table's header
        (
            "The greenhouse by the north car park is where the seedlings of every team wait\n"
            "\nAsk first.\n",
            "rota",
        ),  # too long for a title
    ],
)
def test_a_txt_title_is_its_first_line_when_that_reads_as_a_title(tmp_path, text, title):
    assert parse_file(write(tmp_path, "rota.txt", text), max_bytes=LIMIT).title == title


def test_txt_splits_on_heading_like_lines(tmp_path):
    text = "Preamble.\n\nHOLIDAYS\nWe close on 1 January.\n\nSick leave\n==========\nCall your manager.\n\nLong illness\n------------\nSee HR.\n"
    sections = parse_file(write(tmp_path, "policy.txt", text), max_bytes=LIMIT).sections
    assert [(s.path, s.text) for s in sections] == [
        ([], "Preamble."),
        (["HOLIDAYS"], "We close on 1 January."),
        (["Sick leave"], "Call your manager."),
        (["Sick leave", "Long illness"], "See HR."),
    ]


def test_text_encodings(tmp_path):
    assert (
        parse_file(write(tmp_path, "bom.txt", "\ufeffПривіт".encode()), max_bytes=LIMIT)
        .sections[0]
        .text
        == "Привіт"
    )
    windows = "Café menu – naïve prices".encode("cp1252")
    assert (
        parse_file(write(tmp_path, "win.txt", windows), max_bytes=LIMIT).sections[0].text
        == "Café menu – naïve prices"
    )
    damaged = ("Привіт світ. " * 40).encode()[:-2]  # cut inside the last letter
    assert (
        parse_file(write(tmp_path, "cut.txt", damaged), max_bytes=LIMIT)
        .sections[0]
        .text.startswith("Привіт")
    )


# --- Bad input --------------------------------------------------------------------------------


def test_every_supported_suffix_is_listed():
    assert {".md", ".markdown", ".html", ".htm", ".pdf", ".docx", ".txt"} == SUFFIXES


def test_unsupported_suffix(tmp_path):
    assert reason(write(tmp_path, "old.doc", b"\xd0\xcf\x11\xe0")) == "unsupported file type: .doc"
    assert reason(write(tmp_path, "Makefile", "all:")) == "unsupported file type: no extension"


def test_too_large(tmp_path):
    path = write(tmp_path, "big.txt", b"a" * (3 * 2**20))
    assert (
        reason(path, max_bytes=2 * 2**20)
        == "too large: 3 MB > 2 MB limit (FOOTNOTE_INGEST__MAX_FILE_MB)"
    )


@pytest.mark.parametrize("name", ["empty.md", "empty.txt", "empty.html", "empty.pdf", "empty.docx"])
def test_empty_file(tmp_path, name):
    assert reason(write(tmp_path, name, b"")) == "empty file"


def test_whitespace_only_file(tmp_path):
    assert reason(write(tmp_path, "blank.md", " \n\t\n  \r\n")) == "empty file"


@pytest.mark.parametrize("name", ["junk.md", "junk.txt", "junk.html"])
def test_binary_junk_in_a_text_format(tmp_path, name):
    assert reason(write(tmp_path, name, b"# Title\n\x00\x00\x01binary")) == "not a text file"
    assert reason(write(tmp_path, "random-" + name, JUNK)) == "not a text file"


def test_random_bytes_pdf(tmp_path):
    assert reason(write(tmp_path, "random.pdf", JUNK)).startswith("not a readable PDF: ")
    fake = write(tmp_path, "fake.pdf", b"%PDF-1.4\n" + JUNK)
    assert reason(fake).startswith("not a readable PDF: ")


def test_truncated_pdf(tmp_path):
    data = make_pdf(tmp_path / "whole.pdf", ["Page one text.", "Page two text."]).read_bytes()
    assert reason(write(tmp_path, "cut.pdf", data[: len(data) // 2])).startswith(
        "not a readable PDF: "
    )


def test_password_protected_pdf(tmp_path):
    path = make_pdf(
        tmp_path / "secret.pdf", ["Salaries."], encrypt=pdfencrypt.StandardEncryption("s3cret")
    )
    assert reason(path) == "not a readable PDF: encrypted with a password"


def test_scanned_pdf_without_text(tmp_path):
    c = canvas.Canvas(str(tmp_path / "scan.pdf"))
    c.rect(72, 72, 400, 600, fill=1)  # stands in for a page image
    c.showPage()
    c.save()
    assert reason(tmp_path / "scan.pdf") == "no extractable text (scanned PDF?)"


def test_not_a_word_document(tmp_path):
    assert reason(write(tmp_path, "fake.docx", b"this is not a zip")).startswith(
        "not a readable Word document: "
    )


def test_markup_without_text(tmp_path):
    assert reason(write(tmp_path, "only-script.html", "<script>x()</script>")) == "no text found"
    assert reason(write(tmp_path, "only-meta.md", "---\ntitle: T\n---\n")) == "no text found"


def test_unreadable_paths(tmp_path):
    (tmp_path / "folder.md").mkdir()
    assert reason(tmp_path / "folder.md") == "cannot read: is a directory"
    (tmp_path / "dangling.md").symlink_to(tmp_path / "gone.md")
    assert reason(tmp_path / "dangling.md") == "a symbolic link: not followed"  # never read through


def test_permission_denied(tmp_path, monkeypatch):
    # Tests run as root, where chmod 000 does not stop reads: make the read fail instead.
    path = write(tmp_path, "locked.md", "# Secret")

    real_open = os.open

    def refuse(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    assert reason(path) == "cannot read: permission denied"


def test_an_aligned_text_table_keeps_a_cell_its_author_wrapped_in_its_row(tmp_path):
    """A revision history whose last cell runs on to an indented line was not read as a table
    at all (the continuation holds one cell), so its rows lost their header."""
    text = (
        "7. REVISION HISTORY\n"
        "===================\n\n"
        "    Version   Effective      Changes\n"
        "    -------   ------------   ----------------------------------------\n"
        "    1.0       2023-03-01     First version.\n"
        "    2.1       2026-03-01     CFO approval now starts at 10,001 EUR (was\n"
        "                             25,001 EUR); preferred supplier list added.\n"
    )
    parsed = parse_file(write(tmp_path, "purchasing.txt", text), max_bytes=LIMIT)
    lines = [line for s in parsed.sections for line in s.text.splitlines()]
    assert "Version: 1.0 · Effective: 2023-03-01 · Changes: First version." in lines, lines
    assert (
        "Version: 2.1 · Effective: 2026-03-01 · Changes: CFO approval now starts at 10,001 EUR "
        "(was 25,001 EUR); preferred supplier list added." in lines
    ), lines


def test_a_heading_typed_over_two_lines_is_one_heading_in_every_format(tmp_path):
    """A heading whose first line ends on a word no title ends with goes on in the next; two
    headings that each stand alone stay two."""
    md = "# Role Descriptions at\n# the Harbour Lantern Guild\n\nText.\n"
    parsed = parse_file(write(tmp_path, "roles.md", md), max_bytes=LIMIT)
    assert parsed.title == "Role Descriptions at the Harbour Lantern Guild"
    assert parsed.sections[0].path == ["Role Descriptions at the Harbour Lantern Guild"]
    html = "<h1>Guide to the Night Crossings of</h1><h1>the Lower Estuary</h1><p>Text.</p>"
    assert parse_file(write(tmp_path, "g.html", html), max_bytes=LIMIT).title == (
        "Guide to the Night Crossings of the Lower Estuary"
    )
    two = "# Part One\n# Introduction\n\nText.\n"
    assert parse_file(write(tmp_path, "p.md", two), max_bytes=LIMIT).title == "Part One"
