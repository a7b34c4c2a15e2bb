"""Turn one file into a title, a list of Sections (heading path + text) and its front-matter.

Structure is kept on purpose: the chunker cuts along sections, and the heading path becomes the
breadcrumbs that make a chunk understandable on its own. Anything we cannot read raises
``BadDocument`` with a reason the document's owner can act on; the batch then goes on without it.
"""

from __future__ import annotations

import datetime as dt
import errno
import io
import os
import re
import stat
import unicodedata
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from bs4 import BeautifulSoup, CData, NavigableString, PageElement, Tag
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ingest.documents import Section
from ingest.errors import BadDocument, human_size, past_limit
from ingest.settings import IngestSettings
from ingest.titles import cut_short, line_key, names_no_document

DEFAULT_LIMITS = IngestSettings()


@dataclass
class Parsed:
    title: str
    sections: list[Section]
    meta: dict[str, Any] = field(
        default_factory=dict
    )  # Markdown front-matter as written; {} for other formats


def parse_file(path: Path, *, max_bytes: int, limits: IngestSettings = DEFAULT_LIMITS) -> Parsed:
    """Read and parse one file. Raises BadDocument when the file cannot be indexed."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in _PARSERS:
        raise BadDocument(f"unsupported file type: {suffix or 'no extension'}")
    return parse_bytes(read_file(path, max_bytes), suffix, path.stem, limits)


def read_file(path: Path, max_bytes: int) -> bytes:
    """A file's bytes, never through a symbolic link (``O_NOFOLLOW``: a file swapped for a link
    after the folder was listed is refused too) and never more than ``max_bytes`` of them."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the last part of the path is a symbolic link
            raise BadDocument("a symbolic link: not followed") from None
        raise BadDocument(f"cannot read: {(exc.strerror or str(exc)).lower()}") from exc
    try:
        with os.fdopen(fd, "rb") as f:
            status = os.fstat(f.fileno())
            if stat.S_ISDIR(status.st_mode):
                raise BadDocument("cannot read: is a directory")
            if not stat.S_ISREG(status.st_mode):  # a FIFO would block, a device never end
                raise BadDocument("cannot read: not a regular file")
            size = status.st_size
            data = f.read(max_bytes + 1) if size <= max_bytes else b""
    except OSError as exc:
        raise BadDocument(f"cannot read: {(exc.strerror or str(exc)).lower()}") from exc
    if size > max_bytes or len(data) > max_bytes:
        raise BadDocument(
            f"too large: {human_size(max(size, len(data)))} > {human_size(max_bytes)} limit "
            "(FOOTNOTE_INGEST__MAX_FILE_MB)"
        )
    return data


def parse_bytes(
    data: bytes, suffix: str, stem: str, limits: IngestSettings = DEFAULT_LIMITS
) -> Parsed:
    """Parse a document's bytes as the file type ``suffix`` names (``.html``, ``.pdf``, …); what a
    connector fetched goes through the same parsers as a file. ``limits`` bound what one input
    may cost; past one, ``BadDocument`` names the setting."""
    if suffix not in _PARSERS:
        raise BadDocument(f"unsupported file type: {suffix or 'no extension'}")
    if not data.strip():
        raise BadDocument("empty file")
    try:
        parsed = _PARSERS[suffix](data, stem, limits)
    except RecursionError:  # a structure nested deeper than a check below foresaw
        raise BadDocument(
            past_limit("nested too deeply to read", limits.max_nesting, "MAX_NESTING", "levels")
        ) from None
    if not any(s.text.strip() for s in parsed.sections):
        raise BadDocument("no text found")
    return parsed


_CONTROL = re.compile(
    r"[\x00-\x08\x0e-\x1f\x7f-\x9f]"
)  # never in real text; tab and newlines are fine


def _decode(data: bytes) -> str:
    """Bytes of a text format to str, or BadDocument("not a text file") for binary junk."""
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with BOM, as Notepad may save
            text = data.decode("utf-16")
        elif b"\x00" in data:
            raise BadDocument("not a text file")
        else:
            text = _utf8_or_cp1252(data)
    except UnicodeDecodeError:
        raise BadDocument("not a text file") from None
    if len(_CONTROL.findall(text)) > 1 + len(text) // 100:
        raise BadDocument("not a text file")
    return text


