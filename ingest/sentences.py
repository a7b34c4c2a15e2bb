"""Where sentences end, in every language Footnote reads — the one splitter for chunking, for the
per-sentence vectors and for quoting, so a quote is always a whole sentence.

A line break always ends a unit (a list item, a table row, a paragraph: parsing has already
joined wrapped lines). Inside a line, a sentence ends at ``.``, ``!``, ``?`` or ``…`` (and any
closing quotes or brackets) before a space and something that can begin a sentence — not after
an abbreviation ("e.g.", "Dr.", "No.", "вул.", "z. B."), an initial ("J. Smith") or before a
lower-case word ("approx. five"); and always at the Chinese and Japanese ``。！？``.
"""

from __future__ import annotations

import re

# Abbreviations after which a full stop does not end a sentence, lower-cased, without the dot.
_ABBREVIATIONS = set(
    [
        "e.g",
        "i.e",
        "etc",
        "approx",
        "incl",
        "excl",
        "cf",
        "vs",
        "fig",
        "figs",
        "no",
        "nr",
        "nos",
        "art",
        "sec",
        "para",
        "ch",
        "vol",
        "pp",
        "p",
        "st",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "jr",
        "sr",
        "co",
        "corp",
        "inc",
        "ltd",
        "dept",
        "est",
        "min",
        "max",
        "avg",
        "ca",
        "tel",
        "fax",
        "ext",
        "ph",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
        "sun",
        "z.b",
        "d.h",
        "bzw",
        "usw",
        "ggf",
        "inkl",
        "zzgl",
        "evtl",
        "u.a",
        "s.o",
        "vgl",
        "вул",
        "буд",
        "просп",
        "пл",
        "м",
        "р",
        "ст",
        "стр",
        "т.д",
        "т.п",
        "див",
        "напр",
        "тис",
        "млн",
        "грн",
        "г",
        "гг",
        "ул",
        "д",
        "пер",
        "им",
        "тел",
        "факс",
    ]
)
_END = re.compile(r"[.!?…]+[\"'”’»)\]]*(?=\s)|[。！？]+[」』”’）)]*")
_NEXT = re.compile(r"\s+(?=\S)")


def _word_before(text: str, end: int) -> str:
    """The run of non-space characters that ends at ``end`` ("" after a space). Walked back
    from ``end``: a regex anchored there (``\\S+$`` searched from the line's start) tried every
    position before it, quadratic in a long paragraph's length (4.5 of the 4.7 s the SQuAD
    articles took to chunk)."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return text[start:end]


def _ends_sentence(text: str, end: int, stop: int) -> bool:
    """Does the punctuation run that ends at ``end`` close a sentence?"""
    mark = text[end - 1] if end else ""
    if mark in "。！？」』”’）)" and re.search(r"[。！？]", text[max(0, end - 3) : end]):
        return True
    after = _NEXT.match(text, end)
    following = text[after.end()] if after else ""
    if not following:
        return True
    if following.islower():  # "approx. five", "e.g. here": the sentence goes on
        return False
    if "." not in text[end - 1 : end] and "." not in text[max(0, end - 3) : end]:
        return True  # ! ? …
    token = _word_before(text, end).rstrip(".\"'”’»)]").lower()
    token = token.lstrip("(\"'“‘«[")
    if token in _ABBREVIATIONS:
        return False
    return not (len(token) == 1 and token.isalpha())  # an initial: "J. Smith"


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence or line, trimmed, in order; nothing empty."""
    spans: list[tuple[int, int]] = []
    for line in re.finditer(r"[^\n]+", text):
        start, stop = line.start(), line.end()
        cut = start
        for m in _END.finditer(text, start, stop):
            if _ends_sentence(text, m.end(), stop):
                spans.append((cut, m.end()))
                cut = m.end()
        spans.append((cut, stop))
    trimmed = []
    for s, e in spans:
        piece = text[s:e]
        if piece.strip():
            s += len(piece) - len(piece.lstrip())
            e -= len(piece) - len(piece.rstrip())
            trimmed.append((s, e))
    return trimmed


def sentences(text: str) -> list[str]:
    """The sentences (and lines) of a text, trimmed, in order."""
    return [text[s:e] for s, e in sentence_spans(text)]
