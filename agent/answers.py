"""An offline answer, read off the passages found: every unit scored by the answer model
(``agent.answer_model``), the best quoted whole, with what belongs with it.

Units are the sentences, list items and table rows of the passages (``agent.units``), and each
cell of a table row beside the row's first cell ("Level: L4 · Bonus: 10%"), so that a question
about one cell is answered with that cell, not the whole row. Which units answer is the model's
call; what is quoted with them follows the document, not the question:

- a sentence that introduces a list ("… the following:") is quoted with its items, and a list
  whose items answer together (two or more of them do) with its introduction;
- other units that the model finds more likely than not to answer are quoted too (at most
  ``MAX_UNITS``), each once;
- two units from different documents that both answer, with different dates and different
  figures for the same unit ("10 days" / "15 days"), are a conflict: the newer is quoted and a note
  names the older (``conflict``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from agent.answer_model import AnswerModel, Candidate
from agent.calibration import Calibration as C
from agent.passages import Passage
from agent.reasoning import Sentence
from agent.terms import TermStats
from agent.units import Unit, points_back, units_of

MAX_UNITS = 3  # quoted units per part of a question, lists aside: what a chat reply can hold
MAX_LIST = 12  # items of one list quoted whole: more is a document to open, not a reply
LIKELY = 0.5  # a calibrated probability from which a unit is more likely to answer than not


@dataclass
class Judged:
    unit: Unit
    p: float  # P(it answers the question), the answer model's


def cells_of(unit: Unit) -> list[Unit]:
    """A table row's cells after the first, each with the first (the row's name): "Level: L4 ·
    Bonus: 10%" for the row "Level: L4 · Title: Senior · Bonus: 10%"."""
    items = list(unit.cells.items())
    if len(items) < 3:
        return []
    (head, name), rest = items[0], items[1:]
    return [
        replace(unit, text=f"{head}: {name} · {h}: {v}", kind="row", cells={head: name, h: v})
        for h, v in rest
    ]


def candidates(passages: Sequence[Passage], sentence_model: str = "use") -> list[Unit]:
    """Every unit that can answer: quotable units (and questions, which the model learns to
    pass over), table cells beside their rows; none of a tool's result."""
    out: list[Unit] = []
    for i, p in enumerate(passages):
        if p.tool:
            continue
        for u in units_of(p, i, sentence_model):
            if u.quotable or u.kind == "question":
                out.append(u)
                out += cells_of(u)
    return out


def candidate(unit: Unit, passage: Passage) -> Candidate:
    crumbs = [c.strip() for c in passage.breadcrumbs.split(">") if c.strip()]
    if unit.label and unit.label not in crumbs:
        crumbs.append(unit.label)
    return Candidate(unit.text, " > ".join(crumbs), passage.lang, unit.kind, unit.passage, unit.sim)


def score(
    question: str,
    lang: str,
    passages: Sequence[Passage],
    model: AnswerModel,
    stats: TermStats,
    at: float | None = None,
) -> list[Judged]:
    """Every candidate unit with its probability, best first; ``at``: only whether each
    reaches it is needed (``AnswerModel.probabilities``)."""
    units = candidates(passages)
    cands = [candidate(u, passages[u.passage]) for u in units]
    probs = model.probabilities(question, lang, cands, stats, at)
    ranked = sorted(zip(units, probs.tolist(), strict=True), key=lambda t: -t[1])
    return [Judged(u, p) for u, p in ranked]


def _list_of(best: Unit, every: Sequence[Unit]) -> tuple[Unit | None, list[Unit]]:
    """The introduction (a unit ending in ":") and the items of the list ``best`` introduces or
    belongs to; (None, []) when it is no part of one."""
    same = [u for u in every if u.passage == best.passage and not _is_cell(u)]
    at = next((k for k, u in enumerate(same) if u.order == best.order), None)
    if at is None:
        return None, []
    if best.kind not in ("item", "row"):
        if not best.text.rstrip().endswith((":", "：")):
            return None, []
        items = []
        for u in same[at + 1 :]:
            if u.kind not in ("item", "row"):
                break
            items.append(u)
        return (best, items) if items else (None, [])
    start = at
    while start > 0 and same[start - 1].kind == best.kind:
        start -= 1
    end = at
    while end + 1 < len(same) and same[end + 1].kind == best.kind:
        end += 1
    intro = same[start - 1] if start else None
    if intro is None or not intro.text.rstrip().endswith((":", "：")):
        return None, []
    return intro, same[start : end + 1]


def _is_cell(unit: Unit) -> bool:
    return unit.kind == "row" and len(unit.cells) == 2 and " · " in unit.text


def choose(ranked: list[Judged], answer_at: float) -> list[Judged]:
    """The units of the answer: the best, when it reaches ``answer_at``, with the list it
    introduces or belongs to, and the others more likely than not to answer."""
    if not ranked or ranked[0].p < answer_at:
        return []
    best = ranked[0]
    every = sorted((s.unit for s in ranked), key=lambda u: (u.passage, u.order))
    by_place = {(s.unit.passage, s.unit.order, s.unit.text): s for s in ranked}
    intro, items = _list_of(best.unit, every)
    answering = {(s.unit.passage, s.unit.order) for s in ranked if s.p >= answer_at}
    whole_list = intro is not None and (
        best.unit is intro or sum((u.passage, u.order) in answering for u in items) >= 2
    )
    if whole_list and intro is not None and len(items) <= MAX_LIST:
        return [by_place[(u.passage, u.order, u.text)] for u in (intro, *items)]
    chosen = [best]
    # "After that, …" comes with the sentence it points at
    before = next((s for s in ranked if points_back(best.unit, s.unit)), None)
    if before is not None:
        chosen.insert(0, before)
    for s in ranked[1:]:
        if len(chosen) >= MAX_UNITS or s.p < max(answer_at, LIKELY):
            break
        if any(_same_text(s.unit, c.unit) or _within(s.unit, c.unit) for c in chosen):
            continue
        chosen.append(s)
    return chosen