def _utf8_or_cp1252(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    # UTF-8 with a couple of damaged bytes (say, a cut-off file) is kept as it is. Windows-1252
    # text fails UTF-8 too, but then no valid multi-byte character decodes at all.
    text = data.decode("utf-8-sig", errors="replace")
    looks_utf8 = any(ord(c) > 127 and c != "\ufffd" for c in text)
    if looks_utf8 and text.count("\ufffd") <= 1 + len(text) // 1000:
        return text
    return data.decode("cp1252")  # raises UnicodeDecodeError unless it decodes cleanly


def slugify(heading: str) -> str:
    """GitHub-style anchor: lowercase, punctuation dropped, spaces to dashes; any script kept."""
    kept = (
        c
        for c in heading.strip().lower()
        if c.isalnum() or c in " -_" or unicodedata.category(c).startswith("M")
    )
    return "".join(kept).replace(" ", "-")


def _row(header: list[str], cells: list[str]) -> str:
    """A table row as "col: value · col: value", which reads well in a chunk and in a citation."""
    from ingest.pdf import table_row

    return table_row(header, cells)


class _Outline:
    """Collects text under the current heading path; each new heading closes a section."""

    def __init__(self) -> None:
        self.sections: list[Section] = []
        self.headings: list[tuple[int, str]] = []  # (level, title) in document order
        self._stack: list[tuple[int, str]] = []
        self._anchor = ""
        self._parts: list[str] = []
        self._tight = False
        self._slugs: Counter[str] = Counter()

    def heading(self, level: int, title: str, anchor: str = "") -> None:
        title = " ".join(title.split())
        if not title:
            return
        last = self._stack[-1] if self._stack else None
        if (
            last is not None
            and last[0] == level
            and not self._parts
            and self.headings[-1] == last
            and (level == 0 or cut_short(last[1]))
        ):
            # one heading typed over two paragraphs: the first ends on a word no title ends with
            # ("Role Descriptions at" / "the Harbour Lantern Guild"), or both are the title
            whole = (level, f"{last[1]} {title}")
            self._stack[-1] = self.headings[-1] = whole
            return
        self._close()
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, title))
        self.headings.append((level, title))
        if not anchor:  # GitHub numbers repeated slugs: faq, faq-1, faq-2
            slug = slugify(title)
            anchor = f"{slug}-{self._slugs[slug]}" if self._slugs[slug] else slug
            self._slugs[slug] += 1
        self._anchor = anchor

    def add(self, text: str, tight: bool = False) -> None:
        """Add a block; list items and table rows (tight) follow each other on single lines."""
        text = text.strip("\n")
        if not text.strip():
            return
        if self._parts:
            self._parts.append("\n" if tight and self._tight else "\n\n")
        self._parts.append(text)
        self._tight = tight

    def end_block(self) -> None:
        """A list or table ended: whatever comes next starts after a blank line."""
        self._tight = False

    def first(self, level: int | None = None) -> str | None:
        return next((t for lvl, t in self.headings if level is None or lvl == level), None)

    def finish(self) -> list[Section]:
        self._close()
        return self.sections

    def _close(self) -> None:
        text = "".join(self._parts).strip()
        if text:
            path = [t for _, t in self._stack]
            self.sections.append(Section(path=path, text=text, anchor=self._anchor))
        self._parts, self._tight = [], False


# --- Markdown ---------------------------------------------------------------------------------

_MD = MarkdownIt("commonmark").enable("table")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)


_FLOW_BRACKETS = re.compile(r"[\[\]{}]")


