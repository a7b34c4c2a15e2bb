"""Titles of word-processor documents, as Word files and as the PDFs Debian's LibreOffice exports
from them: never the running header, never cut mid-phrase.

Each DOCX is built here with what real ones have — a running header naming the company (as a
line, or laid out as a table), a page-number footer, pages of prose, a table — and exported twice:
as LibreOffice exports by default, and tagged, as Word exports by default (its headers and footers
marked as page furniture). ``make test`` installs LibreOffice (``make office``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ingest.parse import Parsed, parse_file

pytestmark = pytest.mark.skipif(
    shutil.which("libreoffice") is None, reason="needs LibreOffice: make office"
)
COMPANY = "Harbour Lantern Guild"
LIMIT = 10 * 1024 * 1024
KEEPERS = ["Ada", "Bram", "Cleo", "Dov", "Edda", "Finn", "Greta", "Hal", "Ines", "Jory", "Kit"]
THINGS = ["lantern", "mooring line", "tide board", "bell", "fender", "ladder", "chain", "buoy"]
STATES = ["frayed", "loose", "dim", "cracked", "missing", "wet", "stuck"]


def prose(doc: Any, paragraphs: int) -> None:
    """Paragraphs that differ from each other, so no line but the running header repeats."""
    for n in range(paragraphs):
        keeper, thing = KEEPERS[n % len(KEEPERS)], THINGS[(n * 3) % len(THINGS)]
        doc.add_paragraph(
            f"{keeper} checks the {thing} at berth {n + 1} every morning and writes in the log "
            f"when it is {STATES[n % len(STATES)]}, so that the pilot who takes the "
            f"{THINGS[n % len(THINGS)]} watch after {keeper} knows what changed since the last "
            "tide, and the harbour master can order the part before the weekend."
        )


def running_header(doc: Any, text: str = COMPANY, size: float | None = None) -> None:
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Pt

    section = doc.sections[0]
    run = section.header.paragraphs[0].add_run(text)
    if size:
        run.bold, run.font.size = True, Pt(size)
    footer = section.footer.paragraphs[0]
    footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
    page = footer.add_run()
    for tag, instruction in (("begin", None), (None, "PAGE"), ("end", None)):
        field = OxmlElement("w:fldChar" if tag else "w:instrText")
        if tag:
            field.set(qn("w:fldCharType"), tag)
        else:
            field.text = instruction
        page._r.append(field)


def table_header(doc: Any) -> None:
    """A letterhead laid out as a ruled table: the company, the document's reference."""
    from docx.shared import Inches

    table = doc.sections[0].header.add_table(rows=1, cols=2, width=Inches(6))
    table.style = "Table Grid"
    for cell, text in zip(table.rows[0].cells, [COMPANY, "Ref. HL-7"], strict=True):
        cell.text = text