def _same_text(a: Unit, b: Unit) -> bool:
    return _words(a.text) == _words(b.text)


def _within(a: Unit, b: Unit) -> bool:
    """A cell and its own row: one says what the other does."""
    return a.passage == b.passage and a.line == b.line and a.kind == b.kind == "row"


def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\w+", text.lower()))


def best_probability(ranked: Sequence[Judged]) -> float:
    return float(np.max([s.p for s in ranked])) if ranked else 0.0


class Opinion:
    """The answer model's view of one part of a question, beside the rules that choose what the
    offline reasoner quotes (``agent.offline``, ``agent.extract``). The rules keep what they
    know well (the asker's rule, versions, conflicts, records); the model overrules them only
    where it is sure, at cut-offs set on the dev splits (``Spec.rescue_at``, ``Spec.veto_at``):
    it refuses the rules' answer when none of the units quoted reaches ``veto_at``, and answers
    what the rules refused (or it refused) when its best unit reaches ``rescue_at``. In English
    only, where the cross-encoder reads and the cut-offs were set. Scored on first use."""

    def __init__(
        self,
        question: str,
        lang: str,
        passages: Sequence[Passage],
        model: AnswerModel,
        stats: TermStats,
    ):
        self._args = (question, lang, passages, model, stats)
        self._ranked: list[Judged] | None = None
        # the cut-offs were set where the cross-encoder reads: English questions and units
        english = lang == "en"
        self.rescue_at = model.spec.rescue_at if english else 1.0
        self.veto_at = model.spec.veto_at if english else 0.0
        self._english = [p.lang == "en" for p in passages]

    @property
    def ranked(self) -> list[Judged]:
        """Every unit, best first; exact only for whether each reaches a cut-off in use."""
        if self._ranked is None:
            cuts = [self.rescue_at, *([self.veto_at] if self.veto_at > 0 else [])]
            self._ranked = score(*self._args, at=min(cuts))
        return self._ranked

    def rescue(self, said: str = "") -> list[Sentence]:
        """What to quote where the rules found nothing: the model's best units, when the best
        reaches ``rescue_at``; none a follow-up's previous answer (``said``) quoted already."""
        if self.rescue_at >= 1.0:
            return []
        ranked = [
            j
            for j in self.ranked
            if self._english[j.unit.passage] and not (said and j.unit.text in said)
        ]
        return [
            Sentence(j.unit.text, [j.unit.passage], score=round(j.p, 3))
            for j in choose(ranked, self.rescue_at)
        ]

    def prefers(self, units: Sequence[Unit]) -> int:
        """Which of ``units`` (the rules' best first) should lead: the one the model finds at
        least ``Calibration.model_odds`` times as likely to answer as the rules' best; 0 (the
        rules' best) when none is, or where the cross-encoder reads no English."""
        question, lang, passages, model, stats = self._args
        if lang != "en" or not all(self._english[u.passage] for u in units):
            return 0
        every = candidates(passages)  # the shortlist weighs each against the turn's best
        at = {(u.passage, u.order, u.text): i for i, u in enumerate(every)}
        found = [at.get((u.passage, u.order, u.text)) for u in units]
        wanted = [i for i in found if i is not None]
        if len(wanted) < len(found):
            return 0
        cands = [candidate(u, passages[u.passage]) for u in every]
        probs = model.probabilities(question, lang, cands, stats, only=set(wanted))
        ps = [float(probs[i]) for i in wanted]
        pick = max(range(len(ps)), key=lambda i: (ps[i], -i))
        return pick if ps[pick] >= C.model_odds * ps[0] else 0

    def vetoes(self, quotes: Sequence[Sentence]) -> bool:
        """True when every quote is one the model read and none reaches ``veto_at``."""
        if self.veto_at <= 0.0:
            return False
        judged = [(j.unit.text, j.p) for j in self.ranked]
        return vetoed([q.text for q in quotes if not q.note], judged, self.veto_at)


def p_of(quote: str, judged: Sequence[tuple[str, float]]) -> float | None:
    """The model's probability for a quote: that of its best unit among those the quote holds or
    that hold it (``judged``: unit text, probability); None when none matches (a labelled line)."""
    words = _words(quote)
    if not words:
        return None
    hits = [p for t, p in judged if (w := _words(t)) and (_holds(words, w) or _holds(w, words))]
    return max(hits) if hits else None


def vetoed(quotes: Sequence[str], judged: Sequence[tuple[str, float]], veto_at: float) -> bool:
    """Every quote matches a unit the model judged, and none reaches ``veto_at``."""
    ps = [p_of(q, judged) for q in quotes]
    return bool(ps) and all(p is not None and p < veto_at for p in ps)


def _holds(outer: tuple[str, ...], inner: tuple[str, ...]) -> bool:
    """``inner``'s words appear in ``outer`` in a row."""
    n = len(inner)
    return any(outer[i : i + n] == inner for i in range(len(outer) - n + 1))
