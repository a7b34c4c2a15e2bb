"""Extractive answers: every sentence, list item and table row of the passages found is scored
against the question, and the answer is the best few, whole, in an order that reads.

A unit's score blends what it shares with the question (key terms weighted by rarity, with the
words of its heading counting less) and how close it is in meaning (the sentence vectors the index
already holds, or MiniLM for English). On top come what words alone miss:
- the kind of answer: a "how many" wants a number, a "when" a date or a time;
- the value asked about: for "a 700 EUR claim" the row whose range holds 700 EUR, not its
  neighbour; for "a five-hour ride" the rule for 4 hours or more;
- the asker's audience: a contractor's question prefers the sentences about contractors, and the
  rules written for employees fall back (``agent/scope``);
- the extreme asked for: "the highest cap" is found by ordering what was found, not by score.
Then the answer is the best unit, the sentence that continues it (the 31 March deadline that
belongs with the carry-over rule), and what else covers a part of the question not yet covered,
at most three, no two saying the same.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import takewhile

from agent.calibration import Calibration as C
from agent.messages import say
from agent.passages import Passage
from agent.phrasing import pattern
from agent.questions import (
    Asks,
    asked_years,
    latin_names,
    matches_kind,
    names_all,
    required_terms,
    years_in,
)
from agent.reasoning import Sentence
from agent.scope import unit_audience
from agent.terms import TermStats, coverage
from agent.units import Unit, points_back, units
from agent.values import (
    CURRENCIES,
    Range,
    count_words,
    dates,
    measure_named,
    numbers_said,
    ordinal_words,
    quantities,
    ranges,
    unit_words,
    versions,
    years,
)
from ingest.languages import CJK, fold_versions, tokenize
from ingest.lexicon import lexicon


@dataclass
class Scored:
    unit: Unit
    score: float
    lexical: float  # key-term coverage of the unit with its heading
    meaning: float  # closeness by meaning, 0..1 (0 when unknown)
    tokens: frozenset[str] = field(default_factory=frozenset)
    missing: frozenset[str] = frozenset()  # required terms (names, identifiers) it lacks
    cross: bool = False  # in another language than the question
    kind_ok: bool = True  # holds the kind of answer asked for
    named: bool = False  # a table row whose first cell the question names ("London", "L4")
    context: frozenset[str] = frozenset()  # its tokens with its label's and breadcrumbs'
    worded: float = 0.0  # what the question's words it says in its own language added


@dataclass
class Extract:
    """What the units of the passages say about one question."""

    chosen: list[Scored]
    ranked: list[Scored]
    weights: dict[str, float]  # the question's key terms
    unseen: float  # share of the key terms' weight the corpus never uses
    lang: str = "en"  # the question's
    unseen_words: list[str] = field(default_factory=list)  # the question's words behind them
    named: frozenset[str] = frozenset()  # the identifiers and names the question mentions
    question: str = ""
    asked: dict[str, float] = field(default_factory=dict)  # every key term, unseen ones too
    units: list[Unit] = field(default_factory=list)  # every unit of the passages, in order
    # share of the key terms' weight no unit in another language says in its own (0 when none is)
    unseen_across: float = 0.0


def _tokens(text: str, lang: str) -> frozenset[str]:
    return frozenset(tokenize(text, lang))


@functools.cache
def _unit_tokens(lang: str) -> frozenset[str]:
    """The words of units of measure as ``lang``'s tokens are written ("weeks" → "week"): two
    sentences that share only a unit do not carry on the same fact."""
    return frozenset(t for w in unit_words() for t in tokenize(w, lang))


def _foreign(terms: frozenset[str], lang: str) -> frozenset[str]:
    """Terms a passage in ``lang`` could not contain as written (non-Latin words in an English
    passage and the like): not held against it."""
    latin = lang not in ("zh", "ja", "uk", "ru")
    return frozenset(t for t in terms if bool(re.fullmatch(r"[\x00-\x7f]+", t)) != latin)


def _is_number_word(token: str, spoken: str) -> bool:
    """``token`` is the number part of a quantity as the question spells it ("5", "five")."""
    return bool(re.fullmatch(r"\d+(?:[.,]\d+)?k?", token)) or (
        token in spoken.lower() and (token in count_words() or token in ordinal_words())
    )


def closeness(sim: float | None, floor: float | None = None, span: float | None = None) -> float:
    """A cosine as 0..1, from ``floor`` (unrelated) to ``floor + span`` (the same meaning); by
    default those of two sentences (``Calibration.unrelated_at``, ``same_span``), read at each
    call so that an ablation reaches them."""
    if sim is None:
        return 0.0
    floor = C.unrelated_at if floor is None else floor
    span = C.same_span if span is None else span
    return min(max((sim - floor) / span, 0.0), 1.0)


def across(sim: float, q_lang: str, text_lang: str) -> float:
    """A question's cosine with a text in another language, read as the cosine the same question
    would have in the text's own language: across languages the multilingual embedder puts a
    question further from the sentence that answers it (``Calibration.cross_lingual_shift``).
    Measured for questions in other languages over English texts, and read there only: an English
    question over a text in another language, or two other languages, keep their cosine."""
    if text_lang == "en" and q_lang != "en":
        return sim + C.cross_lingual_shift
    return sim


def on_english_scale(sim: float, q_lang: str, cross: bool) -> float:
    """A unit's cosine with a question not in English, from the multilingual embedder, read as
    MiniLM's would be in English (``Calibration.use_on_minilm_*``). Measured for a question and a
    text in the same language, and read there only; across languages the cosine is read by
    ``across``."""
    if q_lang == "en" or cross:
        return sim
    return C.use_on_minilm_slope * sim + C.use_on_minilm_offset


def named_floor(latin: tuple[str, ...], unit: Unit, meaning: float) -> float:
    """What a unit in another language than the question scores at least when it writes every
    name the question writes in Latin letters ("Smart Inbox"); -1 when it does not."""
    if names_all(latin, f"{unit.label} {unit.text}") < 1.0:
        return -1.0
    return C.cross_named + C.cross_named_meaning * meaning


def _ranges(unit: Unit, lang: str) -> list[Range]:
    """The ranges a unit states; in a table row, a cell's bare figures are in the currency its
    header names ("Order value (EUR, net): 10,001 - 50,000")."""
    if not unit.cells:
        return ranges(unit.text, lang)
    out = []
    for header, value in unit.cells.items():
        named = measure_named(header)
        out += [replace(r, measure=r.measure or named) for r in ranges(value, lang)]
    return out


def _value_fit(asks: Asks, unit: Unit, lang: str) -> float:
    """+ when the unit's range holds the value asked about, − when its range of the same unit
    does not (the neighbouring row), 0 when it says nothing of such values."""
    if asks.quantity is None:
        return 0.0
    found = [r for r in _ranges(unit, lang) if r.measure_matches(asks.quantity)]
    if not found:
        return 0.0
    holding = [r for r in found if r.contains(asks.quantity)]
    if not holding:
        return -C.value_out_of_range
    # "10,001 - 50,000" says more about 12,000 than "above 5,000" in another table does: a
    # bounded range is the rule for that value, an open one a rule for everything past a line
    bounded = any(not (math.isinf(r.low) or math.isinf(r.high)) for r in holding)
    return C.value_in_range if bounded else C.value_in_open_range


def _bound_fit(asks: Asks, unit: Unit, lang: str) -> float:
    """+ for a rule that stops at a value ("up to 500 EUR") when the question asks where one
    stops ("up to what amount …?"), − for one that starts there; the other way round for "from
    what amount …?"."""
    if asks.bound is None:
        return 0.0
    found = _ranges(unit, lang)
    stops = any(math.isinf(r.low) and not math.isinf(r.high) for r in found)
    starts = any(math.isinf(r.high) and not math.isinf(r.low) for r in found)
    if stops == starts:
        return 0.0
    return C.bound_fit if stops == (asks.bound == "upper") else -C.bound_fit