def fees_table(doc: Any) -> None:
    table = doc.add_table(rows=3, cols=2)
    table.style = "Table Grid"
    rows = [("Boat", "Fee per night"), ("Rowing boat", "3 tokens"), ("Sloop", "11 tokens")]
    for row, cells in zip(table.rows, rows, strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text


def _roles(doc: Any) -> None:
    doc.core_properties.title = COMPANY  # the template's company name, as the title property
    running_header(doc)
    doc.add_heading("Role Descriptions at", level=1)  # the author pressed Enter mid-title
    doc.add_heading("the Harbour Lantern Guild", level=1)
    prose(doc, 20)
    doc.add_heading("Fees", level=2)
    fees_table(doc)
    prose(doc, 20)


def _dues(doc: Any) -> None:
    doc.core_properties.title = "Harbour"  # a word of the company's name, set by a template
    running_header(doc)
    doc.add_heading("Mooring Dues", level=1)
    prose(doc, 40)


def _letterhead(doc: Any) -> None:
    table_header(doc)
    prose(doc, 40)  # no title of its own


def _wicks(doc: Any) -> None:
    doc.core_properties.title = "Microsoft Word - wick-orders.docx"  # a printer's file name
    running_header(doc)
    doc.add_heading("Lantern Wick Orders", level=1)
    prose(doc, 40)


def _same_words(doc: Any) -> None:
    running_header(doc, "Night Crossing Guide")  # the running header repeats the title
    doc.add_heading("Night Crossing Guide", level=1)
    prose(doc, 40)


def _crossing(doc: Any) -> None:
    running_header(doc)
    doc.add_paragraph("Guide to the Night Crossings of", style="Title")
    doc.add_paragraph("the Lower Estuary", style="Title")
    prose(doc, 40)


def _notice(doc: Any) -> None:
    """One page: its running header is on every page, and there is only one."""
    running_header(doc, size=20)  # the letterhead set larger than any heading
    doc.add_heading("Lantern Oil Notice", level=1)
    prose(doc, 3)


def _note(doc: Any) -> None:
    running_header(doc)
    prose(doc, 3)  # one page, no title of its own


def _fees(doc: Any) -> None:
    """No heading styles: the title is the opening line set in the largest type."""
    from docx.shared import Pt

    running_header(doc)
    title = doc.add_paragraph().add_run("Mooring Fees and Harbour Dues")
    title.bold, title.font.size = True, Pt(18)
    prose(doc, 30)


DOCUMENTS: dict[str, Callable[[Any], None]] = {
    "roles": _roles,
    "dues": _dues,
    "letterhead": _letterhead,
    "wicks": _wicks,
    "same-words": _same_words,
    "crossing": _crossing,
    "notice": _notice,
    "note": _note,
    "fees": _fees,
}
TAGGED = {"UseTaggedPDF": {"type": "boolean", "value": "true"}}


def _export(folder: Path, tagged: bool) -> None:
    """Every DOCX in ``folder`` to PDF, in one LibreOffice run."""
    target = "pdf:writer_pdf_Export:" + json.dumps(TAGGED) if tagged else "pdf"
    subprocess.run(
        ["libreoffice", "--headless", "--convert-to", target, "--outdir", str(folder)]
        + sorted(str(p) for p in folder.glob("*.docx")),
        check=True,
        capture_output=True,
        timeout=300,
        env={"HOME": str(folder), "PATH": "/usr/bin:/bin"},
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Parsed]:
    """(document, "docx" | "pdf" | "tagged.pdf") → what ingest parses from it."""
    from docx import Document

    plain, tagged = tmp_path_factory.mktemp("plain"), tmp_path_factory.mktemp("tagged")
    for name, build in DOCUMENTS.items():
        doc = Document()
        build(doc)
        for folder in (plain, tagged):
            doc.save(str(folder / f"{name}.docx"))
    _export(plain, tagged=False)
    _export(tagged, tagged=True)

    def parsed(name: str, kind: str) -> Parsed:
        path = (tagged / f"{name}.pdf") if kind == "tagged.pdf" else plain / f"{name}.{kind}"
        return parse_file(path, max_bytes=LIMIT)

    return parsed


def text_of(parsed: Parsed) -> str:
    return "\n".join(s.text for s in parsed.sections)


def header_in(parsed: Parsed) -> bool:
    """Does a line of the text hold the running header?"""
    return any(
        line.strip().startswith(COMPANY) or "HL-7" in line for line in text_of(parsed).splitlines()
    )


KINDS = ["docx", "pdf", "tagged.pdf"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_title_typed_over_two_paragraphs_is_one_title(exported, kind):
    """ "Role Descriptions at" was the title: the author ended the heading's first line with
    Enter, and the word processor's title property named the company."""
    assert exported("roles", kind).title == "Role Descriptions at the Harbour Lantern Guild"
    assert exported("crossing", kind).title == "Guide to the Night Crossings of the Lower Estuary"


@pytest.mark.parametrize("kind", KINDS)
def test_a_title_property_naming_no_document_gives_way_to_the_first_heading(exported, kind):
    assert exported("dues", kind).title == "Mooring Dues"  # a word of the running header
    assert exported("wicks", kind).title == "Lantern Wick Orders"  # a printed file's name


@pytest.mark.parametrize("kind", ["pdf", "tagged.pdf"])
def test_a_letterhead_laid_out_as_a_table_is_neither_title_nor_text(exported, kind):
    parsed = exported("letterhead", kind)
    assert parsed.title == "letterhead"  # no title of its own: the file's name
    assert not header_in(parsed)
    assert "berth 40" in text_of(parsed)  # the prose of every page is there


@pytest.mark.parametrize("kind", KINDS)
def test_a_heading_with_the_running_headers_words_is_still_the_title(exported, kind):
    parsed = exported("same-words", kind)
    assert parsed.title == "Night Crossing Guide"


def test_a_one_page_export_keeps_its_running_header_out_of_the_title(exported):
    """One page cannot show a line repeating; a tagged export says which lines are page
    furniture, as Word's do by default."""
    notice = exported("notice", "tagged.pdf")
    assert notice.title == "Lantern Oil Notice" and not header_in(notice)
    note = exported("note", "tagged.pdf")
    assert note.title == "note" and not header_in(note)


@pytest.mark.parametrize("kind", KINDS)
def test_the_title_is_the_opening_line_in_the_largest_type(exported, kind):
    assert exported("fees", kind).title == "Mooring Fees and Harbour Dues"


@pytest.mark.parametrize("kind", ["pdf", "tagged.pdf"])
def test_tables_and_every_page_survive(exported, kind):
    parsed = exported("roles", kind)
    assert "Boat: Sloop · Fee per night: 11 tokens" in text_of(parsed)
    assert "berth 20" in text_of(parsed) and len({s.page for s in parsed.sections}) >= 2
    assert not header_in(parsed)
