"""A PDF as sections of whole paragraphs, one run per page, with its tables as rows.

What a word processor exports is laid out for paper: every line is wrapped, words are hyphenated
across lines, each page repeats a running header and a page number, and a paragraph runs on from
one page to the next. Read line by line, every sentence would be cut. So, using the position and
font of every line (pdfplumber):

- running headers and footers (a line in the top or bottom margin that repeats on most pages,
  digits aside, a letterhead laid out as a table too; or any line a tagged PDF marks as page
  furniture, as Word's exports do, which tells them apart on a single page) and page numbers
  are dropped;
- tables become one line per row that keeps its header ("Level: L4 · Title: …"): ruled grids,
  and tables drawn without rules, found by cells that start at the same x positions (a cell
  that wraps is joined across its lines);
- lines are joined into paragraphs — a paragraph ends at a wider gap, a bullet, a heading, or a
  line that ends a sentence and is visibly short — with hyphenated line breaks mended;
- a paragraph that runs on to the next page stays whole, on the page where it starts;
- headings are lines set larger (or bold and short) than the body text, a heading typed over two
  lines joined when its first ends on a word no title ends with ("Role Descriptions at"); the
  title is the document's metadata title unless it names no document (``ingest.titles``), else
  its first and largest heading — never a running header.
"""

from __future__ import annotations

import io
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ingest.documents import Section
from ingest.errors import BadDocument, past_limit
from ingest.languages import CJK
from ingest.titles import cut_short, line_key, names_no_document

if TYPE_CHECKING:
    from pdfplumber.page import Page
    from pdfplumber.pdf import PDF
    from pdfplumber.table import Table

COLUMN_GAP = 1.2  # ems between two runs of a line that make them two table cells
CELL_ALIGN = 4.0  # points within which cells of one column start
MARGIN = 0.12  # share of the page height, top and bottom, where running headers and footers sit
_PAGE_NUMBER = re.compile(
    r"^(?:page|seite|стор(?:інка)?\.?|стр\.?|第)?\s*[-–—]?\s*\d{1,4}\s*[-–—]?\s*(?:(?:of|/|von|из|з)\s*\d{1,4})?\s*页?$",
    re.I,
)
_BULLET = re.compile(r"^(?:[-–—•·▪◦○●*]|\(?\d{1,2}[.)]|\(?[a-z][.)])\s+")
_BULLET_ONLY = re.compile(r"^[-–—•·▪◦○●*]$")
_ENDS_SENTENCE = re.compile(r"[.!?:;。！？：；)\]\"”’]$")


@dataclass
class Line:
    text: str
    top: float
    bottom: float
    x0: float
    size: float
    bold: bool
    page: int
    row: bool = False  # a table row, already "header: value · …"
    artifact: bool = False  # marked as page furniture (a running header, a page number)
    # (x0, text) of each run of the line set apart by a gap wider than a space: table cells
    segments: list[tuple[float, str]] = field(default_factory=list)


@dataclass
class _Block:
    """A paragraph (or heading, or table row) being built, and where it started."""

    page: int
    heading: int = 0  # heading level; 0 for body text
    row: bool = False
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return join_lines(self.parts)


def join_lines(parts: list[str]) -> str:
    """Wrapped lines as one paragraph: a hyphen that only broke a word is mended."""
    out = ""
    for part in parts:
        part = part.strip()
        if not out:
            out = part
        elif re.search(r"[^\W\d_]-$", out) and re.match(r"[a-zà-ÿа-яіїєґ]", part):
            out = out[:-1] + part
        elif CJK.search(out[-1:]):
            out += part  # CJK wraps without a space
        else:
            out += " " + part
    return out


def table_row(header: list[str], cells: list[str]) -> str:
    """A table row as "col: value · col: value", which reads well in a chunk and in a citation."""
    pairs = [f"{h}: {v}" if h else v for h, v in zip(header, cells, strict=False) if v]
    pairs += [v for v in cells[len(header) :] if v]
    return " · ".join(pairs)


def _clean(cell: str | None) -> str:
    return " ".join((cell or "").split())


def _artifact(chars: list[dict[str, Any]]) -> bool:
    """Text a tagged PDF marks as an artifact: page furniture, not the document's content."""
    shown = [c for c in chars if c["text"].strip()]
    return bool(shown) and all(c.get("tag") == "Artifact" for c in shown)