def _number_fit(asks: Asks, unit: Unit, lang: str) -> float:
    """+ when a unit with no range of such values states the number asked about in the same unit,
    however it is written: "after five years" meets "from the fifth full year", "two weeks"
    meets "2 weeks"."""
    asked = asks.quantity
    if (
        asked is None
        or not asked.measure
        or any(r.measure_matches(asked) for r in ranges(unit.text, lang))
    ):
        return 0.0
    for q in numbers_said(unit.text, lang):
        if (q.measure, q.value) == (asked.measure, asked.value) or (
            q.days is not None and asked.days is not None and abs(q.days - asked.days) < 1e-6
        ):
            return C.number_fit
    return 0.0


# "purchase order (PO)", "paid time off (PTO)": a long form and the abbreviation it defines
_DEFINED = re.compile(r"((?:[^\W\d_][\w'-]*[\s-]+){1,6})\(([A-Z][A-Za-z]{1,5})\)")


# a legend: "(V) vegetarian, (VG) vegan, (GF) gluten-free", "(R) remote"
_LEGEND = re.compile(r"\(([A-Z][A-Z0-9]{0,3})\)\s+([^\W\d_][\w-]*)")


def _spells(abbr: str, word: str) -> bool:
    """ "VG" in "vegan", "GF" in "gluten-free": its letters in order, the first leading."""
    abbr, word = abbr.lower(), word.lower()
    if not word.startswith(abbr[0]):
        return False
    rest = iter(word[1:])
    return all(ch in rest for ch in abbr[1:])


