"""The reasoner that needs no network: scores instead of judgement, quotes instead of prose.

- grade: IDF-weighted coverage of the question's key terms, blended with the dense cosine the
  index returned (cross-lingual passages are graded on the multilingual cosine alone);
- rewrite: expansion with the rarest terms of the best passages (RM3-style); broaden: drop the
  terms that matched nothing;
- answer: the units (sentences, list items, table rows) that state what was asked, whole and
  cited (``agent/extract``: shared key terms, meaning, the kind of answer, the value asked about,
  the asker's audience, the extreme asked for); a note when two sources disagree on the same thing
  in the same scope; a question whose rare words the corpus never uses gets none;
- check: a draft of our own was judged unit by unit; one from elsewhere (an LLM's, on fallback)
  is checked for key terms, meaning and the kind of answer asked for.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence, Set
from dataclasses import replace
from typing import Literal

import numpy as np

from agent.answer_model import AnswerModel
from agent.answers import Opinion
from agent.calibration import Calibration as C
from agent.conclusions import conclude, latest_order
from agent.drafts import Drafting
from agent.extract import (
    Extract,
    Scored,
    across,
    closeness,
    fits_value,
    heading,
    named_floor,
    newest_first,
    score_units,
    similar,
)
from agent.followups import customer_in, only_courtesies
from agent.messages import audience_name, say
from agent.passages import Passage
from agent.phrasing import alternation, pattern, rules
from agent.questions import (
    Asks,
    asked_years,
    asks,
    latin_names,
    matches_kind,
    message_sentences,
    names_all,
    required_terms,
)
from agent.reasoning import (
    Check,
    Draft,
    Grade,
    GradeLabel,
    Route,
    Sentence,
    ToolCall,
    ToolShelf,
)
from agent.scope import applies, unit_audience
from agent.terms import SITUATED, TermStats, coverage, is_question_word
from agent.turns import Message
from agent.units import Unit
from agent.values import quantities
from ingest.audience import scope_statement
from ingest.embed import USE_LANGUAGES, Embedder
from ingest.languages import CJK, detect_lang, tokenize
from ingest.stopwords import STOPWORDS

# The phrasings a message is read by (a greeting, a ticket, where a message asks a second question,
# a comparison, a follow-up's "it", a question about whole documents) are lists and rules of
# agent/patterns/.
_NAME = re.compile(r"(?<=[\s(“\"'])[A-ZÀ-ÖØ-Þ][\w’'-]+")


def _documents_named(question: str, passages: Sequence[Passage]) -> list[str]:
    """The documents among ``passages`` whose titles the question names ("the expense policies"
    names both "Expense Policy for Employees" and "Expense Policy for Contractors"). A title
    whose words the question shares are all shared by another title that shares more is not
    named: "the expense policy for contractors" names that one, not the employees' too."""
    asked = set(tokenize(question))
    shared: dict[str, set[str]] = {}
    for p in passages:
        title = set(tokenize(p.title))
        if title and len(title & asked) >= min(2, len(title)):
            shared.setdefault(p.doc_id, set()).update(title & asked)
    return [d for d, words in shared.items() if not any(words < other for other in shared.values())]


def _what_it_covers(units: list[Scored], passages: Sequence[Passage]) -> Scored | None:
    """The sentence that says what a document is for: its scope statement, else its first."""

    def place(s: Scored) -> tuple[bool, int, int]:
        chunk = passages[s.unit.passage].chunk_id.rpartition("#")[2]
        return (
            not scope_statement(s.unit.text),
            int(chunk) if chunk.isdigit() else 1 << 30,
            s.unit.order,
        )

    return min(units, key=place, default=None)


def _names(text: str) -> list[str]:
    """Capitalised words that are not the first of their sentence: places, plans, products."""
    found: list[str] = []
    for sentence in message_sentences(text):
        found += _NAME.findall(sentence)
    return list(dict.fromkeys(found))


def _reply(piece: str, *, whole: bool) -> re.Match[str] | None:
    """A reply to a question: the whole piece ("Yes."), or a reply and its full stop opening
    it ("No. Are you …"); "Yes I might" is a sentence of its own."""
    end = r"[.!。！]?\s*$" if whole else r"[.!]\s+"
    return re.match(rf"\s*{alternation('reply')}(?!\w){end}", piece, re.IGNORECASE)


def _replies_apart(pieces: list[str]) -> list[str]:
    """A reply as a piece of its own: "No." opening a sentence is read as the abbreviation and
    joined to the next question ("No. Are you the child of a veteran?")."""
    out: list[str] = []
    for piece in pieces:
        found = _reply(piece, whole=False)
        rest = piece[found.end() :].strip() if found else ""
        out += [piece[: found.end()].strip(), rest] if found and rest[:1].isupper() else [piece]
    return out


def _asked_and_answered(question: str) -> list[str]:
    """The questions a message asks and answers itself ("Are you a business? Yes."), without
    their question mark: the asker's case. They are searched like any part (a rule's follow-up
    question has the rule's words), but when nothing answers one, the asker is not told so."""
    pieces = _replies_apart(message_sentences(question))
    return [
        p.strip().rstrip("?？").strip()
        for p, after in zip(pieces, pieces[1:], strict=False)
        if p.rstrip().endswith(("?", "？")) and _reply(after, whole=True) is not None
    ]


def _one_of(planned: str, replied: Sequence[str]) -> bool:
    """Whether a planned part is one of the questions the asker answered in the message (its
    question after any lead; either may be the other's start: a long part is cut to a query)."""
    asked = planned.rpartition(SITUATED)[2].rstrip(" ?？")
    return bool(asked) and any(asked.startswith(r) or r.startswith(asked) for r in replied)