def _table_lines(table: Table, page_no: int, chars: list[dict[str, Any]]) -> list[Line]:
    rows = [[_clean(c) for c in row] for row in table.extract()]
    rows = [r for r in rows if any(r)]
    if not rows:
        return []
    has_header = len(rows) > 1 and not any(re.search(r"\d", c) for c in rows[0] if c)
    header = rows[0] if has_header else []
    x0, top, x1, bottom = table.bbox
    inside = [c for c in chars if x0 <= c["x0"] <= x1 and top <= c["top"] <= bottom]
    artifact = _artifact(inside)
    return [
        Line(
            table_row(header, cells),
            top + i,
            top + i,
            x0,
            0.0,
            False,
            page_no,
            True,
            artifact,
        )
        for i, cells in enumerate(rows[1 if header else 0 :])
    ]


def _page_lines(page: Page, page_no: int) -> list[Line]:
    tables = page.find_tables()
    boxes = [t.bbox for t in tables]

    def in_table(line: dict[str, Any]) -> bool:
        middle = (line["top"] + line["bottom"]) / 2
        return any(x0 - 1 <= line["x0"] <= x1 and t <= middle <= b for x0, t, x1, b in boxes)

    lines: list[Line] = []
    for raw in page.extract_text_lines(return_chars=True, strip=True):
        if not raw["text"].strip() or in_table(raw):
            continue
        chars = [c for c in raw["chars"] if c["text"].strip()] or raw["chars"]
        size = statistics.median(c["size"] for c in chars)
        bold = sum("bold" in c["fontname"].lower() for c in chars) > len(chars) / 2
        lines.append(
            Line(
                raw["text"].strip(),
                raw["top"],
                raw["bottom"],
                raw["x0"],
                size,
                bold,
                page_no,
                artifact=_artifact(raw["chars"]),
                segments=_segments(raw["chars"], size),
            )
        )
    lines = _text_tables(lines, page_no)
    for table in tables:
        lines += _table_lines(table, page_no, page.chars)
    return sorted(lines, key=lambda line: line.top)


def _segments(chars: list[dict[str, Any]], size: float) -> list[tuple[float, str]]:
    """The runs of a line that a gap of more than ``COLUMN_GAP`` ems sets apart, as (x0, text):
    the cells of a table drawn without rules. Ordinary word spaces, even justified, stay inside
    a run."""
    runs: list[tuple[float, str]] = []
    text, x0, end = "", 0.0, None
    for c in chars:
        if not c["text"].strip():
            continue
        gap = c["x0"] - end if end is not None else 0.0
        if end is None or gap > COLUMN_GAP * size:
            if text:
                runs.append((x0, text))
            text, x0 = c["text"], c["x0"]
        else:
            text += (" " if gap > 0.15 * size else "") + c["text"]
        end = c["x1"]
    if text:
        runs.append((x0, text))
    return runs


def _text_tables(lines: list[Line], page_no: int) -> list[Line]:
    """Tables drawn without rules, as word processors often export them: runs of lines whose
    cells start at the same few x positions. A cell that wraps continues on the next line in
    its own column, closer to the line above than rows are to each other; the first row is the
    header when it holds no figure. Each table becomes one line per row that keeps its header,
    as ruled tables do; every other line is left as it was."""
    out: list[Line] = []
    n = 0
    while n < len(lines):
        run = _table_run(lines, n)
        if run is None:
            out.append(lines[n])
            n += 1
            continue
        end, columns = run
        rows = _table_rows(lines[n:end], columns)
        has_header = len(rows) > 2 and not any(_FIGURE.search(c) for c in rows[0] if c)
        header = rows[0] if has_header else []
        first = lines[n]
        for i, cells in enumerate(rows[1 if header else 0 :]):
            top = first.top + i * 0.01
            out.append(
                Line(table_row(header, cells), top, top, first.x0, first.size, False, page_no, True)
            )
        n = end
    return out


def _column_of(x: float, columns: list[float]) -> int | None:
    near = [k for k, c in enumerate(columns) if abs(x - c) <= CELL_ALIGN]
    return near[0] if near else None