def abbreviations(passages: Sequence[Passage]) -> dict[str, frozenset[str]]:
    """The abbreviations the passages define, each with the terms of its long form: a long
    form whose initials spell it ("purchase order (PO)"), or a legend's word that it
    shortens ("(VG) vegan"). A unit that says one says the other."""
    out: dict[str, frozenset[str]] = {}
    for p in passages:
        for m in _DEFINED.finditer(p.text):
            abbr = m.group(2).rstrip("s") if m.group(2).endswith("s") else m.group(2)
            words = re.findall(r"[^\W\d_]+", m.group(1))[-len(abbr) :]
            initials = "".join(w[0] for w in words).lower()
            if len(words) == len(abbr) and initials == abbr.lower():
                terms = frozenset(tokenize(" ".join(words), p.lang))
                for t in tokenize(abbr, p.lang):
                    out.setdefault(t, terms)
        for m in _LEGEND.finditer(p.text):
            abbr, word = m.group(1), m.group(2)
            if len(abbr) > 1 and _spells(abbr, word):
                for t in tokenize(abbr, p.lang):
                    out.setdefault(t, frozenset(tokenize(word, p.lang)))
    return out


_LIST_MARKS = re.compile(r"[,&+]")


def _names_several(value: str) -> bool:
    """ "Budget owner and department head": a value that names several things, by a list mark or
    a word of the lists ``several`` (agent/patterns/)."""
    return bool(_LIST_MARKS.search(value) or pattern("several").search(value))


def fits_value(asks: Asks, unit: Unit, lang: str) -> bool:
    """Does the unit state the value asked about, as a range that holds it or as that number?"""
    return _value_fit(asks, unit, lang) > 0 or _number_fit(asks, unit, lang) > 0


def _cell_fit(
    question_tokens: frozenset[str],
    unit: Unit,
    lang: str,
    column: dict[str, list[frozenset[str]]] | None = None,
) -> float:
    """A table row whose first cell is what the question names ("Munich", "L4") fits; so does
    one whose other cell is, whole, what the question names where another row of the table
    names it together with others ("a budget owner … alone" is the row approved by "Budget
    owner", not the one approved by "Budget owner and department head"). ``column``: each
    header's cells that list several."""
    if not unit.cells:
        return 0.0
    for k, (header, value) in enumerate(unit.cells.items()):
        # "All other cities" under "City" names no city: only words beyond the header's own
        # count; "China (Shanghai)" names Shanghai: each part of the first cell is a name
        own = _tokens(header, lang)
        if k == 0:
            for part in [value, *re.split(r"[()/,;]", value)]:
                cell = _tokens(part, lang) - own
                if cell and cell <= question_tokens:
                    return C.row_named
            continue
        cell = _tokens(value, lang) - own
        if (
            len(cell) >= 2
            and cell <= question_tokens
            and any(other > cell for other in (column or {}).get(header, []))
        ):
            return C.cell_named
    return 0.0


def _short_items(unit: Unit, at: Mapping[tuple[int, int], Unit]) -> list[Unit]:
    """The items too short to answer alone ("council tax bill", "rescue equipment") of the list
    a sentence ending in ":" introduces: with them it is one statement, scored with their words
    as its own and quoted with them (``choose``)."""
    if not unit.text.rstrip().endswith((":", "：")):
        return []
    out, order = [], unit.order + 1
    while (item := at.get((unit.passage, order))) is not None and item.kind == "item":
        if not item.quotable and re.search(r"[^\W\d_]", item.text):  # "2." is no item
            out.append(item)
        order += 1
    return out