def _with_record_values(part: str, passages: Sequence[Passage]) -> str:
    """A part with the record's own value for each field it names: "what uptime does the plan
    promise?" over a customer on the Business plan asks it of the Business row
    ("… (business)?"), as a name the asker's situation set up would be."""
    asked = set(tokenize(part))
    values: list[str] = []
    for p in passages:
        if p.tool is None:
            continue
        order = latest_order(p.tool.record)
        for row in [p.tool.record, *([order] if order else [])]:
            for field, value in row.items():
                named = set(tokenize(field.replace("_", " ")))
                if isinstance(value, str) and named and named <= asked and value not in values:
                    values.append(value)
    if not values:
        return part
    found = _CARRIED.search(part)
    carried = found.group(1).split(", ") if found else []
    head = part[: found.start()] if found else part.rstrip(" ?？")
    return _with_carried(head, carried + [v for v in values if v not in carried])


def _with_carried(part: str, carried: Sequence[str]) -> str:
    """A part with what the question set up around it: "the daily per diem (Shanghai)?"."""
    return f"{part} ({', '.join(carried)})?" if carried else f"{part}?"


_CARRIED = re.compile(r" \(([^()]*)\)\?$")


def _situated(part: str, passages: Sequence[Passage]) -> str:
    """A part without the names carried from the asker's situation that no passage found
    states ("… my fleet (East, England, Europe)?" over a rule for every ship): such a name tells
    none of them apart, and asked of them it only weighs against the one that answers. A name
    a passage states ("Shanghai" in the per diem table) stays, as does an amount."""
    found = _CARRIED.search(part)
    lang = detect_lang(part)
    if not found or any(p.lang != lang for p in passages):
        return part  # across languages a name is written otherwise ("Shanghai", "上海")
    text = " ".join(f"{p.title} {p.text}" for p in passages)
    carried = found.group(1).split(", ")
    kept = [
        c
        for c in carried
        if any(ch.isdigit() for ch in c)  # an amount
        or re.search(rf"(?<!\w){re.escape(c)}(?!\w)", text, re.IGNORECASE)  # "Ann", not "annual"
    ]
    return part if kept == carried else _with_carried(part[: found.start()], kept)


def _amount(text: str) -> str:
    """The amount of money a question is about ("12,000 EUR"), as written; '' when it names
    none. (A trip's length is context, not the value every part is about.)"""
    found = [q for q in quantities(text) if q.money]
    return text[found[0].start : found[0].end].strip() if found else ""


def _parts(question: str) -> list[str]:
    """One question split into the questions it asks: by the first rule of the list
    ``comparison`` that takes it apart ("compare A with B", "how do X differ between A and B"),
    else at the words of ``part_break``."""
    for rule in rules("comparison"):
        parts = rule.apply(question.strip())
        if parts is not None:
            return parts
    return re.split(rf"\s*{alternation('part_break')}\s*", question, flags=re.I)


def similarity(p: Passage, q_lang: str) -> float:
    cosine = p.scores.cosine
    if p.lang != q_lang:
        return across(cosine.get("use", cosine.get("cohere", 0.0)), q_lang, p.lang)
    return max(cosine.values(), default=0.0)


