"""PDFs as a word processor writes them: Debian's LibreOffice turns a DOCX made here into one.

The DOCX has what real exports have: a running header (the company's name, also set as the
file's title property), a page-number footer, a heading long enough to wrap, a table, and
pages of prose. ``make test`` installs LibreOffice (``make office``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ingest.parse import parse_file

pytestmark = pytest.mark.skipif(
    shutil.which("libreoffice") is None, reason="needs LibreOffice: make office"
)
COMPANY = "Northwind Lantern Works Ltd"
HEADING = "Guidance for Volunteer Ferry Pilots on the Northern and Southern River Crossings"


def _export(tmp_path: Path) -> Path:
    from docx import Document
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from docx.shared import Pt

    doc = Document()
    doc.core_properties.title = COMPANY
    section = doc.sections[0]
    section.header.paragraphs[0].text = COMPANY
    footer = section.footer.paragraphs[0]
    footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
    run = footer.add_run()
    for tag, text in (("begin", None), (None, "PAGE"), ("end", None)):
        if tag:
            field = OxmlElement("w:fldChar")
            field.set(qn("w:fldCharType"), tag)
        else:
            field = OxmlElement("w:instrText")
            field.text = text
        run._r.append(field)
    title = doc.add_heading(HEADING, level=1)
    title.runs[0].font.size = Pt(24)
    for n in range(40):
        doc.add_paragraph(
            f"Pilot rule {n + 1}: a ferry leaves the pier only when the lantern on the mast is "
            "lit and the crossing log has been signed by the pilot on duty, whatever the hour, "
            "and the log names the passengers carried on that crossing."
        )
    doc.add_heading("Crossing allowances", level=2)
    table = doc.add_table(rows=3, cols=2)
    for row, cells in zip(
        table.rows,
        [("Crossing", "Allowance"), ("Northern", "14 tokens"), ("Southern", "9 tokens")],
        strict=True,
    ):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    docx = tmp_path / "pilots.docx"
    doc.save(str(docx))
    subprocess.run(
        ["libreoffice", "--headless", "--convert-to", "pdf", "--outdir", str(tmp_path), str(docx)],
        check=True,
        capture_output=True,
        timeout=180,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    return tmp_path / "pilots.pdf"


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return parse_file(_export(tmp_path_factory.mktemp("office")), max_bytes=10 * 1024 * 1024)


def test_the_title_is_the_whole_first_heading_not_the_running_header(parsed) -> None:  # type: ignore[no-untyped-def]
    assert parsed.title == HEADING


def test_running_header_and_page_numbers_are_not_text(parsed) -> None:  # type: ignore[no-untyped-def]
    text = "\n".join(s.text for s in parsed.sections)
    assert COMPANY not in text
    assert "Pilot rule 40:" in text  # the prose of every page is there
    assert len({s.page for s in parsed.sections}) >= 2


def test_table_rows_keep_their_header(parsed) -> None:  # type: ignore[no-untyped-def]
    text = "\n".join(s.text for s in parsed.sections)
    assert "Crossing: Northern" in text and "14 tokens" in text