def score_units(
    question: str,
    asks: Asks,
    passages: Sequence[Passage],
    stats: TermStats,
    asker: frozenset[str],
    embed: Callable[[str, list[str]], list[float]] | None = None,
    topic: str = "",
) -> Extract:
    all_weights = stats.key_terms(question, asks.lang, C.situation_share)
    if (
        asks.quantity is not None
    ):  # "five hours", "50k": the value is matched as a value, not a word
        spoken = question[asks.quantity.start : asks.quantity.end]
        all_weights = {
            t: w for t, w in all_weights.items() if not _is_number_word(t, spoken)
        } or all_weights
    total = sum(all_weights.values()) or 1.0
    never = set(stats.unseen(all_weights))
    unseen = sum(all_weights[t] for t in never) / total
    # A word no document uses cannot tell one sentence from another: coverage counts the others
    # (the words never seen speak to whether the documents answer at all: ``unseen``).
    weights = {t: w for t, w in all_weights.items() if t not in never}
    if asks.kind_noun:  # "Free trial length?": the length is the number of days, not a word
        noun = _tokens(asks.kind_noun, asks.lang)
        weights = {t: w for t, w in weights.items() if t not in noun} or weights
    q_tokens = _tokens(question, asks.lang)
    identifiers, names = required_terms(question, asks.lang)
    years = asked_years(question) - identifiers
    identifiers |= years
    # a name no document uses ("I live in Ireland": the asker's own situation) is missing from
    # every unit alike and tells none from another; what no document says is the unsaid share's
    seen_names = names - frozenset(stats.unseen(names))
    latin = latin_names(question, asks.lang)
    scored: list[Scored] = []
    all_units = units(passages, sentence_model="use")
    at = {(u.passage, u.order): u for u in all_units}
    staff = lexicon().staff  # the broadest audience: its rule is no one's narrower own
    # abbreviations the question says, or says in full: "the PO", "vegan" for "(VG)"
    defined = abbreviations(passages)
    shortened = {a: long for a, long in defined.items() if a in weights}
    in_full = {a: long for a, long in defined.items() if long and long <= weights.keys()}
    column: dict[str, list[frozenset[str]]] = {}
    for u in all_units:
        for header, value in u.cells.items():
            if _names_several(value):
                column.setdefault(header, []).append(_tokens(value, passages[u.passage].lang))
    for unit in all_units:
        p = passages[unit.passage]
        if not unit.quotable or p.tool:
            continue
        cross = p.lang != asks.lang
        toks = _tokens(unit.text, p.lang)
        for item in _short_items(unit, at):  # "You'll need copies of your:" says them
            toks |= _tokens(item.text, p.lang)
        context = toks | _tokens(unit.label, p.lang) | _tokens(p.breadcrumbs, p.lang)
        # "It is a single-step, 5-cylinder engine" is about the engine the sentence before names:
        # it matches the question's words with that sentence's, though it does not say them
        # itself (the gates read ``context``, what the unit and its headings say)
        before = at.get((unit.passage, unit.order - 1))
        points = before is not None and points_back(unit, before)
        # the sentence before is read when the unit points back to it or a year is asked
        before_toks = (
            _tokens(before.text, p.lang)
            if before is not None and (points or years)
            else frozenset()
        )
        pointed = before_toks if points else frozenset()
        if unit.record:  # a log's line is about its record: "Summary: …" under "TCK-1103 | …"
            context |= _tokens(unit.record, p.lang)
        for abbr, long in shortened.items():  # "who approves a purchase order" says "PO"
            if long <= context:
                context |= {abbr}
                toks |= {abbr} if long <= toks else frozenset()
        for abbr, long in in_full.items():  # "Lentil ragù (VG)" says "vegan"
            if abbr in toks:
                context |= long
                toks |= long
        own = C.own_words_share
        lexical = (
            0.0
            if cross
            else own * coverage(weights, toks) + (1 - own) * coverage(weights, context | pointed)
        )
        # names and identifiers are written alike in every language ("Team", "TCK-1042"); the
        # years asked are missing only from a unit that names another year (below)
        missing = (
            identifiers - years - context - pointed
            if not cross
            else identifiers - years - context - _foreign(identifiers, p.lang)
        )
        # a unit about another year than the one asked answers another case: "in 1974" for "in
        # 1973", the 2024 FAQ for "in 2026". It may say the year asked in its headings or in the
        # sentence before it (a paragraph tells one year's events), and of several ("from 1995
        # to 2000") one. A unit that names no year is about no other: a paragraph often sets
        # its year once, sentences before the one that answers.
        if years and not years & (context | pointed | before_toks):
            pointed_to = before.text if before is not None and pointed else ""
            if years_in(f"{unit.text} {unit.label} {p.breadcrumbs} {pointed_to}"):
                missing |= years
        unnamed = seen_names - context - pointed if not cross else frozenset()
        # its section is about what is asked: "2.3.1" in the heading or the one over it
        # a record's id (its first field) heads the lines under it like a heading
        record_id = unit.record.split("|")[0]
        heads = " ".join([unit.label, record_id, *p.breadcrumbs.split(" > ")[1:][-2:]])
        about = bool((identifiers | names) & _tokens(heads, p.lang))
        meaning = closeness(
            None
            if unit.sim is None
            else on_english_scale(across(unit.sim, asks.lang, p.lang), asks.lang, cross)
        )
        m = C.meaning_share
        base = meaning if cross or not weights else (1 - m) * lexical + m * meaning
        if cross:  # it may name what the question names in Latin
            base = max(base, named_floor(latin, unit, meaning))
        if asks.kind in ("any", "how") and len(toks - q_tokens) <= 1 and not unit.cells:
            # "Fixed in hotfix v2.3.1." only says the question back: it tells nothing
            base -= C.says_back_cost
        # "which customer reported …?": the record's first line names who, its summary what
        kind_ok = matches_kind(asks.kind, unit.text) or (
            bool(unit.record) and matches_kind(asks.kind, unit.record)
        )
        if not kind_ok:
            base -= C.kind_cost  # a "how many" that names no number does not answer it
        # the value asked about decides between rows that are otherwise about the question
        cell = _cell_fit(q_tokens, unit, p.lang, column)
        fit = (
            _value_fit(asks, unit, p.lang)
            + _number_fit(asks, unit, p.lang)
            + _bound_fit(asks, unit, p.lang)
        )
        base += (fit + cell) * min(1.0, base / C.fit_full_at)
        base += C.grade_weight * p.scores.grade
        base -= C.missing_id_cost * min(len(missing), 2) + C.missing_name_cost * min(
            len(unnamed), 2
        )  # another ticket, office…
        if about:
            base += C.about_bonus
        if topic and p.doc_id == topic:
            base += C.conversation_bonus  # a follow-up is most often answered where it began
        if (pattern("examples").search(heads) or pattern("an_example").match(unit.text)) and not (
            pattern("examples").search(question) or about
        ):
            base -= C.example_cost  # a worked example illustrates the rule; it is not the rule
        if (
            unit.record
            and asks.kind != "who"
            and not (
                identifiers & _tokens(record_id, p.lang) or names & _tokens(unit.record, p.lang)
            )
        ):
            base -= (
                C.record_cost
            )  # one case of a log, and the question names neither it nor its parties
        audience = unit_audience(unit.text, p.audience)
        # an asker with no known group (no directory, a public corpus) is held to no audience
        if audience and asker and not audience & asker:
            base -= C.other_audience_cost  # a rule written for someone else
        elif audience & asker - {staff}:
            base += C.own_audience_bonus  # the rule written for this asker's own, narrower audience
        scored.append(
            Scored(unit, base, lexical, meaning, toks, missing, cross, kind_ok, cell > 0, context)
        )
    scored.sort(key=lambda s: -s.score)
    if embed is not None and scored:
        _rescore(question, scored, embed, asks.lang)
    # the question's words behind them; Chinese and Japanese are written without spaces, so
    # there the words are the segmenter's
    spelled = (
        list(dict.fromkeys(tokenize(question, asks.lang)))
        if CJK.search(question)
        else re.findall(r"[^\W_][\w'-]*", question)
    )
    words = [w for w in spelled if set(tokenize(w, asks.lang)) & never]
    asked = {t: w for t, w in all_weights.items() if t in weights or t in never}
    return Extract(
        [],
        scored,
        weights,
        unseen,
        asks.lang,
        words,
        identifiers | names,
        question,
        asked,
        all_units,
    )