class OfflineReasoner:
    streams = False  # its answer comes at once: nothing to stream

    def __init__(
        self,
        stats: Callable[[], TermStats],
        embedders: Sequence[Embedder] = (),
        model: AnswerModel | None = None,
    ):
        self._stats = stats  # lazy: built from the index on first use
        self._model = model  # the answer model's second opinion (``agent.answers.Opinion``)
        self._embedders = {
            e.name: e for e in embedders
        }  # to compare sentences with the question by meaning
        # texts and single words as vectors, per embedder, kept across rounds and turns
        self._vectors: dict[tuple[str, str], np.ndarray] = {}

    def _embedded(self, embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
        """Each text's vector, embedded once per process: a turn scores the same units in every
        round and part of the question, and turns on one subject find the same passages
        (measured: 56% of a turn's time on an AVX2 CPU went to embedding units again)."""
        # read into a dict of this call's own: another turn may clear the cache meanwhile
        found = {t: v for t in texts if (v := self._vectors.get((embedder.name, t))) is not None}
        new = [t for t in dict.fromkeys(texts) if t not in found]
        if new:
            if len(self._vectors) > 50_000:
                self._vectors.clear()
            for t, v in zip(new, embedder.embed(new, kind="query"), strict=True):
                found[t] = self._vectors[embedder.name, t] = v
        return [found[t] for t in texts]

    def _words(self, words: Sequence[str]) -> list[np.ndarray]:
        """Word vectors from the English embedder."""
        return self._embedded(self._embedders["minilm"], words)

    @staticmethod
    def _own_words(text: str, asked: Sequence[str]) -> list[str]:
        """The content words of a unit (a question word it states counts too: "birth" says
        "born"), for comparing one by one with the question's words no document uses."""
        skip = {w.lower() for w in asked} | STOPWORDS["en"]
        found = dict.fromkeys(w.lower() for w in re.findall(r"[^\W\d_]{2,}", text))
        return [w for w in found if w not in skip][:24]

    def _credit_across(self, extract: Extract, passages: Sequence[Passage]) -> None:
        """A unit in another language than the question states none of its words as written, so
        its score was its meaning alone. The multilingual embedder puts a word near its
        translation ("отпуск", "vacation"), so the best such units get the key-term share of the
        question's words they say that way, as a unit in the question's language gets for the
        words it states; and each word weighs what its translation weighs in the documents (a
        word none of them says, as a name they do not name, weighs as a word no document uses).
        Read on XQuAD's train articles, the two together rank the sentence that answers a Russian
        or Chinese question first more often than either alone (docs/quality.md, "A question
        over documents in another language: its words")."""
        embedder = self._embedders.get("use")
        if embedder is None or extract.lang not in USE_LANGUAGES:
            return  # a language the embedder was not trained on: its words' vectors say little
        head = [
            s
            for s in extract.ranked[: C.rescored]
            if s.cross and passages[s.unit.passage].lang in USE_LANGUAGES
        ]
        asked = _surface_words(extract.question, extract.lang, extract.asked)
        if not head or not asked:
            return
        own_words, context_words, lang_of = [], [], {}
        for s in head:
            p = passages[s.unit.passage]
            own_words.append(_content_words(f"{s.unit.label} {s.unit.text}", p.lang))
            context_words.append(own_words[-1] + _content_words(p.breadcrumbs, p.lang))
            lang_of.update(dict.fromkeys(context_words[-1], p.lang))
        theirs = list(lang_of)
        if not theirs:
            return
        mine = list(dict.fromkeys(w for ws in asked.values() for w in ws))
        sims = (
            np.stack(self._embedded(embedder, mine)) @ np.stack(self._embedded(embedder, theirs)).T
        )
        row, column = {w: i for i, w in enumerate(mine)}, {w: j for j, w in enumerate(theirs)}
        written = frozenset().union(*(s.context for s in head))  # a figure, a name in Latin
        weights, unseen = {}, 0.0
        for t, ws in asked.items():
            near = sims[[row[w] for w in ws]].max(axis=0)
            best = int(near.argmax())
            found = tokenize(theirs[best], lang_of[theirs[best]])
            if t in written or near[best] < C.across_word_at or not found:
                # as written, or by no document: what the question's own word weighs
                weights[t] = extract.asked[t]
                unseen += 0.0 if t in written else weights[t]
            else:  # said in the documents' words: what they make of it
                weights[t] = self.stats.idf(found[0])
        total = sum(weights.values())
        extract.unseen_across = unseen / total

        def said(words: list[str], tokens: Set[str]) -> float:
            near = sims[:, [column[w] for w in words]].max(axis=1) if words else None
            return sum(
                w
                for t, w in weights.items()
                if t in tokens
                or (near is not None and near[[row[x] for x in asked[t]]].max() >= C.across_word_at)
            )

        m, own = C.meaning_share, C.own_words_share
        latin = latin_names(extract.question, extract.lang)
        for s, text, context in zip(head, own_words, context_words, strict=True):
            lexical = (own * said(text, s.tokens) + (1 - own) * said(context, s.context)) / total
            # scored by meaning alone so far (or as naming what the question names in Latin
            # letters): now as a unit in the question's language is
            floor = named_floor(latin, s.unit, s.meaning)
            s.worded = max(m * s.meaning + (1 - m) * lexical, floor) - max(s.meaning, floor)
            s.score += s.worded
            s.lexical = lexical
        extract.ranked.sort(key=lambda s: -s.score)

    def _credit_synonyms(self, extract: Extract) -> None:
        """A word no document uses ("grandmother", "dies") is said by a unit that uses a word of the
        same meaning ("grandparent", "death"): the best units get the weight of the words they say
        that way, so the row for a grandparent's death beats the one for a parent's. So is a key
        term the subject of a labelled item or a row says in other words ("Rail: 2nd class." for
        a train ride); only the subject, since a sentence that merely mentions a word of the same
        kind ("Monday to Thursday" for Wednesday) speaks of a neighbour."""
        if extract.lang != "en" or "minilm" not in self._embedders:
            return
        top = C.credited
        total = sum(extract.weights.values())
        asked = [w.lower() for w in extract.unseen_words]
        asked_v = np.stack(self._words(asked)) if asked else None
        for s in extract.ranked[:top]:
            if s.cross:
                continue
            if asked_v is not None:
                own = self._own_words(s.unit.text, extract.unseen_words)
                if own:
                    sims = asked_v @ np.stack(self._words(own)).T
                    said = float(np.mean(sims.max(axis=1) >= C.synonym_at))
                    s.score += C.synonym_credit * extract.unseen * said
            subject = _subject(s)
            absent = {t for t in extract.weights if t not in s.context}
            if subject and absent and total:
                unstated = self._unstated(extract, subject, s.context)
                reworded = sum(extract.weights[t] for t in absent if t not in unstated)
                s.score += C.reworded_credit * reworded / total
        extract.ranked[:top] = sorted(extract.ranked[:top], key=lambda s: -s.score)

    def _embedder(self, lang: str) -> Embedder | None:
        if lang == "en" and "minilm" in self._embedders:
            return self._embedders["minilm"]
        return self._embedders.get("use") or next(iter(self._embedders.values()), None)

    @property
    def stats(self) -> TermStats:
        return self._stats()

    async def route(self, text: str, history: Sequence[Message]) -> Route:
        clean = text.strip()
        if only_courtesies(clean) or pattern("smalltalk").match(clean):
            return Route("smalltalk", clean)
        if pattern("ticket").search(clean):
            title = pattern("ticket").sub("", clean, count=1).strip(" :.-") or clean
            return Route("ticket", clean, ticket_title=title[:120])
        # follow-ups arrive already read against the conversation (``agent/followups``)
        speller = self.stats.speller
        question = speller.correct(clean) if speller is not None else clean
        customer = customer_in(question)
        if customer:
            return Route("crm", question, customer_id=customer)
        return Route("question", question)

    async def pick_tools(
        self, question: str, history: Sequence[Message], offered: ToolShelf
    ) -> list[ToolCall]:
        """None: the offline path reaches the tools through routing (a customer number, "show me
        …", "file a ticket") and the loop's own search."""
        return []

    async def plan(self, question: str) -> list[str]:
        """The parts of a compound question, each able to stand alone: statements around the
        questions ("I'm going to Shanghai for a week.") are context, not parts; "compare A with
        B" and "how do X differ between A and B" become one part for each; a part that lost the
        names the question set up ("the daily per diem") gets them back ("… (Shanghai)")."""
        pieces = _replies_apart(message_sentences(question))
        asked = [p for p in pieces if p.rstrip().endswith(("?", "？"))]
        # a message that asks nothing with "?" ("I mean the continent. Not the country.") is
        # itself the question, with no statements around it to lead a part
        context = " ".join(p for p in pieces if p not in asked) if asked else ""
        asked = asked or [question]
        parts = [q.strip(" ,.;?？") for piece in asked for q in _parts(piece)]
        parts = [q for q in parts if q]
        if len(parts) <= 1 and not (context and parts):
            return [question]
        names = _names(f"{context} {parts[0]}") if context else _names(parts[0])
        amount = _amount(f"{context} {parts[0]}")
        out = []
        for k, q in enumerate(parts):
            if len(tokenize(q)) < 3 or pattern("anaphora").search(q):
                # "What should I do?", "by when must I use them?" need what they refer to
                lead = context or (parts[0] if k else "")
                out.append(f"{lead}{SITUATED}{q}?" if lead else f"{q}?")
                continue
            lacking = [n for n in names if n.lower() not in f"{q} {amount}".lower()]
            lacking = lacking if not _names(q) else []
            # "a video for 12,000 EUR … who approves, and how many quotes?": each part is about
            # that amount, so each chooses the row whose range holds it
            if amount and not any(x.money for x in quantities(q)):
                lacking.append(amount)
            out.append(_with_carried(q, lacking))
        return out

    async def grade(self, question: str, passages: Sequence[Passage]) -> list[Grade]:
        """A passage is as good as its best evidence: the question's key terms it covers (words no
        document uses left out), how close its whole text is in meaning, and how close its
        closest sentence is (a fact is often one sentence of a long chunk)."""
        q_lang = detect_lang(question)
        stats = self.stats
        weights = stats.key_terms(question, q_lang, C.situation_share)
        never = set(stats.unseen(weights))
        seen = {t: w for t, w in weights.items() if t not in never}
        grades = []
        latin = latin_names(question, q_lang)
        # "compare the expense policies": the documents it names are what it asks about
        named = (
            set(_documents_named(question, passages))
            if pattern("overview").search(question)
            else set()
        )
        for p in passages:
            if p.doc_id in named:
                grades.append(Grade("relevant", C.relevant_at, "a document the question names"))
                named.discard(p.doc_id)  # its best passage; the others are graded as usual
                continue
            cross = p.lang != q_lang
            sim = similarity(p, q_lang)
            sim_n = closeness(sim, C.passage_unrelated_at, C.passage_span)
            sentence = max(p.scores.sentence_cosines.get("use") or [0.0])
            sentence = across(sentence, q_lang, p.lang)
            sentence_n = closeness(sentence, C.sentence_unrelated_at, C.sentence_span)
            if cross or not seen:
                score = max(sim_n, sentence_n)
                if cross and latin:  # the names it writes in Latin letters, found as written
                    score = max(score, C.grade_named * names_all(latin, p.text))
            else:
                cov = coverage(seen, set(tokenize(p.text, p.lang)))
                score = (
                    C.grade_terms * cov
                    + C.grade_passage_meaning * sim_n
                    + C.grade_sentence_meaning * sentence_n
                )
            label: GradeLabel = (
                "relevant"
                if score >= C.relevant_at
                else "partial"
                if score >= C.partial_at
                else "off_topic"
            )
            grades.append(
                Grade(label, round(score, 3), f"score {score:.2f} (similarity {sim:.2f})")
            )
        return grades

    async def rewrite(
        self,
        question: str,
        passages: Sequence[Passage],
        mode: Literal["rewrite", "broaden"],
        tried: Sequence[str],
    ) -> str:
        stats = self.stats
        q_terms = set(tokenize(question))
        if mode == "broaden":
            keep = [
                w
                for w in re.findall(r"\w[\w.-]*", question)
                if not set(tokenize(w)) & set(stats.unseen(tokenize(w)))
            ]
            broadened = " ".join(keep)
            if broadened and broadened not in tried:
                return broadened
        # RM3-style, from passages that were at least partly on topic: the words they use most
        # (count × rarity) that the question lacks. Off-topic passages would only add noise, so
        # without any, the question's own key terms are searched on their own.
        good = [p for p in passages[:3] if p.scores.grade >= C.partial_at]
        if not good:
            keys = [
                w
                for w in re.findall(r"[^\W_][\w.-]*", question)
                if not all(is_question_word(t) for t in tokenize(w))
            ]
            candidate = " ".join(keys)
            return candidate if candidate and candidate not in tried else question
        counts: dict[str, float] = {}
        seen_in: dict[str, int] = {}
        surface: dict[str, str] = {}
        for p in good:
            words = [w for w in re.findall(r"[^\W\d_]{3,}", p.body)]
            terms = [(t, w) for w in words for t in tokenize(w, p.lang) if t not in q_terms]
            for t, w in terms:
                counts[t] = counts.get(t, 0.0) + stats.idf(t)
                surface.setdefault(t, w.lower())
            for t in {t for t, _ in terms}:
                seen_in[t] = seen_in.get(t, 0) + 1
        ranked = sorted(
            (t for t in counts if seen_in[t] >= min(2, len(good)) or counts[t] >= 2 * stats.idf(t)),
            key=counts.__getitem__,
            reverse=True,
        )
        extra = [surface[t] for t in ranked[:3]]
        candidate = f"{question} {' '.join(extra)}".strip()
        return candidate if candidate not in tried else f"{question} {' '.join(extra[:1])}"

    async def answer(
        self,
        question: str,
        subquestions: Sequence[str],
        passages: Sequence[Passage],
        facts: Sequence[str],
        *,
        asker: frozenset[str] = frozenset(),
        said: str = "",
        draft: Drafting | None = None,
        topic: str = "",
    ) -> Draft:
        """For each sub-question, the units that answer it (``agent/extract``), whole and cited;
        a note when two sources give different values for the same thing in the same scope; with
        a tool's result (the CRM record), its relevant lines and what follows from them and the
        rules found (``agent/conclusions``). A follow-up (``said``: the answer it follows) is
        answered by what that answer did not say, when something else answers it. A unit of the
        conversation's document (``topic``) is weighed up: a follow-up is most often answered
        where the conversation began."""
        stats = self.stats
        chosen: list[Sentence] = []
        missing: list[str] = []
        quoted: set[str] = set()
        mixed = len(asker) > 1  # a channel of several audiences: each rule, labelled
        lang = detect_lang(question)

        def add(sentence: Sentence) -> None:
            if sentence.text not in quoted:
                quoted.add(sentence.text)
                chosen.append(sentence)

        conclusions = conclude(question, passages, lang)
        # the rule's follow-up questions the asker answered in the message, and the places in
        # the plan (the message's order) of those that found their rule
        replied = _asked_and_answered(question)
        follow_ups_found: list[int] = []
        # The record's lines: the answer itself when nothing follows from them ("which plan is
        # customer 4471 on?"), else the evidence, after what follows and the rule it follows from
        record = [
            Sentence(line, [i], score=1.0)
            for i, p in enumerate(passages)
            if p.tool
            for line in _tool_lines(p, question, bool(conclusions))
        ]
        for sentence in [] if conclusions else record:
            add(sentence)
        # when the record is the answer, a document joins it only with a word asked that the
        # record lacks ("plan" is the record's field; "planned" in a release note adds nothing)
        record_terms = (
            set(tokenize(" ".join(s.text for s in record))) if record and not conclusions else None
        )
        # the passages whose rule a conclusion applied to the record: their other sentences are
        # that rule's other cases ("receives a full refund" beside "not eligible")
        applied = {i for c in conclusions for i, _ in c.quotes}
        for c in conclusions:
            add(Sentence(c.text, c.sources, note=True, score=1.0))
            for i, text in c.quotes:
                add(Sentence(text, [i], score=1.0))
        for k, planned in enumerate(subquestions):
            sub = _situated(planned, passages)
            # the record answers: what it says of the thing asked narrows
            if record_terms is not None:
                sub = _with_record_values(sub, passages)
            wants = asks(sub)
            extract = score_units(
                sub, wants, passages, stats, asker, self._embed_for(wants.lang), topic
            )
            self._credit_synonyms(extract)
            self._credit_across(extract, passages)
            if said:
                extract = self._beyond(extract, said, wants)
            extract = self._thing_first(extract, wants)
            overview = _documents_named(sub, passages) if pattern("overview").search(sub) else []
            if overview:  # "compare the two expense policies": what each of them is for
                for doc_id in overview:
                    best = _what_it_covers(
                        [s for s in extract.ranked if passages[s.unit.passage].doc_id == doc_id],
                        passages,
                    )
                    if best is not None:
                        add(
                            Sentence(
                                best.unit.text, [best.unit.passage], score=round(best.score, 3)
                            )
                        )
                continue
            opinion = self._opinion(sub, wants.lang, passages, stats)
            if not self._answers(extract, wants):
                # the model answers what the rules refused, but not with a unit about another
                # case than the one the question's own part names (another release or year)
                own = sub.rpartition(SITUATED)[2]
                named = required_terms(own, wants.lang)[0] | asked_years(own)
                other_case = {s.unit.text for s in extract.ranked if s.missing & named}
                rescued = [
                    r
                    for r in (opinion.rescue(said) if opinion is not None else [])
                    if r.text not in other_case
                ]
                for sentence in rescued:
                    add(sentence)
                if not rescued and not conclusions and not _one_of(planned, replied):
                    missing.append(planned)
                continue
            if opinion is not None:
                extract = _model_first(extract, opinion)
            labelled = self._per_audience(sub, wants, passages, asker, lang) if mixed else None
            quotes = labelled or self._quotes(extract, wants, passages, asker)
            if opinion is not None and opinion.vetoes(quotes):
                quotes = opinion.rescue(said)  # the model's own answer, when it is sure of one
                if not quotes:
                    if not conclusions and not _one_of(planned, replied):
                        missing.append(planned)
                    continue
            if quoted and all(q.text in quoted for q in quotes if not q.note):
                # a later part would repeat what is quoted ("the hotel cap … and the daily per
                # diem"): the best unit not quoted yet, when it answers that part
                fresh = [x for x in extract.ranked if not any(x.unit.text in q for q in quoted)]
                alternative = replace(extract, ranked=fresh)
                if fresh and self._answers(alternative, wants):
                    quotes = self._quotes(alternative, wants, passages, asker)
            for sentence in quotes:
                if applied & set(sentence.sources):
                    continue
                if record_terms is not None and not _adds_to(
                    record_terms, sentence.text, extract.weights
                ):
                    continue
                add(sentence)
            if quotes and _one_of(planned, replied):
                follow_ups_found.append(k)
        for sentence in record if conclusions else []:
            add(sentence)
        # a follow-up question the asker answered is a condition of the question before it: the
        # rule it found answers that question ("Can I upload it? Is it under 10MB? Yes.")
        last = max(follow_ups_found, default=-1)
        missing = [m for m in missing if subquestions.index(m) > last]
        return Draft(chosen, missing)

    def _opinion(
        self, question: str, lang: str, passages: Sequence[Passage], stats: TermStats
    ) -> Opinion | None:
        if self._model is None or not any(not p.tool for p in passages):
            return None
        return Opinion(question, lang, passages, self._model, stats)

    def _beyond(self, extract: Extract, said: str, wants: Asks) -> Extract:
        """ "And after five years?" after "25 days a year": the units the previous answer quoted,
        and those saying the same from another source, give way to the best other unit that
        answers the follow-up, unless they say more of the follow-up's own words (after the dash
        of a merged question) than it does and state the value those words name."""
        quoted = [s for s in extract.ranked if s.unit.text in said]
        before = [s for s in extract.ranked if any(s is q or similar(s, q) for q in quoted)]
        if not before or extract.ranked[0] not in before:
            return extract
        fresh = [s for s in extract.ranked if s not in before]
        alternative = replace(extract, ranked=fresh)
        if not fresh or not self._answers(alternative, wants):
            return extract
        own = extract.question.rsplit(SITUATED, 1)[-1]
        terms = set(tokenize(own, extract.lang)) & set(extract.weights)

        def says(s: Scored) -> float:
            return sum(extract.weights[t] for t in terms if t in s.context)

        best, other, value = extract.ranked[0], fresh[0], asks(own)
        if value.quantity is not None and not fits_value(value, best.unit, extract.lang):
            return alternative
        return extract if says(best) > says(other) else alternative

    def _quotes(
        self, extract: Extract, wants: Asks, passages: Sequence[Passage], asker: frozenset[str]
    ) -> list[Sentence]:
        """The chosen units as the answer's sentences, each led by the heading that holds part of
        the answer, and the conflict note if two sources disagree."""
        picked, note = newest_first(extract, wants, passages, asker, self._same_thing)
        out, led = [], set()
        for s in picked:
            lead = heading(s, wants, extract, passages[s.unit.passage])
            said = self._cells_asked(extract, wants, s.unit)
            text = f"{lead}: {said}" if lead and lead not in led else said
            led.add(lead)
            out.append(Sentence(text, [s.unit.passage], score=round(s.score, 3)))
        return out + ([note] if note is not None else [])

    def _cells_asked(self, extract: Extract, wants: Asks, unit: Unit) -> str:
        """A table row as the question asks it: the row's name (its first cell) and the cells
        that state something asked that the name does not ("the Business plan's price" is the
        price cell, not the plan's seats, uptime and features), with the cell that holds the
        kind of answer asked for when none of those does ("when did it change, and what?": the
        date beside the change); the whole row when every cell, or none, is asked for."""
        cells = list(unit.cells.items())
        # a name and one cell are the whole row already; "which level pays the most?": the
        # row's other cells say why it was chosen
        if len(cells) < 3 or wants.extreme:
            return unit.text
        asked = set(extract.asked)

        def states(header: str, value: str) -> set[str]:
            return asked - set(self._unstated(extract, f"{header}: {value}"))

        named = states(*cells[0])
        kept = [(h, v) for h, v in cells[1:] if states(h, v) - named]
        if kept and not any(matches_kind(wants.kind, v) for _, v in kept):
            kept = [(h, v) for h, v in cells[1:] if (h, v) in kept or matches_kind(wants.kind, v)]
        if not kept or len(kept) == len(cells) - 1:
            return unit.text
        return " · ".join(f"{h}: {v}" for h, v in [cells[0], *kept])

    def _per_audience(
        self,
        sub: str,
        wants: Asks,
        passages: Sequence[Passage],
        asker: frozenset[str],
        lang: str,
    ) -> list[Sentence] | None:
        """In a channel of employees and contractors: when the rule differs by audience, the rule
        for each, labelled ("For contractors: …"); None when one rule serves everyone."""
        parts: dict[str, list[Sentence]] = {}
        firsts: dict[str, Scored] = {}
        for audience in sorted(asker):
            one = frozenset({audience})
            extract = score_units(
                sub, wants, passages, self.stats, one, self._embed_for(wants.lang)
            )
            self._credit_synonyms(extract)
            if not extract.ranked or not self._answers(extract, wants):
                return None
            best = extract.ranked[0]
            if not applies(
                unit_audience(best.unit.text, passages[best.unit.passage].audience), one
            ):
                return None
            firsts[audience] = best
            parts[audience] = self._quotes(extract, wants, passages, one)[:1]
        texts = {f.unit.text for f in firsts.values()}
        if len(texts) < 2:
            return None
        out = []
        for audience, quotes in parts.items():
            label = say(lang, "for_audience", audience=audience_name(lang, audience))
            out += [replace(s, text=f"{label} {s.text}") for s in quotes]
        return out

    def _same_thing(self, a: str, b: str, lang: str) -> bool:
        """Do two sentences of one language say the same thing (with other figures, perhaps)? Two
        rules on one subject are paraphrases; two on neighbouring subjects that share the words
        around a figure are not. Without an embedder nothing can tell: they count as the same."""
        embedder = self._embedder(lang)
        if embedder is None:
            return True
        va, vb = self._embedded(embedder, [a, b])
        return float(va @ vb) >= C.same_thing_at.get(embedder.name, C.same_thing_otherwise)

    def _embed_for(self, lang: str) -> Callable[[str, list[str]], list[float]] | None:
        if not self._embedders:
            return None
        return lambda question, texts: self._sentence_sims(lang, question, texts)

    def _sentence_sims(self, lang: str, question: str, texts: Sequence[str]) -> list[float]:
        embedder = self._embedder(lang)
        if embedder is None or not texts:
            return [0.0] * len(texts)
        question_v, *vectors = self._embedded(embedder, [question, *texts])
        return [float(v @ question_v) for v in vectors]

    def _answers(self, extract: Extract, wants: Asks) -> bool:
        """Does the best unit state what was asked? It must name the identifiers the question
        names, hold the kind of answer asked for, and score high enough once the question's words that
        no document uses, and that it does not say otherwise, are counted against it ("pet
        insurance")."""
        if not extract.ranked:
            return False
        best = extract.ranked[0]
        if best.cross and extract.unseen_across:
            # a word of the question no document says (a name they do not have, or one the
            # embedder cannot translate): whether to answer is decided by meaning alone, as the
            # units ranked by it were; the words still chose which unit leads
            best = max(extract.ranked, key=lambda s: s.score - s.worded)
            if best.cross:
                by_meaning = best.score - best.worded
                return not best.missing and best.kind_ok and by_meaning >= C.answer_at
        if best.missing or not best.kind_ok:
            return False
        if best.cross:  # the documents say every word of the question: scored as in its language
            return best.score >= C.answer_at
        unsaid = self._unseen_unsaid(extract, best)
        if unsaid >= C.unsaid_at:
            return False  # most of what is asked is a word no document uses, and not said here
        if self._misses_the_point(extract, best):
            return False
        if self._lacks_the_thing(extract, wants, best) or self._narrowed_away(extract, best):
            return False
        if self._says_too_little(extract, best):
            return False
        return best.score - C.unseen_weight * unsaid * (1 - best.meaning) >= C.answer_at

    def _misses_the_point(self, extract: Extract, best: Scored) -> bool:
        """The question's rarest word, half or more of its weight, is nowhere in the best unit,
        its label or its headings, and the unit is not close in meaning either: it answers a
        neighbouring question ("a four-day work week" answered with part-time pro rata)."""
        weights = extract.weights
        total = sum(weights.values())
        if not total or best.meaning >= C.point_meaning_at:
            return False
        top = max(weights, key=weights.__getitem__)
        return weights[top] >= total / 2 and top not in best.context

    def _says_too_little(self, extract: Extract, best: Scored) -> bool:
        """The unit states under half of the question's weight, as written or in other words,
        and is not close to it in meaning either: it shares a word or two with the question
        ("above", "approve") and answers another one (an expense limit for a salary offer)."""
        total = sum(extract.asked.values())
        if not total or best.meaning >= C.little_meaning_at:
            return False
        text = f"{best.unit.label}: {best.unit.text}"
        stated = 1 - sum(self._unstated(extract, text, best.context).values()) / total
        return stated < C.little_stated_at

    def _thing_first(self, extract: Extract, wants: Asks) -> Extract:
        """When the best unit does not say the thing asked for, the next one near it that does
        leads: "How many cylinders does the Energiprojekt AB engine have?" is best matched by the
        sentence naming the company, and answered by the one after it ("It is a single-step,
        5-cylinder engine")."""
        ranked = extract.ranked
        if len(ranked) < 2 or ranked[0].score <= 0:
            return extract
        first = ranked[0]
        if not self._lacks_the_thing(extract, wants, first):
            return extract
        for s in ranked[1:]:
            if s.score < C.near_best_at * first.score:
                return extract
            if s.kind_ok and not s.missing and not self._lacks_the_thing(extract, wants, s):
                return _led_by(extract, s)
        return extract

    def _lacks_the_thing(self, extract: Extract, wants: Asks, best: Scored) -> bool:
        """The thing asked for ("bonus" in "What bonus does someone rated Outstanding get?") is
        said neither by the unit nor by its label or headings, as written or in other words: the
        unit is about the question's other words (the rating), not what it asks."""
        terms = [t for t in tokenize(wants.thing, extract.lang) if t in extract.asked]
        if not terms:
            return False
        text = f"{best.unit.label}: {best.unit.text}"
        return bool(set(terms) & set(self._unstated(extract, text, best.context)))

    def _unstated(
        self, extract: Extract, text: str, toks: Set[str] | None = None
    ) -> dict[str, float]:
        """The question's key terms that ``text`` (or ``toks``, its terms with its headings')
        states neither as written (any inflection) nor by a word of the same meaning (English
        word vectors), with their weights."""
        toks = set(tokenize(text, extract.lang)) if toks is None else toks
        missing = {t: w for t, w in extract.asked.items() if t not in toks}
        if not missing or extract.lang != "en" or "minilm" not in self._embedders:
            return missing
        surface = {
            t: [w.lower() for w in ws]
            for t, ws in _surface_words(extract.question, extract.lang, missing).items()
        }
        own = self._own_words(text, [])
        if not own:
            return missing
        own_v = np.stack(self._words(own))
        out = {}
        for t, w in missing.items():
            words = surface[t] or [t]
            sims = np.stack(self._words(words)) @ own_v.T
            if float(sims.max()) < C.synonym_at:
                out[t] = w
        return out

    def _unseen_unsaid(self, extract: Extract, best: Scored) -> float:
        """The share of the question's weight in words no document uses that the best unit does
        not say otherwise either — not close in meaning to it ("payday" for "paid on the last
        working day" is said; "pet" in an answer about insurance is not)."""
        words = extract.unseen_words
        if not words or self._embedder(extract.lang) is None:
            return extract.unseen
        return extract.unseen * len(self._unsaid_words(extract, best)) / len(words)

    def _unsaid_words(self, extract: Extract, best: Scored) -> list[str]:
        """The question's words no document uses that ``best`` does not say in other words."""
        words = extract.unseen_words
        embedder = self._embedder(extract.lang)
        if not words or embedder is None:
            return list(words)
        context = f"{best.unit.label}: {best.unit.text}" if best.unit.label else best.unit.text
        said = embedder.embed([best.unit.text, context, *words], kind="query")
        # the unit's own words for it: "rollback" for "revert", "grandparent" for "grandmother",
        # "km" for "mileage" (single-word vectors are only trustworthy from the English embedder)
        english = extract.lang == "en" and "minilm" in self._embedders
        own = self._own_words(context, words) if english else []
        own_v = np.stack(self._words(own)) if own else None
        return [
            w
            for w, v in zip(words, said[2:], strict=True)
            if max(float(v @ said[0]), float(v @ said[1])) < C.unseen_said_at
            and (own_v is None or float(np.max(own_v @ v)) < C.synonym_at)
        ]

    def _narrowed_away(self, extract: Extract, best: Scored) -> bool:
        """A word no document uses narrows what the unit does say ("a tertiary on-call engineer":
        the unit gives the allowance of the on-call engineers it knows, primary and secondary),
        and the unit does not say it in other words: it answers a neighbouring question."""
        if extract.lang != "en":
            return False  # single-word meaning is only trustworthy from the English embedder
        own = self._own_words(f"{best.unit.label} {best.unit.text}", [])
        unsaid = {
            w.lower()
            for w in self._unsaid_words(extract, best)
            # a misspelling the speller left ("counceling") is said by the word it misspells
            if not difflib.get_close_matches(w.lower(), own, n=1, cutoff=C.misspelt_at)
        }
        if not unsaid:
            return False
        words = re.findall(r"[^\W_][\w'-]*", extract.question)
        for word, following in zip(words, words[1:], strict=False):
            if word.lower() not in unsaid or "'" in word:  # "haven't found": no narrowing
                continue
            narrowed = set(tokenize(following, extract.lang)) & set(extract.weights)
            if narrowed and narrowed <= best.context:
                return True
        return False

    async def check(
        self, question: str, draft: Draft, passages: Sequence[Passage], facts: Sequence[str] = ()
    ) -> Check:
        quotes = [s for s in draft.sentences if not s.note]
        if not quotes:
            return Check([True] * len(draft.sentences), False, "nothing in the passages answers it")
        supported = []
        for s in draft.sentences:
            body = " ".join(passages[i].text for i in s.sources if 0 <= i < len(passages))
            supported.append(bool(s.sources) and (s.note or _overlap(s.text, body) >= C.quoted_at))
        scores = [s.score for s in quotes if s.score is not None]
        if len(scores) == len(quotes):  # our own draft: answer() already judged each quote
            return Check(supported, True, f"unit_score {max(scores):.2f}")
        f = self.features(question, draft, passages)
        ok = self.supports(f) and matches_kind(
            asks(question).kind, " ".join(s.text for s in quotes)
        )
        return Check(supported, ok, ", ".join(f"{k} {v:.2f}" for k, v in f.items()))

    def features(
        self, question: str, draft: Draft, passages: Sequence[Passage]
    ) -> dict[str, float]:
        """What the support check weighs: shared key terms and closeness in meaning."""
        stats = self.stats
        q_lang = detect_lang(question)
        weights = stats.key_terms(question, q_lang, C.situation_share)
        quotes = [s for s in draft.sentences if not s.note]
        cited = [passages[i] for s in quotes for i in s.sources if 0 <= i < len(passages)]
        tokens = set(tokenize(" ".join(s.text for s in quotes))) | {
            t for p in cited for t in tokenize(p.breadcrumbs, p.lang)
        }
        meaning = max(self._sentence_sims(q_lang, question, [s.text for s in quotes]), default=0.0)
        if cited and all(p.lang == "en" for p in cited):  # read as if asked in English
            meaning = across(meaning, q_lang, "en")
        return {
            "coverage": coverage(weights, tokens),
            "meaning": meaning,
            "cross": float(all(p.lang != q_lang for p in cited)),
        }

    def supports(self, f: dict[str, float]) -> bool:
        if f["cross"]:
            return f["meaning"] >= C.cross_meaning_at
        return f["coverage"] + f["meaning"] >= C.support_at


def _subject(s: Scored) -> str:
    """What a labelled item or a table row is about: "Rail" in "Rail: 2nd class.", the first cell
    of a row; '' for a plain sentence."""
    if s.unit.cells:
        return next(iter(s.unit.cells.values()))
    return s.unit.item_label


def _overlap(sentence: str, source: str) -> float:
    words = set(re.findall(r"\w+", sentence.lower()))
    return len(words & set(re.findall(r"\w+", source.lower()))) / len(words) if words else 0.0


def _adds_to(said: Set[str], text: str, weights: dict[str, float]) -> bool:
    """Whether ``text`` states a term asked about (``weights``) that ``said`` does not."""
    return any(t in weights and t not in said for t in tokenize(text))


def _tool_lines(p: Passage, question: str, concluded: bool) -> list[str]:
    """The lines of a tool's result to quote: for a conclusion, the order it rests on (the
    latest); otherwise every line."""
    lines = [ln for ln in p.text.splitlines() if ln.strip()]
    if concluded:
        orders = [ln for ln in lines if ln.startswith("Order ")]
        return orders[-1:] or lines[:1]
    return lines


def _model_first(extract: Extract, opinion: Opinion) -> Extract:
    """The unit the answer model finds far likelier to answer than the rules' best leads, when
    the rules score it near the best: the rules weigh words and resemblance alike for every
    question, the model read the question and the unit together ("how many days do we get":
    the entitlement, not the carry-over cap, though both say days)."""
    ranked = extract.ranked
    if len(ranked) < 2 or ranked[0].score <= 0:
        return extract
    first, best = ranked[0], ranked[0].score
    near = [first] + [s for s in ranked[1 : C.model_reads] if s.score >= C.near_best_at * best]
    pick = opinion.prefers([s.unit for s in near]) if len(near) > 1 else 0
    return _led_by(extract, near[pick]) if pick else extract


def _led_by(extract: Extract, unit: Scored) -> Extract:
    """``extract`` with ``unit`` first, at the best's score, and the others in their order."""
    ranked = extract.ranked
    lead = replace(unit, score=ranked[0].score)
    return replace(extract, ranked=[lead, *(s for s in ranked if s is not unit)])


def _surface_words(question: str, lang: str, weights: dict[str, float]) -> dict[str, list[str]]:
    """Each key term's words as the question writes them ("отпуска" for "отпуск"); in Chinese
    and Japanese, written without spaces, the segmenter's word is the term."""
    if CJK.search(question):
        return {t: [t] for t in weights}
    # as cased: the embedder puts "Варшава" near Warsaw, "варшава" less so
    written = re.findall(r"[^\W_][\w'-]*", question)
    return {t: [w for w in written if t in tokenize(w, lang)] or [t] for t in weights}


def _content_words(text: str, lang: str) -> list[str]:
    """A text's words, each once and as cased (the embedder reads a capital as a name), stop
    words left out."""
    stop: Set[str] = STOPWORDS.get(lang, set())
    found = dict.fromkeys(re.findall(r"[^\W\d_]{2,}", text))
    return [w for w in found if w.lower() not in stop]