def _table_run(lines: list[Line], start: int) -> tuple[int, list[float]] | None:
    """(end, column starts) of a table starting at ``lines[start]``, or None. A table has at
    least three lines of two or more cells, sharing at least two column starts, with cells
    short enough to be cells (two columns of prose are not a table)."""
    first = lines[start]
    if len(first.segments) < 2:
        return None
    columns = [x for x, _ in first.segments]
    end, multi = start + 1, 1
    while end < len(lines):
        line, above = lines[end], lines[end - 1]
        if line.row or line.top - above.bottom > 1.6 * max(above.size, 1.0):
            break
        placed = [_column_of(x, columns) for x, _ in line.segments]
        if any(k is None for k in placed):
            break
        if len(line.segments) >= 2:
            multi += 1
        end += 1
    if multi < 3:
        return None
    cells = [t for ln in lines[start:end] for _, t in ln.segments]
    if statistics.median(len(t) for t in cells) > 40:
        return None
    return end, columns


def _table_rows(lines: list[Line], columns: list[float]) -> list[list[str]]:
    """The rows of a table's lines: a line closer to the one above than the table's rows are
    apart (or one that leaves the first column empty) continues the row above, cell by cell."""
    pitches = [b.top - a.top for a, b in zip(lines, lines[1:], strict=False)]
    step = min(pitches) if pitches else 0.0
    rows: list[list[str]] = []
    last: Line | None = None
    for line in lines:
        cells = [""] * len(columns)
        for x, text in line.segments:
            k = _column_of(x, columns)
            if k is not None:
                cells[k] = f"{cells[k]} {text}".strip()
        wraps = (
            rows
            and last is not None
            and (not cells[0] or (line.top - last.top <= step * 1.2 and max(pitches) > step * 1.3))
        )
        if wraps:
            rows[-1] = [
                join_lines([a, b]) if a and b else a or b
                for a, b in zip(rows[-1], cells, strict=True)
            ]
        else:
            rows.append(cells)
        last = line
    return rows