def _rescore(
    question: str, scored: list[Scored], embed: Callable[[str, list[str]], list[float]], lang: str
) -> None:
    """Re-score the best candidates by meaning with a sentence embedder (MiniLM for English, the
    multilingual one for another language)."""
    head = scored[: C.rescored]
    sims = embed(question, [s.unit.text for s in head])
    for s, sim in zip(head, sims, strict=True):
        better = closeness(on_english_scale(sim, lang, s.cross))
        if better > s.meaning:
            s.score += C.meaning_share * (better - s.meaning)
            s.meaning = better
    scored.sort(key=lambda s: -s.score)


# ------------------------------------------------------------------------------ choosing


def similar(a: Scored, b: Scored) -> bool:
    """Two units that say the same: most of their words, and the same figures."""
    if not a.tokens or not b.tokens:
        return a.unit.text == b.unit.text
    jaccard = len(a.tokens & b.tokens) / len(a.tokens | b.tokens)
    figures_a, figures_b = (
        set(re.findall(r"\d+", a.unit.text)),
        set(re.findall(r"\d+", b.unit.text)),
    )
    return jaccard >= C.similar_words or (
        jaccard >= C.similar_figures_words and figures_a == figures_b and bool(figures_a)
    )


def _ordering_value(s: Scored, dimension: str, year: int | None) -> float | None:
    text = f"{s.unit.label} {s.unit.text}" if dimension != "amount" else s.unit.text
    if dimension == "version":
        found = versions(text)
        return (
            float(sum(v * 1000 ** (3 - i) for i, v in enumerate(found[-1][:3]))) if found else None
        )
    if dimension == "date":
        days = dates(text, year)
        return float(max(days).toordinal()) if days else None
    values = [q.value for q in quantities(s.unit.text) if q.measure]
    return max(values) if values else None


def _extreme(asks: Asks, ranked: list[Scored], passages: Sequence[Passage]) -> Scored | None:
    """Among the units that answer alike (the rows of the best table, the sentences near the best
    score), the one with the highest / lowest / latest / earliest value."""
    best = ranked[0]
    if best.named:
        return None  # "the maximum in London": the row the question names, not a ranking
    header = tuple(best.unit.cells)  # a table cut across two chunks is still one table
    peers = [
        s
        for s in ranked
        if (s.unit.passage == best.unit.passage and s.unit.kind == best.unit.kind)
        or (
            (header and tuple(s.unit.cells) == header or asks.dimension == "version")
            and passages[s.unit.passage].doc_id == passages[best.unit.passage].doc_id
        )  # the rows of one table, even cut across chunks; the releases of one log
        or s.score >= best.score - C.extreme_near
    ]
    year_hint = next(
        iter(years(" ".join(s.unit.label + " " + s.unit.text for s in peers[:3]))), None
    )
    valued = [
        (v, s)
        for s in peers
        if (v := _ordering_value(s, asks.dimension or "amount", year_hint)) is not None
        and not re.search(
            r"\b(?:planned|not released|upcoming|draft)\b", s.unit.label + s.unit.text, re.I
        )
    ]
    if len(valued) < 2:
        return None
    pick = max if asks.extreme in ("high", "late") else min
    return pick(valued, key=lambda pair: (pair[0], pair[1].score))[1]


def _in_list(
    place: tuple[int, int],
    by_place: dict[tuple[int, int], Scored],
    units_at: Mapping[tuple[int, int], Unit],
) -> Scored | None:
    """The unit at ``place`` as one of a list's items: a ranked one, or an item too short to
    answer alone ("Universal Credit", under "… for benefits including:"), which says its part
    of the list all the same. A lone item number ("2.") is none."""
    if place in by_place:
        return by_place[place]
    unit = units_at.get(place)
    if unit is None or unit.kind != "item" or not re.search(r"[^\W\d_]", unit.text):
        return None
    return Scored(unit, 0.0, 0.0, 0.0)


