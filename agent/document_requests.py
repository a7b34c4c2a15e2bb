"""A whole document on request: "show me the travel policy", "Zeig mir die Reiserichtlinie",
"请给我看员工指南" (each language's way of asking is a rule of its file in agent/patterns/).

``asked_document`` reads the request; ``find_document`` searches with the asker's own tools, so
only a document the asker (and, in a channel, every member) may read can come back, and takes the
best-ranked one whose title holds every word asked for; ``outline`` is the reply: the title, then
each section as a line with its citation. A request that names no readable document by its title
is answered as a question like any other.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.calibration import Calibration as C
from agent.messages import say
from agent.passages import Passage
from agent.phrasing import pattern, rules
from agent.tools import TurnTools
from agent.turns import Citation, quoted
from ingest.languages import CJK, detect_lang, tokenize

MAX_OUTLINE = 12  # sections listed; the rest are counted


def asked_document(text: str) -> str | None:
    """The name of the document a request asks to see (the rule list ``document_request`` of
    agent/patterns/: "show me the travel policy"), or None when it asks something else. Where
    several languages' rules read the request, the shortest name is the one with the least of
    the request left in it ("покажи мені …" is Ukrainian's and Russian's both)."""
    names = [parts[0] for rule in rules("document_request") if (parts := rule.apply(text))]
    if not names:
        return None
    name = min(names, key=len).strip(" \"'“”‘’")
    if not name or len(name.split()) > 6 or pattern("not_a_document_name").search(name):
        return None
    return name


def _words(text: str) -> set[str]:
    return set(tokenize(text, detect_lang(text)))


def find_document(tools: TurnTools, name: str) -> list[Passage]:
    """The sections of the best-ranked readable document whose title (or file name) holds every
    word of ``name``; [] when there is none."""
    wanted = _words(name)
    if not wanted:
        return []
    for doc_id in dict.fromkeys(p.doc_id for p in tools.search_docs(name, top_k=10)):
        sections = tools.sections(doc_id)
        if sections and wanted <= _words(sections[0].title) | _words(_file_name(doc_id)):
            return sections
    return []


def documents_titled(text: str, passages: Sequence[Passage]) -> list[str]:
    """The documents among ``passages`` whose title the message writes ("acme.com privacy
    policy: do you sell my data?", "does the travel policy cover taxis?"): what it asks is asked
    of them, not of another document that shares its words. The title's words, in any order and
    ending, stand together (``Calibration.title_gap``): spread over a sentence they do not name it
    ("this form can be uploaded through HPOS" does not name "Form upload in HPOS"), and a title
    of one word is a topic, not a name (``Calibration.title_words``). A title inside
    a longer one the message writes names only the longer ("the expense policy for contractors"
    is not also "Expense Policy")."""
    lang = detect_lang(text)
    said = [_word(w, lang) for w in re.findall(r"\w+", text)]
    titled: dict[str, set[str]] = {}
    for doc_id, title in dict.fromkeys((p.doc_id, p.title) for p in passages):
        words = _words(title)
        if doc_id in titled or len(words) < C.title_words:
            continue
        if CJK.search(title) and title.strip() in text or _together(title, words, said):
            titled[doc_id] = words
    return [d for d, w in titled.items() if not any(w < other for other in titled.values())]


def _word(word: str, lang: str) -> str:
    """A word as the title's are compared: its stem, or itself when it is a stop word."""
    return next(iter(tokenize(word, lang)), word.lower())


def _together(title: str, words: set[str], said: list[str]) -> bool:
    """Every word of ``words`` in one run of ``said`` with at most ``title_gap`` other words
    between two of them; the title's own stop words ("for" in "Expense Policy for
    Contractors") are not counted as between."""
    lang = detect_lang(title)
    glue = {_word(w, lang) for w in re.findall(r"\w+", title)} - words
    kept = [w for w in said if w not in glue]
    run: set[str] = set()
    last = -len(kept) - 2
    for i, word in enumerate(kept):
        if word in words:
            if i - last > C.title_gap + 1:
                run = set()
            run.add(word)
            last = i
            if run >= words:
                return True
    return False


def _file_name(doc_id: str) -> str:
    return re.sub(r"[-_.]+", " ", doc_id.rsplit("/", 1)[-1])


def outline(sections: list[Passage], lang: str) -> tuple[str, list[Citation]]:
    """The document as a short reply: its title, then one line per section, each cited."""
    first = sections[0]
    head = say(
        lang,
        "document_outline",
        title=quoted(first.title),
        updated=first.updated[:10] or "?",
        count=len(sections),
    )
    lines, citations = [head], []
    for n, section in enumerate(sections[:MAX_OUTLINE], 1):
        heading = section.breadcrumbs.split(" > ", 1)[1] if " > " in section.breadcrumbs else ""
        label = heading or _first_line(section.body)
        lines.append(f"• {quoted(label)} [{n}]")
        citations.append(Citation.of(n, section, section.body))
    if len(sections) > MAX_OUTLINE:
        lines.append(say(lang, "more_sections", count=len(sections) - MAX_OUTLINE))
    return "\n".join(lines), citations


def _first_line(text: str, limit: int = 80) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