class _BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]  # untyped stubs
    """PyYAML's safe loader with a count of aliases and a bound on nesting: each alias may copy
    a whole subtree (nine levels of nine turn 441 bytes into a 52 MB title), and each level of
    nesting is a level of recursion."""

    max_aliases = DEFAULT_LIMITS.max_yaml_aliases
    max_nesting = DEFAULT_LIMITS.max_nesting
    aliases = depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > self.max_aliases:
                raise BadDocument(
                    past_limit("YAML aliases", self.max_aliases, "MAX_YAML_ALIASES", "aliases")
                )
        self.depth += 1
        if self.depth > self.max_nesting:
            raise BadDocument(
                past_limit("YAML nested too deeply", self.max_nesting, "MAX_NESTING", "levels")
            )
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def safe_yaml(text: str, limits: IngestSettings = DEFAULT_LIMITS) -> Any:
    """``yaml.safe_load`` within the limits (``BadDocument`` past one). Flow nesting
    (``[[[…``) is counted before PyYAML sees it: its scanner takes time quadratic in the depth
    it reaches before the loader can stop it (seconds for a few KB)."""
    depth = deepest = 0
    for bracket in _FLOW_BRACKETS.findall(text):  # inside quotes too: an overestimate, safe
        depth = depth + 1 if bracket in "[{" else max(0, depth - 1)
        deepest = max(deepest, depth)
    if deepest > limits.max_nesting:
        raise BadDocument(
            past_limit("YAML nested too deeply", limits.max_nesting, "MAX_NESTING", "levels")
        )
    loader = _BoundedLoader(text)
    loader.max_aliases, loader.max_nesting = limits.max_yaml_aliases, limits.max_nesting
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _front_matter(text: str, limits: IngestSettings) -> tuple[dict[str, Any], str]:
    """Split off a leading ``---`` YAML block. Broken YAML is an error: it may carry the ACL."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        meta = safe_yaml(match.group(1), limits) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)  # line 1 of the YAML is line 2 of the file
        where = f" (line {mark.line + 2})" if mark else ""
        raise BadDocument(
            f"front-matter is not valid YAML: {getattr(exc, 'problem', exc)}{where}"
        ) from None
    if not isinstance(meta, dict):
        raise BadDocument("front-matter is not a YAML mapping (key: value lines)")
    # YAML turns `updated: 2024-05-01` into a date; keep the ISO text so meta stays JSON-friendly.
    meta = {k: v.isoformat() if isinstance(v, dt.date) else v for k, v in meta.items()}
    return meta, text[match.end() :]


def _md_inline(token: Token) -> str:
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline", "image"):  # image content is its alt text
            parts.append(child.content)
        elif child.type == "softbreak":  # a wrapped source line, not a new line of content
            parts.append(" ")
        elif child.type == "hardbreak":
            parts.append("\n")
    return "".join(parts).strip()


def _parse_markdown(data: bytes, stem: str, limits: IngestSettings) -> Parsed:
    meta, body = _front_matter(_decode(data), limits)
    outline = _Outline()
    lists: list[int | None] = []  # one per open list: next number, or None for bullets
    marker: str | None = None  # "- " or "3. " waiting for the list item's first line
    header: list[str] | None = None
    row: list[str] = []
    tokens = _MD.parse(body)
    for i, tok in enumerate(tokens):
        kind = tok.type
        if kind == "inline":
            text, opener = _md_inline(tok), tokens[i - 1].type
            if opener == "heading_open":
                outline.heading(int(tokens[i - 1].tag[1]), text)
            elif opener in ("th_open", "td_open"):
                row.append(text)
            elif lists:
                indent = "  " * (len(lists) - 1)
                outline.add(indent + (marker or "  ") + text, tight=True)
                marker = None
            else:
                outline.add(text)
        elif kind in ("bullet_list_open", "ordered_list_open"):
            lists.append(int(tok.attrGet("start") or 1) if kind == "ordered_list_open" else None)
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
            if not lists:
                outline.end_block()
        elif kind == "list_item_open":
            number = lists[-1]
            marker = "- " if number is None else f"{number}. "
            if number is not None:
                lists[-1] = number + 1
        elif kind == "table_open":
            header = None
        elif kind == "table_close":
            outline.end_block()
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close":
            if header is None:
                header = row
            else:
                outline.add(_row(header, row), tight=True)
        elif kind in ("fence", "code_block"):
            outline.add(tok.content)
        elif kind == "html_block":
            outline.add(BeautifulSoup(tok.content, "html.parser").get_text(" ", strip=True))
    title = meta.get("title") or outline.first(level=1) or stem
    return Parsed(title=str(title), sections=outline.finish(), meta=meta)


# --- HTML -------------------------------------------------------------------------------------

_DROP = ["script", "style", "nav", "noscript", "template", "head", "svg"]
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_INLINE = {
    "a",
    "abbr",
    "b",
    "bdi",
    "bdo",
    "cite",
    "code",
    "data",
    "dfn",
    "em",
    "font",
    "i",
    "kbd",
    "label",
    "mark",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strong",
    "sub",
    "sup",
    "time",
    "u",
    "var",
}


def _html_text(node: PageElement) -> str:
    if isinstance(node, Tag):
        text = node.get_text(" ")
    else:  # a string; comments and doctypes are strings too, but not content
        text = str(node) if type(node) in (NavigableString, CData) else ""
    return " ".join(text.split())


class _HtmlWalker:
    """Walks the tree in order: headings open sections, tables/lists become lines, rest paragraphs."""

    def __init__(self) -> None:
        self.outline = _Outline()
        self._inline: list[str] = []

    def walk(self, node: Tag) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if type(child) in (NavigableString, CData):  # comments and doctypes are strings too
                    self._inline.append(re.sub(r"\s+", " ", str(child)))
            elif not isinstance(child, Tag):
                continue
            elif child.name in _HEADINGS:
                self._flush()
                self.outline.heading(
                    _HEADINGS[child.name], _html_text(child), str(child.get("id", ""))
                )
            elif child.name == "table":
                self._flush()
                for line in _html_table(child):
                    self.outline.add(line, tight=True)
                self.outline.end_block()
            elif child.name in ("ul", "ol"):
                self._flush()
                self._list(child, depth=0)
                self.outline.end_block()
            elif child.name == "br":
                self._inline.append("\n")
            elif child.name in _INLINE:
                self.walk(child)
            else:  # a block element: what is inside is its own paragraph
                self._flush()
                self.walk(child)
                self._flush()

    def finish(self) -> list[Section]:
        self._flush()
        return self.outline.finish()

    def _list(self, node: Tag, depth: int) -> None:
        for number, item in enumerate(node.find_all("li", recursive=False), 1):
            marker = f"{number}. " if node.name == "ol" else "- "
            own = " ".join(
                _html_text(c) for c in item.children if getattr(c, "name", None) not in ("ul", "ol")
            )
            self.outline.add("  " * depth + marker + " ".join(own.split()), tight=True)
            for nested in item.find_all(["ul", "ol"], recursive=False):
                self._list(nested, depth + 1)

    def _flush(self) -> None:
        lines = (line.strip() for line in "".join(self._inline).split("\n"))
        self.outline.add("\n".join(line for line in lines if line))
        self._inline = []


def _html_table(table: Tag) -> list[str]:
    rows = [
        [_html_text(cell) for cell in tr.find_all(["th", "td"], recursive=False)]
        for tr in table.find_all("tr")
    ]
    first = table.find("tr")
    has_header = first is not None and all(
        c.name == "th" for c in first.find_all(["th", "td"], recursive=False)
    )
    header = rows[0] if has_header and rows else []
    return [_row(header, cells) for cells in rows[1 if header else 0 :]]


def _nesting_within(root: Tag, limit: int) -> None:
    """``BadDocument`` when elements nest deeper than ``limit`` (the walk below recurses once a
    level: 3,000 nested ``<div>``s would raise RecursionError). Counted without recursing."""
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise BadDocument(
                past_limit("elements nested too deeply", limit, "MAX_NESTING", "levels")
            )
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tag))


def _parse_html(data: bytes, stem: str, limits: IngestSettings) -> Parsed:
    soup = BeautifulSoup(_decode(data), "html.parser")
    _nesting_within(soup, limits.max_nesting)
    page_title = _html_text(soup.title) if soup.title else ""
    for tag in soup(_DROP):
        tag.decompose()
    walker = _HtmlWalker()
    walker.walk(soup.body or soup)
    sections = walker.finish()
    title = page_title or walker.outline.first(level=1) or stem
    return Parsed(title=title, sections=sections, meta={})


# --- PDF ---------------------------------------------------------------------------------------


def _parse_pdf(data: bytes, stem: str, limits: IngestSettings) -> Parsed:
    """Whole paragraphs and table rows, one section per heading and page (``ingest.pdf``)."""
    from ingest.pdf import parse_pdf

    title, sections = parse_pdf(data, stem, limits.max_pdf_pages)
    return Parsed(title=title, sections=sections, meta={})


# --- DOCX -------------------------------------------------------------------------------------


def _parse_docx(data: bytes, stem: str, limits: IngestSettings) -> Parsed:
    import docx  # imported here: only Word files pay for it
    from docx.oxml.ns import qn
    from docx.table import Table

    try:  # the sizes its parts declare bound what unzipping reads (past one: a CRC error)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            expanded = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError) as exc:
        raise BadDocument(f"not a readable Word document: {exc}") from None
    max_expanded = int(limits.max_expanded_mb * 2**20)
    if expanded > max_expanded:
        raise BadDocument(past_limit("expands too far", max_expanded, "MAX_EXPANDED_MB"))
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # not a zip, or a zip without Word parts
        raise BadDocument(f"not a readable Word document: {exc}") from None
    paragraphs = sum(1 for _ in document.element.body.iter(qn("w:p")))
    if paragraphs > limits.max_docx_paragraphs:
        raise BadDocument(
            past_limit(
                f"{paragraphs:,} paragraphs",
                limits.max_docx_paragraphs,
                "MAX_DOCX_PARAGRAPHS",
                "paragraphs",
            )
        )
    outline = _Outline()
    styles: dict[str | None, str] = {}
    opening: list[str] = []  # the display lines a document without heading styles opens with
    opened = False  # past them: a heading, or body text
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            rows = [[" ".join(c.text.split()) for c in r.cells] for r in block.rows]
            header = rows[0] if len(rows) > 1 else []
            outline.end_block()
            for cells in rows[1:] if header else rows:
                outline.add(_row(header, cells), tight=True)
            outline.end_block()
            continue
        style = _style_name(block, styles)
        text = block.text.strip()
        level = 0 if style == "Title" else _heading_level(style)
        if text and not opened:
            if level is None and _display(block, text) and (not opening or cut_short(opening[-1])):
                opening.append(text)
            else:
                opened = True
        if level is not None:
            outline.heading(level, text)
        elif style.startswith("List") or (
            block._p.pPr is not None and block._p.pPr.numPr is not None
        ):
            outline.add("- " + text, tight=True)
        else:
            outline.add(text)
    title = (document.core_properties.title or "").strip()
    if title and names_no_document(title, _running_lines(document)):
        title = ""
    title = title or outline.first() or " ".join(opening) or stem
    return Parsed(title=title, sections=outline.finish(), meta={})


def _running_lines(document: Any) -> set[str]:
    """The ``line_key`` of every line of the running headers and footers, tables' rows too: a
    title property equal to (or part of) one names the company, not the document."""
    lines: set[str] = set()
    for section in document.sections:
        for part in (
            section.header,
            section.footer,
            section.first_page_header,
            section.first_page_footer,
            section.even_page_header,
            section.even_page_footer,
        ):
            if part.is_linked_to_previous and section is not document.sections[0]:
                continue
            lines |= {line_key(p.text) for p in part.paragraphs if p.text.strip()}
            for table in part.tables:
                for row in table.rows:
                    lines.add(line_key(" · ".join(c.text for c in row.cells)))
    return lines


_SENTENCE_ENDS = re.compile(r"[.!?;,…。！？]$")


def _display(paragraph: Any, text: str) -> bool:
    """A short line set in larger type than body text (over 12 pt), or bold throughout: a
    title, when a document uses no heading styles."""
    runs = [r for r in paragraph.runs if r.text.strip()]
    if not runs or len(text.split()) > 14 or _SENTENCE_ENDS.search(text):
        return False
    sizes = [r.font.size.pt for r in runs if r.font.size is not None]
    style = paragraph.style.font.size if paragraph.style is not None else None
    if not sizes and style is not None:
        sizes = [style.pt]
    return (bool(sizes) and min(sizes) > 12) or all(r.bold for r in runs)


def _style_name(paragraph: Any, names: dict[str | None, str]) -> str:
    """A paragraph's style name, looked up once per style id: python-docx scans every style of
    the document for each paragraph with none of its own (3 ms each: 20,000 took a minute)."""
    style_id = paragraph._p.style  # None: the document's default paragraph style
    if style_id not in names:
        style = paragraph.style
        names[style_id] = style.name if style is not None else ""
    return names[style_id]


def _heading_level(style: str) -> int | None:
    match = re.fullmatch(r"Heading (\d)", style)
    return int(match.group(1)) if match else None


# --- Plain text -------------------------------------------------------------------------------

_UNDERLINE = re.compile(r"\s*(={3,}|-{3,})\s*")
_RULE = re.compile(r"\s*([=\-_*])\1{2,}\s*")


def _looks_like_heading(line: str, previous: str) -> bool:
    """A short ALL-CAPS line after a blank line, e.g. "HOLIDAYS"."""
    line = line.strip()
    letters = sum(c.isalpha() for c in line)
    return not previous.strip() and line.isupper() and letters >= 3 and len(line) <= 80


_CELL_GAP = re.compile(r"\s*\|\s*|\s{2,}|\t+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•·–]|\d{1,2}[.)]|[a-z][.)])\s+")


def _cells(line: str) -> list[str]:
    return [c for c in _CELL_GAP.split(line.strip().strip("|")) if c]


def _text_table(lines: list[str]) -> list[str] | None:
    """Rows of an aligned plain-text table ("header: value · …"), or None if it is not one.

    A table is a header line and at least one row, each of two or more cells set apart by runs
    of spaces, tabs or pipes, optionally with a rule (``----  ----``) under the header; the
    header names columns (no figures, not "Key: value"). A line holding one cell indented to a
    later column continues that cell of the row above (a long cell wrapped by its author)."""
    rows = [ln for ln in lines if not _RULE.fullmatch(ln) and not re.fullmatch(r"[\s|+=-]+", ln)]
    if len(rows) < 2:
        return None
    header = _cells(rows[0])
    ruled = len(lines) > 1 and bool(re.fullmatch(r"[\s|+=-]+", lines[1])) and "-" in lines[1]
    if len(header) < 2 or any(re.search(r"\d", h) or h.endswith(":") for h in header):
        return None
    # where each column starts: its header cell (words set apart by single spaces)
    starts = [m.start() for m in re.finditer(r"[^\s|](?:[^\s|]| (?! ))*", rows[0])]
    body: list[list[str]] = []
    for line in rows[1:]:
        cells = _cells(line)
        indent = len(line) - len(line.lstrip())
        if len(cells) == 1 and body and indent > starts[0] + 1:
            # a cell wrapped onto the next line, under its own column: part of the row above
            k = max(i for i, start in enumerate(starts) if start <= indent + 1)
            row = body[-1] + [""] * (k + 1 - len(body[-1]))
            row[k] = f"{row[k]} {cells[0]}".strip()
            body[-1] = row
            continue
        body.append(cells)
    fits = sum(2 <= len(cells) <= len(header) for cells in body)
    if fits < len(body) or (not ruled and len(body) < 2):
        return None
    return [_row(header, cells) for cells in body]


_KEY_VALUE = re.compile(r"^\s*[^\W\d][\w /()&.'-]{0,30}:\s+\S")
_SUBHEADING = re.compile(r"^\d+(?:\.\d+)+\.?\s+[^\W\d_][^.!?:;]{0,70}$")


def _text_blocks(lines: list[str]) -> list[tuple[str, bool]]:
    """A run of non-blank lines as (text, tight) blocks. A line that fills the width was wrapped
    and is joined to the next; a short one ended where the author ended it (an address, a
    "Phone: …" line). List items are one block each, their continuation lines joined."""
    from ingest.pdf import join_lines

    width = max((len(ln.rstrip()) for ln in lines), default=0)

    def wrapped(line: str) -> bool:
        n = len(line.rstrip())
        return n >= 45 and n >= 0.6 * width and not _KEY_VALUE.match(line)

    blocks: list[tuple[str, bool]] = []
    parts: list[str] = []
    item = False
    previous = ""
    for line in lines:
        starts_item = bool(_LIST_ITEM.match(line))
        joins = (
            parts
            and not starts_item
            and not _KEY_VALUE.match(line)
            and (wrapped(previous) or (item and line.startswith((" ", "\t"))))
        )
        if joins:
            parts.append(line.strip())
        else:
            if parts:
                blocks.append((join_lines(parts), item or len(lines) > 1))
            parts, item = [line.strip()], starts_item
        previous = line
    if parts:
        blocks.append((join_lines(parts), item or len(blocks) > 0))
    if len(blocks) == 1:
        blocks = [(blocks[0][0], blocks[0][1] and item)]
    return blocks


def _parse_text(data: bytes, stem: str, limits: IngestSettings) -> Parsed:
    lines = _decode(data).splitlines()
    outline = _Outline()
    run: list[str] = []

    def flush() -> None:
        rows = _text_table(run)
        if rows:
            outline.end_block()
            for row in rows:
                outline.add(row, tight=True)
            outline.end_block()
        else:
            for text, tight in _text_blocks(run):
                outline.add(text, tight=tight)
            outline.end_block()
        run.clear()

    skip = False
    first_heading = ""
    for i, line in enumerate(lines):
        if skip:
            skip = False
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        underline = _UNDERLINE.fullmatch(following) and len(_cells(line)) < 2
        previous = lines[i - 1] if i else ""
        subheading = bool(_SUBHEADING.match(line.strip())) and not previous.strip()
        if line.strip() and (underline or subheading or _looks_like_heading(line, previous)):
            flush()
            level = 3 if subheading else 2 if underline and "-" in following else 1
            outline.heading(level, line)
            if not first_heading and not any(ln.strip() for ln in lines[:i]):
                first_heading = " ".join(line.split())
            skip = bool(underline)
        elif not line.strip() or (_RULE.fullmatch(line) and not run):
            flush()
        else:
            run.append(line.rstrip())
    flush()
    return Parsed(
        title=first_heading or _title_line(lines) or stem, sections=outline.finish(), meta={}
    )


_SENTENCE_END = re.compile(r"[.!?;:,…。！？]$")


def _title_line(lines: list[str]) -> str:
    """The first line when it reads as a title ("Office plants care guide"): short, not a
    sentence, a list item, a "Key: value" line or a table row. Else "" and the file name is
    the title."""
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    line = " ".join(first.split())
    if (
        not line
        or len(line) > 80
        or len(line.split()) > 12
        or _SENTENCE_END.search(line)
        or _LIST_ITEM.match(line)
        or _KEY_VALUE.match(line)
        or len(_cells(first)) > 1
        or sum(c.isalpha() for c in line) < 3
    ):
        return ""
    return line


_PARSERS = {
    ".md": _parse_markdown,
    ".markdown": _parse_markdown,
    ".html": _parse_html,
    ".htm": _parse_html,
    ".pdf": _parse_pdf,
    ".docx": _parse_docx,
    ".txt": _parse_text,
}
SUFFIXES: set[str] = set(_PARSERS)
# A fetched document's Content-Type → the parser a file with that suffix gets.
MEDIA_TYPES = {
    "text/html": ".html",
    "application/xhtml+xml": ".html",
    "text/markdown": ".md",
    "text/x-markdown": ".md",
    "text/plain": ".txt",
    "application/pdf": ".pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
}