def _list_under(
    first: Scored,
    by_place: dict[tuple[int, int], Scored],
    units_at: Mapping[tuple[int, int], Unit],
) -> list[Scored]:
    """The items or rows of the list a sentence ending in ":" introduces (a column header
    between them, or a lone item number, neither of which is a unit of an answer, is passed
    over)."""
    if not first.unit.text.rstrip().endswith((":", "：")):
        return []
    out: list[Scored] = []
    order, gap = first.unit.order + 1, 0
    while len(out) < 12:
        s = _in_list((first.unit.passage, order), by_place, units_at)
        order += 1
        if s is None and gap == 0:  # a header, or an item's number the splitter cut off ("2.")
            gap = 1
            continue
        if s is None or s.unit.kind not in ("item", "row"):
            break
        out.append(s)
        gap = 0
    return out


def _whole_list(
    first: Scored, by_place: dict[tuple[int, int], Scored], every: Sequence[Unit]
) -> list[Scored]:
    """The items of the list ``first`` belongs to (or introduces), with the sentence that
    introduces them, when one ending in ":" does ("To fix it:" over the steps); [] otherwise,
    or when the list is longer than ``MAX_LIST`` items."""
    all_units = [u for u in every if u.passage == first.unit.passage]
    at = next((k for k, u in enumerate(all_units) if u.order == first.unit.order), None)
    if at is None:
        return []
    if first.unit.kind != "item":  # the sentence over the list, or the one before "To fix it:"
        ahead = [u.kind for u in all_units[at + 1 : at + 3]]
        if ahead[:1] == ["item"]:
            at += 1
        elif ahead == ["sentence", "item"] and len(all_units[at + 1].text.split()) < 4:
            at += 2
        else:
            return []
    start = at
    while start > 0 and all_units[start - 1].kind == "item":
        start -= 1
    end = at
    while end + 1 < len(all_units) and all_units[end + 1].kind == "item":
        end += 1
    intro = all_units[start - 1] if start else None
    lines = {u.line for u in all_units[start : end + 1]}
    if intro is None or not intro.text.rstrip().endswith((":", "：")) or len(lines) > C.max_list:
        return []
    before = [intro.order - 1] if len(intro.text.split()) < 4 else []  # "To fix it:" is no unit
    wanted = [*before, intro.order, *(u.order for u in all_units[start : end + 1])]
    units_at = {(u.passage, u.order): u for u in all_units}
    found = [_in_list((first.unit.passage, o), by_place, units_at) for o in wanted]
    return [s for s in found if s is not None]


def choose(extract: Extract, asks: Asks, passages: Sequence[Passage]) -> list[Scored]:
    """The units of the answer: the best (or the extreme asked for), what continues it, and what
    covers a part of the question not covered yet; at most three, none saying the same."""
    ranked = extract.ranked
    if not ranked:
        return []
    first = ranked[0]
    if asks.extreme:
        first = _extreme(asks, ranked, passages) or first
    chosen = [first]
    by_place = {(s.unit.passage, s.unit.order): s for s in ranked}
    if first.unit.record and first.unit.text in first.unit.record:
        # a log record's id line names the case; what it was about is said by the lines under it
        record = first.unit.record
        under = [by_place.get((first.unit.passage, first.unit.order + k)) for k in range(1, 6)]
        lines = [
            s
            for s in takewhile(lambda s: s is not None and s.unit.record == record, under)
            if s is not None and s.unit.text not in record
        ]
        if lines:
            return lines[: C.max_units]
    if asks.kind == "any" and asks.quantity is None and not asks.extreme and not first.named:
        # "What should I do?" answered by one step of several: the steps, as the list says them
        steps = _whole_list(first, by_place, extract.units)
        if len(steps) > 1:
            return steps
    before = by_place.get((first.unit.passage, first.unit.order - 1))
    if before is not None and points_back(first.unit, before.unit):
        # "After that, you pay the rent yourself" says nothing without what "that" is
        chosen.insert(0, before)
    following = by_place.get((first.unit.passage, first.unit.order + 1))
    lang = passages[first.unit.passage].lang
    covered = set(first.tokens) | _tokens(first.unit.label, lang)
    same_item = (  # a list item is one fact: "A contractor books … Not reimbursed: …"
        following is not None
        and first.unit.kind == following.unit.kind == "item"
        and following.unit.line == first.unit.line
    )
    if following is not None and (
        same_item
        or following.unit.kind in ("sentence", "item")
        and following.unit.kind == first.unit.kind
        and following.unit.line in (first.unit.line, first.unit.line + 1)
        and following.tokens & (set(extract.weights) | first.tokens) - _unit_tokens(lang)
        and following.score >= first.score * C.following_at
        and not similar(following, first)
        and not asks.extreme
    ):
        chosen.append(following)
        covered |= following.tokens
    # "… according to the following scale:" is answered by the step of its list that holds the
    # value asked about ("in months 13 to 24 50%" for 18 months)
    units_at = {(u.passage, u.order): u for u in extract.units}
    listed = _list_under(first, by_place, units_at)
    if len(listed) > C.max_list:  # too long to quote whole: the items that answer on their own
        listed = _list_under(first, by_place, {})
    held = [s for s in listed if _value_fit(asks, s.unit, lang) > 0]
    if held and held[0] not in chosen:
        chosen.append(held[0])
        covered |= held[0].tokens
    elif listed and len(listed) <= C.max_list and not asks.extreme and asks.quantity is None:
        # "… when all of the following criteria are met:" says nothing without its list: the
        # answer is the sentence and the list it introduces
        return [first, *listed]
    for s in ranked[1:]:
        if len(chosen) >= C.max_units or s.score < first.score * C.near_best_at:
            break
        if any(similar(s, c) for c in chosen):
            continue
        if (
            asks.quantity is not None
            and first.unit.cells
            and s.unit.cells.keys() == first.unit.cells.keys()
        ):
            continue  # the value asked about chose the row: its neighbours are rules for other values
        new = {t for t in extract.weights if t in s.tokens and t not in covered}
        if new and sum(extract.weights[t] for t in new) >= C.adds_at * sum(
            extract.weights.values()
        ):
            chosen.append(s)
            covered |= s.tokens
    return _with_short_items(chosen, extract)


