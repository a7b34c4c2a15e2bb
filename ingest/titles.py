"""What may be a document's title, whatever its format.

A title comes from the document's metadata, its first heading or its largest type. Two things
spoil it in documents from elsewhere: a title property that names no document — the template's
company name, which is also the running header on every page, or the name of the file a printer
was given ("Microsoft Word - roles.docx") — and a title typed over two lines or paragraphs, of
which only the first was taken ("Role Descriptions at"). The words a title never ends with are
in the lexicon (``ingest/words/*.yaml``, ``title.dangling``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ingest.lexicon import lexicon

_FILE_NAME = re.compile(
    r"^microsoft\s+(?:word|excel|powerpoint)\s+-\s|\.(?:docx?|pdf|rtf|odt|pages|txt)$", re.I
)


def line_key(text: str) -> str:
    """A line as it repeats from page to page: case, spacing and page numbers aside."""
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


_SEGMENTS = re.compile(r"\s+[·|•–—-]\s+|\s*\|\s*|\t+|\s{3,}")


def names_no_document(title: str, running: Iterable[str]) -> bool:
    """Is a title property no title: a file's name, or a line every page repeats (``running``:
    the running headers' and footers' ``line_key``), or a piece of one? "Northwind" is the
    company's name in the header "Northwind Lantern Works Ltd"; a header of several parts names
    the company first. A later part is the document's own title, which the header repeats
    ("ACME Health Plan · Member Handbook 2026")."""
    if _FILE_NAME.search(title.strip()):
        return True
    key = line_key(title)
    if not key:
        return True
    inside = re.compile(rf"(?<!\w){re.escape(key)}(?!\w)")
    for line in running:
        parts = [p for p in _SEGMENTS.split(line) if p] or [line]
        if key in (line, parts[0]) or any(inside.search(p) and key != p for p in parts):
            return True
    return False


def cut_short(title: str) -> bool:
    """Does a title end where a line was cut: on a word no title ends with ("… at", "… of the")?"""
    words = title.split()
    return bool(words) and words[-1].lower() in lexicon().dangling
