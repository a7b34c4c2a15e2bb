"""Cut a Document into Chunks: along its sections first, then by size, with overlap.

Every chunk starts with its breadcrumbs ("Handbook > Leave > Carry-over") so it makes sense on its
own, to the embedder and to whoever reads the citation. Output is deterministic: the same document
always gives the same chunks, so re-ingesting an unchanged file changes nothing in the index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.audience import document_names, section_audience
from ingest.documents import Chunk, Document, Section
from ingest.languages import CJK_CHARS
from ingest.sentences import sentence_spans

TINY = 40  # sections under this many tokens are merged into the next one, when they can be

# Chinese and Japanese are written without spaces: each of their characters counts as one token.
_CJK = CJK_CHARS
_TOKEN = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")


# "TCK-1103 | 2026-09-08 | 4502 (Brightline Logistics GmbH) | Jonas Richter | P2 | resolved"
_FIELD_SEP = re.compile(r"\s+\|\s+")
_ENDS = re.compile(r"[.!?。！？:;)\]]$")


def is_record(line: str) -> bool:
    """A record's first line in a plain-text log: three or more short fields between pipes
    ("ID | opened | customer | reporter | …"). The lines under it, up to a blank line, say more
    about that record, so a chunk keeps them together and an answer reads them with it."""
    fields = _FIELD_SEP.split(line.strip())
    return len(fields) >= 3 and all(0 < len(f) <= 60 for f in fields) and not _ENDS.search(line)


def _records_whole(
    text: str, units: list[tuple[int, int]], max_tokens: int
) -> list[tuple[int, int]]:
    """Join a record's first line with the lines under it (up to a blank line) into one unit of
    packing, when they fit in a chunk: a chunk boundary never parts a case from its id."""
    out: list[tuple[int, int]] = []
    k = 0
    while k < len(units):
        start, end = units[k]
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        k += 1
        if text[line_start:start].strip() == "" and is_record(line):
            while (
                k < len(units)
                and "\n\n" not in text[end : units[k][0]]
                and count_tokens(text[start : units[k][1]]) <= max_tokens
            ):
                end = units[k][1]
                k += 1
        out.append((start, end))
    return out


def count_tokens(text: str) -> int:
    """Words for space-separated scripts; one per character for Chinese and Japanese."""
    return len(_TOKEN.findall(text))


@dataclass
class _Unit:
    """A section, or a run of tiny sections merged together, that is chunked on its own."""

    index: int  # of its first section in doc.sections: the chunks' parent
    path: list[str]
    page: int | None
    anchor: str
    text: str


def chunk_document(doc: Document, *, max_tokens: int = 220, overlap: int = 40) -> list[Chunk]:
    """Chunks of at most ``max_tokens`` tokens of body text (breadcrumbs come on top)."""
    if not 0 <= overlap < max_tokens:
        raise ValueError(
            f"need 0 <= overlap < max_tokens, got overlap={overlap}, max_tokens={max_tokens}"
        )
    chunks: list[Chunk] = []
    audience = frozenset(doc.audience)
    names = document_names(doc.title, doc.sections, {}) | audience
    for unit in _units(doc.sections, max_tokens):
        crumbs = " > ".join(_crumbs(doc.title, unit.path))
        for body in _split(unit.text, max_tokens, overlap):
            seq = len(chunks)
            chunks.append(
                Chunk(
                    doc_id=doc.doc_id,
                    chunk_id=f"{doc.doc_id}#{seq}",
                    parent_id=f"{doc.doc_id}#s{unit.index}",
                    seq=seq,
                    title=doc.title,
                    breadcrumbs=crumbs,
                    text=f"{crumbs}\n\n{body}",
                    source=doc.source,
                    anchor=unit.anchor,
                    page=unit.page,
                    updated=doc.updated,
                    owner=doc.owner,
                    acl=list(doc.acl),
                    lang=doc.lang,
                    content_hash=doc.content_hash,
                    body_hash=doc.body_hash,
                    url=doc.url,
                    audience=sorted(section_audience(unit.path, audience, names, doc.acl)),
                )
            )
    return chunks


def _crumbs(title: str, path: list[str]) -> list[str]:
    """Title, then the heading path, without repeating a top heading that equals the title."""
    if path and path[0].strip().casefold() == title.strip().casefold():
        path = path[1:]
    return [title, *path]


def _units(sections: list[Section], max_tokens: int) -> list[_Unit]:
    """Sections become units; a tiny one joins the next when it is its sibling or child,
    on the same page, and the result still fits in one chunk."""
    units: list[_Unit] = []
    group: list[tuple[int, Section]] = []
    for index, section in enumerate(sections):
        if not section.text.strip():
            continue
        if group and _can_join(group, section, max_tokens):
            group.append((index, section))
        else:
            if group:
                units.append(_merge(group))
            group = [(index, section)]
        if count_tokens(_merge(group).text) >= TINY:
            units.append(_merge(group))
            group = []
    if group:
        units.append(_merge(group))
    return units


def _can_join(group: list[tuple[int, Section]], section: Section, max_tokens: int) -> bool:
    first = group[0][1]
    parent = first.path[:-1]
    return (
        section.page == first.page
        and section.path[: len(parent)] == parent
        and count_tokens(_merge([*group, (0, section)]).text) <= max_tokens
    )


def _merge(group: list[tuple[int, Section]]) -> _Unit:
    """One unit under the sections' common heading path; each keeps its own heading as a line."""
    prefix = list(group[0][1].path)
    for _, section in group[1:]:
        while section.path[: len(prefix)] != prefix:
            prefix.pop()
    parts = []
    for _, section in group:
        own = section.path[len(prefix) :]
        parts.append(
            "\n".join([" > ".join(own), section.text.strip()]) if own else section.text.strip()
        )
    index, first = group[0]
    return _Unit(
        index=index, path=prefix, page=first.page, anchor=first.anchor, text="\n\n".join(parts)
    )