def _drop_furniture(
    pages: list[list[Line]], heights: list[float]
) -> tuple[list[list[Line]], set[str]]:
    """Running headers and footers and page numbers: lines a tagged PDF marks as artifacts, and
    lines (table rows too: a letterhead laid out as a table) repeated in a margin on most pages,
    in the same type — a heading on page one with the running header's words is set larger.
    Also the keys (``line_key``) of those lines, which no title may be."""

    def in_margin(line: Line) -> bool:
        height = heights[line.page - 1]
        return line.top < height * MARGIN or line.bottom > height * (1 - MARGIN)

    def key(line: Line) -> tuple[str, float]:
        return line_key(line.text), round(line.size)

    counts: Counter[tuple[str, float]] = Counter()
    for lines in pages:
        counts.update({key(ln) for ln in lines if in_margin(ln)})
    repeated = {k for k, n in counts.items() if n >= max(2, len(pages) // 2)}
    kept = [
        [
            ln
            for ln in lines
            if not ln.artifact
            and (
                not in_margin(ln)
                or (key(ln) not in repeated and (ln.row or not _PAGE_NUMBER.match(ln.text)))
            )
        ]
        for lines in pages
    ]
    marked = {line_key(ln.text) for lines in pages for ln in lines if ln.artifact}
    return kept, {text for text, _ in repeated} | marked


def _heading_levels(lines: list[Line], body: float) -> dict[float, int]:
    """Font sizes clearly larger than the body text, largest first: level 1, 2, 3…"""
    sizes = sorted({round(ln.size, 1) for ln in lines if ln.size >= body * 1.12}, reverse=True)
    return {size: min(i + 1, 4) for i, size in enumerate(sizes)}


def _level(line: Line, levels: dict[float, int], body: float) -> int:
    if line.row or len(line.text) > 120:
        return 0
    if round(line.size, 1) in levels:  # "2. How to read the bands" set large is a heading
        return levels[round(line.size, 1)]
    if _BULLET.match(line.text):
        return 0
    short = len(line.text.split()) <= 12 and not line.text.endswith((".", ",", ";"))
    if line.bold and short and line.size >= body * 0.98:
        return max(levels.values(), default=0) + 1
    return 0


def _blocks(pages: list[list[Line]], body: float, levels: dict[float, int]) -> list[_Block]:
    blocks: list[_Block] = []
    gaps = [
        b.top - a.bottom
        for lines in pages
        for a, b in zip(lines, lines[1:], strict=False)
        if not a.row and not b.row and abs(a.size - body) < 0.5 and abs(b.size - body) < 0.5
    ]
    leading = statistics.median([g for g in gaps if g >= 0] or [body * 0.3])
    last: Line | None = None
    for lines in pages:
        for line in lines:
            level = _level(line, levels, body)
            current = blocks[-1] if blocks else None
            continues = (
                current is not None
                and not level
                and not current.heading
                and not line.row
                and not current.row
                and last is not None
                and not _BULLET.match(line.text)
                and not _BULLET_ONLY.match(current.parts[-1])
                and (
                    # the next line of the same paragraph, or its run-on to the next page
                    (line.page == last.page and line.top - last.bottom <= leading * 1.8)
                    or (line.page == last.page + 1 and not _ENDS_SENTENCE.search(current.text))
                )
            )
            # a heading too long for one line goes on, at its size, right under itself; one
            # whose line ends on a word no title ends with goes on whatever the gap (its author
            # pressed Enter: "Role Descriptions at" / "the Harbour Lantern Guild")
            wraps = (
                current is not None
                and level
                and current.heading == level
                and last is not None
                and line.page == last.page
                and abs(line.size - last.size) < 0.5
                and (
                    0 <= line.top - last.bottom <= line.size * 0.5
                    or (line.top >= last.bottom and cut_short(current.text))
                )
                and len(current.parts) < 3
            )
            if wraps and current is not None:
                current.parts.append(line.text)
            elif current is not None and _BULLET_ONLY.match(current.parts[-1]) and not level:
                current.parts[-1] += " " + line.text  # a bullet drawn apart from its text
            elif continues and current is not None:
                current.parts.append(line.text)
            else:
                blocks.append(_Block(line.page, level, line.row, [line.text]))
            last = line
    return blocks


_FIGURE = re.compile(r"\d")


def _short_line(block: _Block) -> bool:
    """One line, shorter than a wrapped line of body text, with no sentence end: a heading, a
    column header, or a step of a schedule."""
    text = block.text
    return (
        len(block.parts) == 1
        and not block.row
        and len(text) <= 80
        and len(text.split()) <= 14
        and not _ENDS_SENTENCE.search(text)
        and not _BULLET.match(text)
    )


def _schedule_items(blocks: list[_Block]) -> None:
    """Short lines with figures under a sentence that ends in ":" ("… according to the following
    scale:" → "in months 13 to 24 50%") are the items of the list that sentence introduces, drawn
    without bullets: they become items, so they are quoted as facts instead of being read as
    headings over nothing. A short line without a figure right after the colon is the list's
    column header: it stays a line of its own, and is no heading even when set in bold (a colon
    introduces what follows; it never ends a section)."""
    for n, block in enumerate(blocks):
        if block.heading or block.row or not block.text.rstrip().endswith((":", "：")):
            continue
        following = blocks[n + 1 :]
        if following and _short_line(following[0]) and not _FIGURE.search(following[0].text):
            header, following = following[0], following[1:]  # "You leave   Share you repay"
        else:
            header = None
        steps = 0
        for step in following:
            if step.heading or not _short_line(step):
                break
            if not steps and not _FIGURE.search(step.text):
                break
            step.parts = ["- " + step.text]
            steps += 1
        if steps and header is not None:
            header.heading = 0


def _sections(blocks: list[_Block], title: str) -> list[Section]:
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    parts: list[str] = []
    page = blocks[0].page if blocks else 1
    tight = False

    def close() -> None:
        text = "".join(parts).strip()
        if text:
            headings = [t for _, t in path]
            sections.append(Section(path=headings, text=text, page=page, anchor=f"page={page}"))
        parts.clear()

    for block in blocks:
        if block.heading:
            close()
            while path and path[-1][0] >= block.heading:
                path.pop()
            if block.text.casefold() != title.casefold() or path:
                path.append((block.heading, block.text))
            page = block.page
            continue
        if block.page != page:
            close()
            page = block.page
        item = block.row or bool(_BULLET.match(block.text))  # rows and list items stay together
        if parts:
            parts.append("\n" if item and tight else "\n\n")
        parts.append(block.text)
        tight = item
    close()
    return sections


def bookmarks(data: bytes) -> dict[int, list[str]]:
    """Page number → the bookmark path in force on that page; {} when there are none."""
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        outline = reader.outline
    except Exception:
        return {}
    starts: list[tuple[int, list[str]]] = []

    def visit(items: list[Any], parents: list[str]) -> None:  # pypdf's nested outline
        path = parents
        for item in items:
            if isinstance(item, list):
                visit(item, path)
            else:
                path = [*parents, str(item.title).strip()]
                number = reader.get_destination_page_number(item)
                if number is None:  # a bookmark to no page: the outline is not trusted
                    raise LookupError(item.title)
                starts.append((number + 1, path))

    try:
        visit(outline, [])
    except Exception:
        return {}
    by_page: dict[int, list[str]] = {}
    current: list[str] = []
    ordered = _whole_titles(sorted(starts, key=lambda s: s[0]))
    for page in range(1, len(reader.pages) + 1):
        while ordered and ordered[0][0] <= page:
            current = ordered.pop(0)[1]
        by_page[page] = current
    return by_page if starts else {}


def _whole_titles(starts: list[tuple[int, list[str]]]) -> list[tuple[int, list[str]]]:
    """Bookmarks of one heading typed over two paragraphs, as one: the first ends on a word no
    title ends with, the second follows it at its level on the same page."""
    out: list[tuple[int, list[str]]] = []
    for page, path in starts:
        if out:
            last_page, last = out[-1]
            same_level = len(last) == len(path) and last[:-1] == path[:-1]
            if same_level and page == last_page and cut_short(last[-1]):
                out[-1] = (page, [*path[:-1], f"{last[-1]} {path[-1]}"])
                continue
        out.append((page, path))
    return out


def _metadata_title(pdf: PDF) -> str:
    try:
        title = str((pdf.metadata or {}).get("Title") or "").strip()
    except Exception:
        return ""
    return "" if title.lower() in ("untitled", "none") else title


def parse_pdf(data: bytes, stem: str, max_pages: int = 1_000) -> tuple[str, list[Section]]:
    """The document's title and its sections; ``BadDocument`` when no text can be read, or past
    ``max_pages`` (counted before any page is read: 3,000 pages took 19 s and 394 MB)."""
    import pdfplumber  # imported here: only PDFs pay for it
    from pdfminer.pdfparser import PDFSyntaxError

    if b"%PDF-" not in data[:1024]:
        raise BadDocument("not a readable PDF: it does not start with a PDF header")
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            if len(pdf.pages) > max_pages:
                raise BadDocument(
                    past_limit(f"{len(pdf.pages):,} pages", max_pages, "MAX_PDF_PAGES", "pages")
                )
            pages = [_page_lines(page, i) for i, page in enumerate(pdf.pages, 1)]
            heights = [float(page.height) for page in pdf.pages]
            meta_title = _metadata_title(pdf)
    except BadDocument:
        raise
    except PDFSyntaxError as exc:
        raise BadDocument(f"not a readable PDF: {exc}") from None
    except Exception as exc:  # pdfminer raises many types for damaged or encrypted files
        inner = exc.args[0] if exc.args and isinstance(exc.args[0], Exception) else exc
        name = type(inner).__name__
        if "Password" in name or "Encrypt" in name:
            raise BadDocument("not a readable PDF: encrypted with a password") from None
        raise BadDocument(f"not a readable PDF: {inner or name}") from None
    pages, furniture = _drop_furniture(pages, heights)
    # A word processor's title property is often the template's company name, which is also
    # the running header: a line on every page names no one document.
    if meta_title and names_no_document(meta_title, furniture):
        meta_title = ""
    text_lines = [ln for lines in pages for ln in lines if not ln.row]
    if not text_lines and not any(pages):
        raise BadDocument("no extractable text (scanned PDF?)")
    sized = Counter(round(ln.size, 1) for ln in text_lines for _ in ln.text)
    body = sized.most_common(1)[0][0] if sized else 10.0
    levels = _heading_levels(text_lines, body)
    blocks = _blocks(pages, body, levels)
    headings = [b for b in blocks if b.heading]
    first = min(headings, key=lambda b: (b.heading, b.page)) if headings else None
    opening = blocks[0].text if blocks else ""
    title = (
        meta_title
        or (first.text if first else "")
        or (opening if len(opening.split()) <= 12 and not _ENDS_SENTENCE.search(opening) else "")
        or stem
    )
    marks = bookmarks(data)
    if marks:  # the author's own outline beats headings guessed from font sizes
        for block in blocks:
            block.heading = 0
    _schedule_items(blocks)
    sections = _sections(blocks, title)
    if marks:
        for section in sections:
            section.path = list(marks.get(section.page or 1, []))
    if not sections:
        raise BadDocument("no extractable text (scanned PDF?)")
    return title[:200], sections
