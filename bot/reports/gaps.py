"""The gap report for document owners: what the documents could not answer, grouped by topic;
answers marked outdated; documents cited often but not updated for a year; documents found
disagreeing. Read from the turns and feedback on record (``bot/reports/feedback.py``) and the index.

Topics come from the embedder Footnote already has for meaning across languages (the
multilingual USE), helped by character trigrams of the index's own terms where USE is weak
(Ukrainian); grouped by average-linkage agglomerative clustering with a threshold, so "vacation carry-over" asked in English,
German, Russian and Ukrainian lands in one group. A group's name is its most characteristic terms:
the index's own tokenisation (stems, stop words dropped), scored by how many of the group's
questions use a term against how rare it is among all the period's questions (TF-IDF), shown as
the word people typed, taken from the group's questions in the language most of the period's
questions are asked in (when it has any), so a topic asked in four languages gets one name. Ties break alphabetically, so the same questions always get the same name.

The closest documents of a group are searched with its questions under the ACL of EVERY asker in
the group at once (the retriever's channel rule: a passage must be readable by each of them), so
the report never names a document to owners on behalf of someone who could not read it.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from agent.terms import is_question_word
from bot.reports.feedback import FeedbackRecord, TurnRecord
from ingest.index import allowed
from ingest.languages import detect_lang, tokenize
from ingest.stopwords import LATIN_FUNCTION_WORDS

# The similarity (``similarity``: USE cosine + LEXICAL_WEIGHT x trigram cosine) above which two
# groups of questions ask about the same thing. On same-topic questions in en/de/ru/uk against
# other topics, 0.40-0.45 split them right (0.5 leaves Ukrainian apart): tests/bot/test_gaps.py.
TOPIC_THRESHOLD = 0.42
LEXICAL_WEIGHT = 1.0
UNANSWERED_STATUSES = ("unknown", "partial")
UNANSWERED_REASONS = ("unanswered", "incomplete")  # 👎 "didn't answer", "incomplete"
MAX_QUESTIONS = 2000  # the most recent unanswered questions a report groups
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class DocRef:
    doc_id: str
    title: str
    updated: str = ""
    owner: str = ""
    # The ACL values a reader must match to read it (every chunk's, as the index holds them when
    # the report is built); () when the index could not say: then nobody, for a digest.
    acl: tuple[str, ...] = ()

    def readable_by(self, principals: Sequence[str]) -> bool:
        return bool(set(allowed(principals)) & set(self.acl))


@dataclass(frozen=True)
class Topic:
    name: str
    terms: list[str]
    count: int  # questions in the group
    askers: int  # distinct people who asked them
    examples: list[str]
    closest: list[DocRef]
    # Who asked (each distinct group list) and what their questions are about: the documents
    # their answers cited and each asker's own closest ones — what a digest checks its readers by.
    readers: list[tuple[str, ...]] = field(default_factory=list)
    related: list[DocRef] = field(default_factory=list)


@dataclass(frozen=True)
class OutdatedAnswer:
    question: str
    at: str
    cited: list[DocRef]
    groups: tuple[str, ...] = ()  # the asker's


@dataclass(frozen=True)
class StaleDocument:
    doc: DocRef
    citations: int


@dataclass(frozen=True)
class DocumentConflict:
    older: DocRef
    newer: DocRef
    count: int
    note: str  # the answer's own note, naming both


@dataclass
class GapReport:
    since: str
    until: str
    turns: int  # answered turns on record in the period
    unanswered: int  # of them, questions the documents could not answer
    topics: list[Topic] = field(default_factory=list)
    outdated: list[OutdatedAnswer] = field(default_factory=list)
    stale: list[StaleDocument] = field(default_factory=list)
    conflicts: list[DocumentConflict] = field(default_factory=list)
    owner: str = ""  # set on one owner's share of the report (``bot/reports/digest.py``)
    left_out: int = 0  # items a digest's readers may not all read (``bot/reports/digest.py``)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def is_empty(self) -> bool:
        return not (self.topics or self.outdated or self.stale or self.conflicts)


# --- what the report needs from the rest of Footnote (the index and the embedder) -------------

Embed = Callable[[Sequence[str]], np.ndarray]  # questions → normalised rows
# (questions, the group sets of every asker) → the closest documents all of them may read
SearchDocs = Callable[[Sequence[str], Sequence[Sequence[str]]], list[DocRef]]
# (doc id, the groups of someone who was shown it) → the document as the index holds it now
DocLookup = Callable[[str, Sequence[str]], DocRef | None]


def is_unanswered(turn: TurnRecord, feedback: FeedbackRecord | None) -> bool:
    if turn.status in UNANSWERED_STATUSES:
        return True
    return (
        feedback is not None and feedback.vote == "down" and feedback.reason in UNANSWERED_REASONS
    )


def build_report(
    rows: Sequence[tuple[TurnRecord, FeedbackRecord | None]],
    *,
    embed: Embed,
    search: SearchDocs,
    lookup: DocLookup,
    since: str,
    until: str | None = None,
    max_topics: int = 10,
    examples: int = 3,
    stale_days: int = 365,
    stale_min_citations: int = 3,
    threshold: float = TOPIC_THRESHOLD,
) -> GapReport:
    until = until or dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
    rows = [(t, f) for t, f in rows if t.at <= until]
    gaps = [t for t, f in rows if is_unanswered(t, f)][-MAX_QUESTIONS:]
    report = GapReport(since=since, until=until, turns=len(rows), unanswered=len(gaps))
    ref = _refs(lookup)
    if gaps:
        questions = [t.question for t in gaps]
        sim = similarity(questions, embed(questions))
        idf = _idf([t.question for t, _ in rows])
        langs = Counter(detect_lang(t.question) for t, _ in rows)
        main_lang = min(langs, key=lambda lang: (-langs[lang], lang))
        topics = []
        for members in cluster(sim, threshold):
            turns = [gaps[i] for i in members]
            topics.append(
                _topic(turns, idf, search, examples, sim[np.ix_(members, members)], main_lang, ref)
            )
        topics.sort(key=lambda t: (-t.count, -t.askers, t.name))
        report.topics = topics[:max_topics]
    report.outdated = [
        OutdatedAnswer(
            t.question, t.at, [ref(c.doc_id, c.title, t.groups) for c in t.citations], t.groups
        )
        for t, f in rows
        if f is not None and f.vote == "down" and f.reason == "outdated"
    ]
    report.stale = _stale(rows, lookup, until, stale_days, stale_min_citations)
    report.conflicts = _conflicts(rows, ref)
    return report


DocRefs = Callable[
    ..., DocRef
]  # (doc id, title as recorded, groups of someone shown it[, updated])


def _refs(lookup: DocLookup) -> DocRefs:
    """A document named by a record, with its owner and ACL in the index now (none when it is
    gone: no owner, and no reader for a digest): the owner routes an item to its owner's digest,
    the ACL decides who may see it."""
    known: dict[tuple[str, tuple[str, ...]], DocRef | None] = {}

    def ref(doc_id: str, title: str, groups: Sequence[str], updated: str = "") -> DocRef:
        key = (doc_id, tuple(groups))
        if key not in known:
            known[key] = lookup(doc_id, groups)
        doc = known[key]
        if doc is None:
            return DocRef(doc_id, title, updated)
        return DocRef(doc_id, title, updated, doc.owner, doc.acl)

    return ref


def similarity(questions: Sequence[str], vectors: np.ndarray) -> np.ndarray:
    """How alike two questions are: the cosine of their USE vectors plus the cosine of the
    character trigrams of their content terms. USE carries meaning across languages but is weak
    in Ukrainian (a Ukrainian question is about as close to any English one as to its own topic);
    the trigrams of stems bridge the Cyrillic languages ("перенести днів відпустки" ~ "перенести
    дней отпуска") and reward shared wording in any one language."""
    v = np.asarray(vectors, dtype=np.float64)
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    grams = [_trigrams(q) for q in questions]
    keys = {g: i for i, g in enumerate(sorted({g for c in grams for g in c}))}
    m = np.zeros((len(questions), max(len(keys), 1)))
    for row, counts in enumerate(grams):
        for g, n in counts.items():
            m[row, keys[g]] = n
    m = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    sim: np.ndarray = v @ v.T + LEXICAL_WEIGHT * (m @ m.T)
    return sim


def _trigrams(question: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for term in _terms(question)[0]:
        padded = f" {term} "
        counts.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return counts


def cluster(sim: np.ndarray, threshold: float) -> list[list[int]]:
    """Average-linkage agglomerative clustering: merge the two groups whose questions are most
    alike on average until no two are alike above ``threshold``. Groups come back in the order of
    their first question; members in order."""
    n = len(sim)
    if n == 0:
        return []
    sim = np.array(sim, dtype=np.float64)
    np.fill_diagonal(sim, -np.inf)
    size = np.ones(n)
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    while len(members) > 1:
        a, b = divmod(int(np.argmax(sim)), n)
        if sim[a, b] < threshold:
            break
        a, b = min(a, b), max(a, b)
        # Lance-Williams for average linkage: the merged group's mean similarity to each other
        merged = (size[a] * sim[a] + size[b] * sim[b]) / (size[a] + size[b])
        sim[a, :], sim[:, a] = merged, merged
        sim[a, a] = -np.inf
        sim[b, :], sim[:, b] = -np.inf, -np.inf
        size[a] += size[b]
        members[a] = sorted(members[a] + members.pop(b))
    return [members[i] for i in sorted(members, key=lambda k: members[k][0])]


def _terms(question: str) -> tuple[list[str], dict[str, str]]:
    """A question's content terms (the index's tokenisation, less the function words of the
    languages it only detects) and, per term, the word typed."""
    lang = detect_lang(question)
    function_words = LATIN_FUNCTION_WORDS.get(lang, frozenset())
    terms = [
        t
        for t in tokenize(question, lang)
        if not is_question_word(t) and len(t) > 1 and t not in function_words
    ]
    shown: dict[str, str] = {}
    for word in _WORD.findall(question):
        toks = tokenize(word, lang)
        if len(toks) == 1 and toks[0] not in shown:
            shown[toks[0]] = word.lower()
    return terms, shown


def _idf(questions: Sequence[str]) -> dict[str, float]:
    df: Counter[str] = Counter()
    for q in questions:
        df.update(set(_terms(q)[0]))
    n = len(questions)
    return {t: math.log((n + 1) / (d + 1)) + 1.0 for t, d in df.items()}


def topic_terms(
    questions: Sequence[str], idf: dict[str, float], central: str = "", top: int = 3
) -> list[str]:
    """The group's most characteristic terms, as typed: share of its questions that use the term
    times the term's rarity among all questions. Ties go to the terms of the group's most central
    question (in its order), then alphabetical: the same questions always get the same name."""
    order = {t: i for i, t in enumerate(reversed(_terms(central)[0]))} if central else {}
    df: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = defaultdict(Counter)
    for q in questions:
        terms, shown = _terms(q)
        df.update(set(terms))
        for t in set(terms):
            forms[t][shown.get(t, t)] += 1
    scored = sorted(
        df,
        key=lambda t: (
            -round(df[t] / len(questions) * idf.get(t, 1.0), 9),
            -order.get(t, -1),
            t,
        ),
    )
    words: list[str] = []
    for t in scored:
        word = min(forms[t], key=lambda w: (-forms[t][w], w))
        if word not in words:
            words.append(word)
        if len(words) == top:
            break
    return words


def _topic(
    turns: list[TurnRecord],
    idf: dict[str, float],
    search: SearchDocs,
    examples: int,
    sim: np.ndarray,
    main_lang: str,
    ref: DocRefs | None = None,
) -> Topic:
    questions = [t.question for t in turns]
    # named in the language most questions of the period are asked in, when the group has it
    named = [i for i, q in enumerate(questions) if detect_lang(q) == main_lang] or list(
        range(len(questions))
    )
    central = questions[named[int(np.argmax(sim[np.ix_(named, named)].sum(axis=1)))]]
    terms = topic_terms([questions[i] for i in named], idf, central)
    # the most common wordings first, each once
    counted = Counter(" ".join(q.split()) for q in questions)
    shown = sorted(counted, key=lambda q: (-counted[q], questions.index(q)))[:examples]
    readers = list(dict.fromkeys(tuple(sorted(t.groups)) for t in turns))
    closest = search(shown, readers)
    related: dict[str, DocRef] = {}
    if ref is not None:
        for t in turns:
            for c in t.citations:
                related.setdefault(c.doc_id, ref(c.doc_id, c.title, t.groups))
    # each asker alone finds what their question is about, which all of them together may not
    for groups in readers if len(readers) > 1 else []:
        for d in search(shown, [groups]):
            related.setdefault(d.doc_id, d)
    return Topic(
        name=" · ".join(terms) or shown[0][:60],
        terms=terms,
        count=len(turns),
        askers=len({t.user_id for t in turns}),
        examples=shown,
        closest=closest,
        readers=readers,
        related=list(related.values()),
    )


def _stale(
    rows: Sequence[tuple[TurnRecord, FeedbackRecord | None]],
    lookup: DocLookup,
    until: str,
    stale_days: int,
    min_citations: int,
) -> list[StaleDocument]:
    cited: Counter[str] = Counter()
    reader: dict[str, Sequence[str]] = {}  # an asker who was shown the document: read as them
    for t, _ in rows:
        cited.update({c.doc_id for c in t.citations})
        for c in t.citations:
            reader.setdefault(c.doc_id, t.groups)
    cutoff = (dt.datetime.fromisoformat(until) - dt.timedelta(days=stale_days)).date().isoformat()
    out = []
    for doc_id, n in cited.items():
        if n < min_citations:
            continue
        doc = lookup(doc_id, reader[doc_id])
        if doc is not None and doc.updated and doc.updated[:10] < cutoff:
            out.append(StaleDocument(doc, n))
    out.sort(key=lambda s: (-s.citations, s.doc.updated, s.doc.doc_id))
    return out


def _conflicts(
    rows: Sequence[tuple[TurnRecord, FeedbackRecord | None]],
    ref: DocRefs = lambda doc_id, title, _groups, updated="": DocRef(doc_id, title, updated),
) -> list[DocumentConflict]:
    seen: dict[tuple[str, str], list[Any]] = {}
    for t, _ in rows:
        for c in t.conflicts:
            key = (c.older, c.newer)
            if key not in seen:
                older = ref(c.older, c.older_title, t.groups, c.older_updated)
                newer = ref(c.newer, c.newer_title, t.groups, c.newer_updated)
                seen[key] = [older, newer, 0, c.note]
            seen[key][2] += 1
    out = [DocumentConflict(o, n, count, note) for o, n, count, note in seen.values()]
    out.sort(key=lambda c: (-c.count, c.older.doc_id, c.newer.doc_id))
    return out


# --- wiring to the index ----------------------------------------------------------------------


def index_access(deps: Any, top_docs: int = 3) -> tuple[Embed, SearchDocs, DocLookup]:
    """The report's three needs, from ``Deps``: the multilingual embedder, a search under every
    asker's ACL at once, and the index's current record of a document (read with the groups of
    someone it was cited to: the index knows no reader above the ACL)."""

    def embed(questions: Sequence[str]) -> np.ndarray:
        # loaded on first use: a report with nothing unanswered never loads a model
        embedder = next((e for e in deps.embedders if e.name == "use"), deps.embedders[0])
        return np.asarray(embedder.embed(list(questions), kind="query"))

    def search(questions: Sequence[str], readers: Sequence[Sequence[str]]) -> list[DocRef]:
        if not readers:
            return []
        score: dict[str, float] = defaultdict(float)
        found: dict[str, DocRef] = {}
        for q in questions:
            passages = deps.retriever.search(q, readers[0], top_k=5, readers=readers[1:])
            for rank, doc_id in enumerate(dict.fromkeys(p.doc_id for p in passages)):
                score[doc_id] += 1.0 / (rank + 1)
            for p in passages:
                found.setdefault(p.doc_id, DocRef(p.doc_id, p.title, p.updated, p.owner))
        best = sorted(score, key=lambda d: (-score[d], d))[:top_docs]
        return [_with_acl(found[d], readers[0]) for d in best]

    def lookup(doc_id: str, groups: Sequence[str]) -> DocRef | None:
        chunks = deps.index.chunks(doc_id, groups)
        if not chunks:
            return None
        c = chunks[0]
        return DocRef(
            doc_id, c["title"], c.get("updated") or "", c.get("owner") or "", _acl(chunks)
        )

    def _with_acl(doc: DocRef, groups: Sequence[str]) -> DocRef:
        return replace(doc, acl=_acl(deps.index.chunks(doc.doc_id, groups)))

    return embed, search, lookup


def _acl(chunks: Sequence[Any]) -> tuple[str, ...]:
    """The ACL values every chunk of a document admits: a reader who matches one of them may
    read each chunk (a document half re-written under a new rule counts as the narrower)."""
    sets = [set(c.get("acl") or ()) for c in chunks]
    return tuple(sorted(set.intersection(*sets))) if sets else ()


def report_lines(report: GapReport) -> list[str]:
    """The report as plain lines (the terminal, and the digest's text fallback)."""
    lines = [
        f"Questions from {report.since[:10]} to {report.until[:10]}: {report.turns} questions "
        f"asked, {report.unanswered} the documents could not answer."
    ]
    if report.topics:
        lines += ["", "Top unanswered topics"]
        for i, t in enumerate(report.topics, 1):
            people = f"{t.askers} {'person' if t.askers == 1 else 'people'}"
            asked = f"{t.count} question{'' if t.count == 1 else 's'}"
            lines.append(f"{i}. {t.name} — {asked} from {people}")
            lines += [f"   “{q}”" for q in t.examples]
            if t.closest:
                lines.append("   closest documents: " + "; ".join(_doc(d) for d in t.closest))
    if report.outdated:
        lines += ["", "Answers marked outdated"]
        for o in report.outdated:
            cited = "; ".join(_doc(d) for d in o.cited) or "no document cited"
            lines.append(f"- “{o.question}” ({o.at[:10]}) cited {cited}")
    if report.stale:
        lines += ["", "Cited often, not updated for a year"]
        for s in report.stale:
            lines.append(
                f"- {_doc(s.doc)}: cited {s.citations} times, updated {s.doc.updated[:10]}"
            )
    if report.conflicts:
        lines += ["", "Documents that disagree"]
        for c in report.conflicts:
            lines.append(
                f"- {_doc(c.older)} (updated {c.older.updated[:10]}) vs {_doc(c.newer)} "
                f"(updated {c.newer.updated[:10]}): {c.count} answers noted it"
            )
    if report.is_empty():
        lines += ["", "Nothing to report: every question found an answer."]
    return lines


def _doc(d: DocRef) -> str:
    return f"{d.title} ({d.doc_id})" if d.title and d.title != d.doc_id else d.doc_id