def _split(text: str, max_tokens: int, overlap: int) -> list[str]:
    """Pack whole sentences up to max_tokens; each next chunk repeats the last sentences of the
    previous one, up to ``overlap`` tokens, so an answer on a boundary is found in either."""
    units: list[tuple[int, int]] = []  # (start, end) offsets into text
    for span in sentence_spans(text):
        if count_tokens(text[span[0] : span[1]]) <= max_tokens:
            units.append(span)
        else:  # one overlong sentence: cut it every `overlap` tokens so the overlap still works
            units.extend(_hard_split(text, span, overlap or max_tokens))
    units = _records_whole(text, units, max_tokens)
    sizes = [count_tokens(text[s:e]) for s, e in units]
    chunks: list[str] = []
    start = fresh = 0  # first unit of the chunk (maybe repeated) / first unit not yet in a chunk
    while fresh < len(units):
        total = sum(sizes[start:fresh])
        while start < fresh and total + sizes[fresh] > max_tokens:  # overlap must leave room
            total -= sizes[start]
            start += 1
        end = fresh
        while end < len(units) and total + sizes[end] <= max_tokens:
            total += sizes[end]
            end += 1
        chunks.append(text[units[start][0] : units[end - 1][1]])
        first, fresh, kept = start, end, 0
        start = end  # step back over whole sentences, never back to the chunk's first one
        while start - 1 > first and kept + sizes[start - 1] <= overlap:
            start -= 1
            kept += sizes[start]
    return chunks


def strip_overlap(previous: str, text: str, max_words: int = 80) -> str:
    """Drop the words a chunk repeats from the end of the one before it (``_split`` overlaps
    them), to read a section's chunks as one text again."""
    prev_words, words = previous.split(), text.split()
    for k in range(min(max_words, len(prev_words), len(words)), 4, -1):
        if prev_words[-k:] == words[:k]:
            return " ".join(words[k:])
    return text


def _hard_split(text: str, span: tuple[int, int], size: int) -> list[tuple[int, int]]:
    """Cut between tokens (between characters for CJK), ``size`` tokens a piece."""
    tokens = [m.span() for m in _TOKEN.finditer(text, span[0], span[1])]
    return [
        (tokens[i][0], tokens[min(i + size, len(tokens)) - 1][1])
        for i in range(0, len(tokens), size)
    ]