def _with_short_items(chosen: list[Scored], extract: Extract) -> list[Scored]:
    """Each introduction chosen, followed by the short items it says with them
    (``_short_items``): all of a short list, the ones that state a term of the question of a
    longer one ("You may also claim it in:" over forty countries: the one asked about)."""
    at = {(u.passage, u.order): u for u in extract.units}
    quoted = {c.unit.text for c in chosen}
    out: list[Scored] = []
    for c in chosen:
        out.append(c)
        items = [u for u in _short_items(c.unit, at) if u.text not in quoted]
        if len({u.line for u in items}) > C.max_list:
            lang = extract.lang
            items = [u for u in items if _tokens(u.text, lang) & extract.weights.keys()]
        out += [Scored(u, 0.0, 0.0, 0.0) for u in items]
        quoted |= {u.text for u in items}
    return out


def figures_by_measure(text: str) -> dict[str, set[float]]:
    """The figures of a sentence by measure ("" for bare numbers): what two rules disagree on."""
    out: dict[str, set[float]] = {}
    for q in quantities(text):
        # "a five-day week" describes the week: it is no figure of days to disagree on
        adjective = "-" in text[q.start : q.end]
        if q.measure and not math.isinf(q.value) and not adjective:
            out.setdefault(q.measure, set()).add(q.value)
    return out


def _subject_tokens(s: Scored) -> set[str]:
    return {t for t in s.tokens if not re.fullmatch(r"[\d.,]+", t)}


# Whether two sentences (in a language) say the same thing, by meaning; the offline reasoner
# answers it with its sentence embedders.
SameThing = Callable[[str, str, str], bool]


def newest_first(
    extract: Extract,
    asks: Asks,
    passages: Sequence[Passage],
    asker: frozenset[str],
    same: SameThing | None = None,
) -> tuple[list[Scored], Sentence | None]:
    """The units of the answer, taken from the newer document where two conflict, and the note
    that names both; where two agree, the newer one's words (``restated_newer``)."""
    chosen = choose(extract, asks, passages)
    found = conflict(extract, chosen, passages, asker, same)
    if found is None:
        return restated_newer(extract, chosen, passages, asker, same), None
    newer, older, note = found
    if older not in chosen:
        return chosen, note
    outdated = passages[older.unit.passage].doc_id
    rest = [s for s in extract.ranked if passages[s.unit.passage].doc_id != outdated]
    return choose(replace(extract, ranked=rest), asks, passages), note


Figures = dict[str, set[float]]  # figures_by_measure: each measure's values


def _on_the_same_thing(
    extract: Extract, c: Scored, passages: Sequence[Passage], asker: frozenset[str]
) -> Iterator[tuple[Scored, Figures, Figures, list[str]]]:
    """The units of other documents with another date that answer the question about as well as
    ``c``, for the same audience (the question's key terms alike, some of the same words), with a
    figure in a measure ``c`` gives one in: each with both units' figures and the shared
    measures. A line of a log tells one case, no rule: it is never one of them."""
    mine = passages[c.unit.passage]
    mine_figures = figures_by_measure(c.unit.text)
    if not mine_figures or c.unit.record or not mine.updated:
        return
    mine_audience = unit_audience(c.unit.text, mine.audience)
    keys_c = {t for t in extract.weights if t in c.tokens}
    for s in extract.ranked:
        other = passages[s.unit.passage]
        if (
            other.doc_id == mine.doc_id
            or s.score < c.score - C.conflict_near
            or not other.updated
            or s.unit.record
            or other.updated[:10] == mine.updated[:10]
        ):
            continue
        theirs_audience = unit_audience(s.unit.text, other.audience)
        if mine_audience and theirs_audience and not mine_audience & theirs_audience:
            continue  # rules for different people do not conflict
        keys_s = {t for t in extract.weights if t in s.tokens}
        keys = keys_c | keys_s
        if not keys or len(keys_c & keys_s) / len(keys) < C.conflict_keys:
            continue
        a, b = _subject_tokens(c), _subject_tokens(s)
        if not a or len(a & b) / len(a | b) < C.conflict_words:
            continue
        theirs = figures_by_measure(s.unit.text)
        shared = [m for m in mine_figures if m in theirs]
        if shared:
            yield s, mine_figures, theirs, shared


