"""What an answer is made of: the sentences, list items and table rows of the passages found.

A passage's body is read line by line (parsing has made every line a paragraph, a list item or a
table row) and each line sentence by sentence, with the same splitter that cut the sentence
vectors at ingest, so the n-th unit of a passage meets the n-th of its sentence vectors. A short
line with no sentence end above other lines ("2.1 Approval") is a label: it is not quoted, but
what it names helps the units under it match a question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agent.calibration import Calibration as C
from agent.passages import Passage
from agent.phrasing import pattern
from ingest.chunk import is_record
from ingest.languages import CJK
from ingest.sentences import sentences

UnitKind = Literal["sentence", "row", "item", "label", "question"]

_ITEM = re.compile(r"^\s*(?:[-–—•·▪*]|\d{1,2}[.)])\s+")
_CELL = re.compile(r"^([^:·]{1,60}):\s*(.+)$")
_ENDS = re.compile(r"[.!?。！？:;)\]]$")
_LABELLED = re.compile(r"([^:]{2,30}):\s*\S")  # a list item led by what it is about
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.I)


@dataclass
class Unit:
    text: str  # as it is quoted (a list item without its bullet)
    passage: int  # index of its passage in the list given
    order: int  # position in the passage
    kind: UnitKind
    label: str = ""  # the label or heading it sits under
    cells: dict[str, str] = field(default_factory=dict)  # a table row: header → value
    sim: float | None = None  # closeness to the question by meaning, when known
    line: int = 0  # the line (paragraph, item or row) it belongs to
    record: str = ""  # the record line it belongs to, in a log of records (one case, no rule)

    @property
    def quotable(self) -> bool:
        """A sentence, item or row that can stand as an answer (not "2." or a lone word); an
        address is one word, so a line that only points somewhere ("Source: https://…") is none."""
        # the address check only where one can be (it doubles a quotable's cost, per unit)
        pointing = "://" in self.text or "www." in self.text.lower()
        text = _URL.sub("url", self.text) if pointing else self.text
        words = len(re.findall(r"\w+", text))
        # a labelled item is a whole fact however short: "Rail: 2nd class."
        labelled = words >= 3 and bool(self.item_label)
        return self.kind == "row" or (
            self.kind in ("sentence", "item")
            and (words >= 4 or bool(labelled) or CJK.search(self.text) is not None)
        )

    @property
    def item_label(self) -> str:
        """What a labelled list item is about: "Rail" in "Rail: 2nd class."; '' for any other
        unit."""
        labelled = _LABELLED.match(self.text) if self.kind == "item" else None
        return labelled.group(1) if labelled else ""


def row_cells(line: str) -> dict[str, str]:
    """ "Level: L4 · Title: Senior Engineer" → {"Level": "L4", "Title": "Senior Engineer"}; {} if
    the line is not a table row."""
    parts = [p.strip() for p in line.split(" · ")]
    if len(parts) < 2:
        return {}
    cells = {}
    for part in parts:
        m = _CELL.match(part)
        if not m:
            return {}
        cells[m.group(1).strip()] = m.group(2).strip()
    return cells


def _is_label(line: str, following: str, opens: bool = False) -> bool:
    """A short line with no sentence end: a heading over what follows (or, at the end of a chunk,
    over what the next chunk holds). A numbered one is a list's item, unless it opens a paragraph
    and no item follows it: a numbered section's heading ("2. Getting there") kept as a line
    where small sections were joined into one passage."""
    words = line.split()
    item = _ITEM.match(line)
    numbered_heading = bool(item) and line.lstrip()[:1].isdigit() and opens
    return (
        0 < len(words) <= 8
        and len(line) <= 60
        and not _ENDS.search(line)
        and (not item or (numbered_heading and not _ITEM.match(following)))
        and " · " not in line
    )


def units_of(passage: Passage, index: int, sentence_model: str = "") -> list[Unit]:
    """The units of one passage, in order; ``sentence_model`` names the embedder whose
    per-sentence similarities they carry."""
    body = passage.body
    crumbs = [c.strip() for c in passage.breadcrumbs.split(">") if c.strip()]
    label = crumbs[-1] if len(crumbs) > 1 else ""
    raw = body.split("\n")
    lines = [ln for ln in raw if ln.strip()]
    # a blank line ends a record: the paragraph after it is no longer about that case
    after_blank = [k > 0 and not raw[k - 1].strip() for k, ln in enumerate(raw) if ln.strip()]
    out: list[Unit] = []
    record = ""  # in a log, the lines under a record's first line belong to that record
    for n, line in enumerate(lines):
        following = lines[n + 1] if n + 1 < len(lines) else ""
        cells = row_cells(line)
        if cells:
            out.append(Unit(line.strip(), index, len(out), "row", label, cells, line=n))
            continue
        if _is_label(line.strip(), following, after_blank[n]):
            label, record = line.strip(), ""
            out.append(Unit(line.strip(), index, len(out), "label", label, line=n))
            continue
        if is_record(line):
            record = line.strip()
        elif after_blank[n]:
            record = ""
        item = bool(_ITEM.match(line))
        for k, sentence in enumerate(sentences(line)):
            text = _ITEM.sub("", sentence) if item and k == 0 else sentence
            kind: UnitKind = (
                "question"
                if text.rstrip().endswith(("?", "？"))
                else "item"
                if item
                else "sentence"
            )
            out.append(Unit(text.strip(), index, len(out), kind, label, line=n, record=record))
    # the per-sentence similarities were computed over sentences(body), which is this order
    sims = passage.scores.sentence_cosines.get(sentence_model) if sentence_model else None
    flat = sentences(body)
    if sims and len(sims) == len(flat) == len(out):
        for unit, sim in zip(out, sims, strict=True):
            unit.sim = float(sim)
    return out


def units(passages: Sequence[Passage], sentence_model: str = "") -> list[Unit]:
    return [u for i, p in enumerate(passages) for u in units_of(p, i, sentence_model)]


def points_back(unit: Unit, before: Unit) -> bool:
    """``unit`` is a sentence that opens by pointing at what ``before``, the sentence before it,
    says ("After that, …", "This does not apply if …", "They must …"): quoted alone, its subject
    is lost."""
    # Chinese and Japanese are written without spaces: there a character is the step
    cjk = bool(CJK.search(unit.text))
    words = list(unit.text.strip()) if cjk else unit.text.split()
    # its first word ("This", "They"), or the phrase a comma closes early ("In that case,"): a
    # "that" further in is a relative pronoun ("A firing that cracks …")
    lead = next(
        (k for k, w in enumerate(words[: C.opening_words]) if w.endswith((",", "，", "、"))),
        C.opening_words - 1 if cjk else 0,
    )
    return (
        unit.kind == before.kind == "sentence"
        and before.passage == unit.passage
        and before.order == unit.order - 1
        and before.line in (unit.line, unit.line - 1)
        and bool(pattern("points_back").search(("" if cjk else " ").join(words[: lead + 1])))
    )