def _said_alike(c: Scored, s: Scored, passages: Sequence[Passage], same: SameThing | None) -> bool:
    """Do the two units say the same thing by meaning (``same``; without it, they count as
    the same)? The certifications a department head approves above 1,000 EUR are not the
    expense claims above 5,000 EUR."""
    mine, other = passages[c.unit.passage], passages[s.unit.passage]
    return same is None or (mine.lang == other.lang and same(c.unit.text, s.unit.text, mine.lang))


def conflict(
    extract: Extract,
    chosen: Sequence[Scored],
    passages: Sequence[Passage],
    asker: frozenset[str],
    same: SameThing | None = None,
) -> tuple[Scored, Scored, Sentence] | None:
    """A note when another source gives a different value for the same thing in the same scope
    (``_on_the_same_thing``): a figure in the same measure that differs, in a unit that says the
    same thing by meaning. The newer document applies; the note names both, with dates."""
    for c in chosen:
        mine = passages[c.unit.passage]
        for s, mine_figures, theirs, shared in _on_the_same_thing(extract, c, passages, asker):
            if all(mine_figures[m] == theirs[m] for m in shared):
                continue
            if not _said_alike(c, s, passages, same):
                continue
            other = passages[s.unit.passage]
            newer, older = (c, s) if mine.updated >= other.updated else (s, c)
            old_p, new_p = passages[older.unit.passage], passages[newer.unit.passage]
            measure = shared[0]
            figures = figures_by_measure(older.unit.text)[measure]
            value = ", ".join(_figure(v, measure) for v in sorted(figures))
            text = say(
                extract.lang,
                "conflict",
                old=old_p.title,
                old_date=old_p.updated[:10],
                value=value,
                new=new_p.title,
                new_date=new_p.updated[:10],
            )
            return (
                newer,
                older,
                Sentence(text, [older.unit.passage, newer.unit.passage], note=True, conflict=True),
            )
    return None


def restated_newer(
    extract: Extract,
    chosen: Sequence[Scored],
    passages: Sequence[Passage],
    asker: frozenset[str],
    same: SameThing | None = None,
) -> list[Scored]:
    """The chosen units, each in the words of the newest document that gives the same figures
    for the same thing in the same scope (``_on_the_same_thing``, the same by meaning): an old
    FAQ and this year's policy both say 25 days, and the policy is the one in force, the one a
    reader should open."""
    out: list[Scored] = []
    for c in chosen:
        newest = c
        if c.unit.kind == "item":  # one of a list quoted whole: the list stays as it is
            out.append(c)
            continue
        for s, mine_figures, theirs, shared in _on_the_same_thing(extract, c, passages, asker):
            agree = all(mine_figures[m] == theirs[m] for m in shared)
            newer = passages[s.unit.passage].updated > passages[newest.unit.passage].updated
            if agree and newer and _said_alike(c, s, passages, same):
                newest = s
        if newest not in out:
            out.append(newest)
    return out


def _figure(value: float, measure: str) -> str:
    number = f"{value:,.2f}".rstrip("0").rstrip(".")
    if measure in ("", "%"):
        return number + measure
    if measure in CURRENCIES:
        return f"{number} {measure.upper()}"
    return f"{number} {measure}{'' if value == 1 else 's'}"


def heading(s: Scored, asks: Asks, extract: Extract, passage: Passage) -> str:
    """The heading over a unit when it holds part of the answer — the version a fix was released
    in, the date a rule is for, the name the question asks about ("2.3.1 (2026-09-03) › Fixes",
    "Wednesday, 7 October") — else ''."""
    label, text = s.unit.label, s.unit.text
    if s.unit.record and text not in s.unit.record:
        return s.unit.record  # a line of a log means little without the case it is about
    if label and label.casefold() in text.casefold():
        label = ""
    if asks.versions and not versions(text) and not (label and versions(label)):
        # the release a fix sits under is often two headings up ("2.3.1 › Fixes")
        over = [h for h in passage.breadcrumbs.split(" > ")[1:] if versions(h)]
        if over:
            return fold_versions(over[-1]) + (f" › {label}" if label else "")
    if not label:
        return ""
    holds = (
        (asks.versions and bool(versions(label)) and not versions(text))
        or (asks.kind == "date" and bool(dates(label, 2000)) and not dates(text, 2000))
        or bool(extract.named & _tokens(label, passage.lang) - s.tokens)
    )
    return fold_versions(label) if holds else ""
