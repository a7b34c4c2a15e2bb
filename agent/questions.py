"""What a question asks for, read from its words in the languages Footnote answers: the kind of
answer (an amount, a date, a duration, a place, a yes or no), the value it is about ("a 700 EUR
claim", "a 5-hour ride"), and whether it wants the extreme of something (the latest, the highest).
Answers are chosen by these, not only by shared words.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Literal

from agent.phrasing import alternation, pattern
from agent.terms import SITUATED
from agent.values import (
    ISO_4217,
    Quantity,
    dates,
    durations,
    names_a_month,
    quantities,
)
from ingest.languages import detect_lang, fold_versions, tokenize
from ingest.sentences import sentence_spans

Kind = Literal["number", "date", "duration", "who", "where", "how", "yesno", "any"]
Dimension = Literal["date", "version", "amount"]
# the kinds a question's words say, tried in this order ("how many days" asks for a duration, not
# a number); each is the list ``<kind>_question`` of agent/patterns/
_KINDS: tuple[Kind, ...] = ("duration", "number", "date", "who", "where", "yesno")

# the extreme a question asks for, by its list in agent/patterns/
_MOST = {"high": "highest", "low": "lowest", "late": "latest", "early": "earliest"}


# A terse question names what it wants without a question word ("Mileage rate for my own car?",
# "Free trial length?", "VPN port?"): the noun it asks for says the kind.
_TERSE = {
    "duration": "terse_duration",
    "number": "terse_number",
    "date": "terse_date",
    "where": "terse_where",
}


def _terse_kind(question: str, lang: str) -> tuple[Kind, str] | None:
    """The kind a terse question asks for, and the noun that says so."""
    if lang != "en" or pattern("question_word").search(question) or len(question.split()) > 8:
        return None
    # the last such noun is the head: "Salary payday?" asks for a day, not a salary
    found = [
        (m.start(), k, m.group(0))
        for k, name in _TERSE.items()
        for m in pattern(name).finditer(question)
    ]
    if not found:
        return None
    _, kind, noun = max(found)
    return kind, noun  # type: ignore[return-value]


# a version number asks about versions in any language: "2.3", "v2_3_1"
_VERSION_NUMBER = re.compile(r"\bv?\d+[._]\d+(?:[._]\d+)?\b")


# "over 50k": the words that put a value just above or below the one named, as rules write them
# (the lists ``over`` and ``under`` of agent/patterns/)
def _just_before(name: str, text: str) -> bool:
    return bool(_ending_with(name).search(text))


@functools.cache
def _ending_with(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){alternation(name)}\s*$", re.I)


# "up to what amount …?" asks where a rule stops (the row "up to 500 EUR"), "from what amount …?"
# where one starts (the row "above 500 EUR")
_BOUND = {"upper": "up_to_what", "lower": "from_what"}


@dataclass(frozen=True)
class Asks:
    """What a question asks for."""

    kind: Kind
    lang: str
    quantity: Quantity | None = None  # the value it is about: "a 700 EUR claim"
    extreme: Literal["high", "low", "late", "early"] | None = None
    dimension: Dimension | None = None  # what the extreme is of
    versions: bool = False  # about releases or versions: the version an answer sits under matters
    kind_noun: str = ""  # "length" in "Free trial length?": said by the answer's value, not a word
    thing: str = ""  # the asked thing: "bonus" in "What bonus does …", "manager" in "Who is the office manager …"
    bound: Literal["upper", "lower"] | None = None  # "up to what amount": where a rule stops


def asks(question: str) -> Asks:
    lang = detect_lang(question)
    kind: Kind = "any"
    # the kind is the question's own where it says one, not its situation's: "When I was 16 … —
    # Am I the sort of person the Coast Guard recruits?" asks yes or no, not when; a follow-up
    # that says none ("… — And after five years?") asks what the question it follows asked
    own = question.rpartition(SITUATED)[2]
    for text in dict.fromkeys((own, question)):
        for candidate in _KINDS:  # in this order: "how many days" asks for a duration
            if pattern(f"{candidate}_question").search(text):
                kind = candidate
                break
        if kind != "any":
            break
    terse = None if kind != "any" else _terse_kind(question, lang)
    if terse:
        kind = terse[0]
    found = quantities(question, lang)
    quantity = next((q for q in found if q.measure), found[0] if found else None)
    if quantity is not None:  # "over 50k" is a little more than 50k: the row "over 50,000" holds it
        before = question[max(0, quantity.start - 16) : quantity.start]
        if _just_before("over", before):
            quantity = replace(quantity, value=quantity.value * (1 + 1e-9) + 1e-9)
        elif _just_before("under", before):
            quantity = replace(quantity, value=quantity.value * (1 - 1e-9) - 1e-9)
    extreme = next((e for e, name in _MOST.items() if pattern(name).search(question)), None)
    dimension: Dimension | None = None
    if extreme:
        if extreme in ("late", "early"):
            dimension = "version" if pattern("version_dimension").search(question) else "date"
        else:
            dimension = "amount"
    about_versions = bool(
        pattern("versions_asked").search(question) or _VERSION_NUMBER.search(question)
    )
    # "length", "period" are said by the value ("14 days"); "port", "rate" are words tables use
    noun = terse[1] if terse and kind in ("duration", "date") else ""
    thing = asked_thing(question) if lang == "en" and not about_versions else ""
    if pattern("unnamed_things").fullmatch(thing):
        thing = ""  # "What are the steps to …": the answer is the steps, and seldom says "steps"
    bound = next((b for b, name in _BOUND.items() if pattern(name).search(question)), None)
    return Asks(kind, lang, quantity, extreme, dimension, about_versions, noun, thing, bound)  # type: ignore[arg-type]


# "What bonus does …", "How much standby allowance …", "Who is the office manager of …": the
# noun phrase right after the question's opening names the thing asked for; "which" is left out
# ("Which tool do I use?" is answered by a name, not by the word "tool"), and so is "how many
# times" (said by "twice")
_OPENING = re.compile(
    r"^\W*(?:what(?:'s| is| are)(?: the| a| an| our| my)?|what (?:the|a|an|our|my)|"
    r"how (?:many|much)(?! times\b)|who(?:'s| is| are) (?:the|our|my)|(?P<bare>what))"
    r"\s+(?P<phrase>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3})",
    re.I,
)
_AUXILIARY = r"do|does|did|is|are|was|were|can|could|will|would|should|must|has|have|had|may"
_PHRASE_END = re.compile(
    rf"\b(?:{_AUXILIARY}|i|you|we|they|he|she|it|of|for|in|on|at|to|from|with|per|by|if|when|"
    r"once|after|before|during|that|which|who|off|a|an|the)\b.*$",
    re.I,
)


def asked_thing(question: str) -> str:
    """The head of the noun phrase a question opens with, which a sentence answering it names (or
    says in other words): "bonus" in "What bonus does someone rated … get?", "allowance" in "How
    much standby allowance …"; '' when the opening is followed by a verb or a value ("What does
    …", "How much cheaper …" keep none)."""
    m = _OPENING.match(question)
    if not m:
        return ""
    phrase = _PHRASE_END.sub("", m.group("phrase")).split()
    rest = m.group("phrase").split()[len(phrase) : len(phrase) + 1]
    if m.group("bare") and not (rest and re.fullmatch(_AUXILIARY, rest[0], re.I)):
        return ""  # "What happens to …": a verb follows a bare "what"; "What bonus does …": a noun
    if not phrase or len(phrase) > 3:
        return ""
    opening = m.group(0).lstrip().lower()
    how = opening.startswith("how")
    comparative = len(phrase) == 1 and phrase[0].lower().endswith("er")
    if comparative and how:
        return ""  # "How much cheaper is it …" asks for a difference, named by no noun
    phrase = _noun_phrase(phrase, how, opening.startswith("how many"))
    return phrase[-1].lower() if phrase else ""


def _inflected(word: str) -> bool:
    """An English word in another form than its dictionary one: "lived", "days", "children"."""
    import simplemma  # at the first English question that needs it: 0.2 s to load

    w = word.lower()
    return w.isalpha() and simplemma.lemmatize(w, lang="en") != w


def _verb(word: str) -> bool:
    """A verb's dictionary form: its past is read back to it ("belong", "need", "live")."""
    import simplemma

    w = word.lower()
    past = w + "d" if w.endswith("e") else w + "ed"
    return w.isalpha() and simplemma.lemmatize(past, lang="en") == w


def _noun_phrase(phrase: list[str], how: bool, count: bool) -> list[str]:
    """The noun phrase of an opening that runs on into a clause about it. "How many people belong
    to …" counts people: a count's noun is its first plural ("vacation days"), or what comes before
    a verb ("people belong"; "how much" reads no verb: "travel budget"). "What is the term
    used to …", "How many people lived in …": a participle after a noun begins a clause about it
    (so do the little words and adverbs before it: "What is not included …"); the thing asked is
    the noun before it, or none."""
    if how:
        for k, w in enumerate(phrase):
            if _inflected(w) and not w.lower().endswith(("ed", "ing")):
                phrase = phrase[: k + 1]
                break
            if k and count and _verb(w):  # "How much travel budget": "budget" is a verb too
                phrase = phrase[:k]
                break
    if len(phrase) > 1 and phrase[-1].lower().endswith("ed") and _inflected(phrase[-1]):
        phrase = phrase[:-1]
        while phrase and (not tokenize(phrase[-1], "en") or phrase[-1].lower().endswith("ly")):
            phrase = phrase[:-1]
    return phrase


_TIME = re.compile(r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b", re.I)
# a date besides a time and the lists ``date_words``; a month's name counts only where it names a
# month (``names_a_month``): "you may" is no date
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def matches_kind(kind: Kind, text: str) -> bool:
    """Does ``text`` hold the kind of answer asked for (a number for "how many", a date or a
    time for "when")? Kinds that words cannot check (who, how, yes/no) always match."""
    if kind == "number":
        return bool(re.search(r"\d", text) or pattern("number_words").search(text))
    if kind == "duration":  # a span of time: "30 days", "一个工作日"; not "15 楼" nor "one of"
        return bool(
            durations(text)
            or _time_span().search(text)
            or pattern("soon").search(text)
            or dates(text, 2000)
            or names_a_month(text)
            or _names_an_era(text)  # how long: "since the 1950s", "from 1870 to 1939"
        )
    if kind == "date":  # "when should Tier 1 hand over?" — "within 4 hours" answers it too
        return bool(
            _TIME.search(text)
            or _ISO_DATE.search(text)
            or pattern("date_words").search(text)
            or names_a_month(text)
            or pattern("within").search(text)
            or _names_an_era(text)
        )
    if kind == "who":
        return bool(
            pattern("someone").search(text) or _PERSON_NAME.search(text) or not _cased(text)
        )
    return True


# a year: "in 1817", "the 1970s", "1946 года", "1817 年"
_YEAR = re.compile(r"(?<![\d.,])(?:1\d{3}|20\d{2})(?!\d|[.,]\d)")


def _names_an_era(text: str) -> bool:
    """A year, a decade or a century: a four-digit number from 1000 to 2099 that measures
    nothing else ("1500 EUR" and "2000 km" are amounts), or the list ``era_words``."""
    if pattern("era_words").search(text):
        return True
    return bool(_YEAR.search(text)) and any(
        q.measure in ("", "year") and _YEAR.match(text, q.start) for q in quantities(text, "en")
    )


def _cased(text: str) -> bool:
    """Is the text mostly written in a script with capitals? Where it is not (Chinese, Japanese),
    a name cannot be told from other words, and a "who" question's answer cannot be checked."""
    letters = [c for c in text if c.isalpha()]
    return 2 * sum(c.isupper() or c.islower() for c in letters) >= len(letters)


# "9:00–18:00" lasts a while (the list ``soon``: "the same day", "immediately" say how soon)
@functools.cache
def _time_span() -> re.Pattern[str]:
    to = alternation("range_to")
    return re.compile(rf"\b\d{{1,2}}[:.]\d{{2}}\s*(?:–|—|-|{to})\s*\d{{1,2}}[:.]\d{{2}}\b")


_PERSON_NAME = re.compile(r"(?<![.:!?]\s)(?<=\s)(?:[A-Z][a-z]+|[А-ЯЁІЇЄҐ][а-яёіїєґ]+)")


_IDENTIFIER = re.compile(r"\b(?:[A-Za-z]{1,6}-?\d[\w.-]*|\d+(?:\.\d+){1,3}|[A-Z]{2,}\d+)\b")
# a capitalised word inside a sentence (not its first word)
_NAME = re.compile(r"(?<![.!?:]\s)(?<=[\s(“\"'])(?:[A-ZÀ-ÖØ-ÞА-ЯІЇЄҐ][\w’'-]+)")
# capitals that name no one; a currency code is no name beside a number ("400 CHF"), whatever the
# currency (``required_terms``), and a name otherwise ("my SAR": a Student Aid Report)
_NOT_NAMES = {"I", "OK", "PDF", "FAQ", "HR", "IT", "Q"}


_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9&'-]*")


def latin_names(question: str, lang: str) -> tuple[str, ...]:
    """The words a question in a non-Latin script writes in Latin letters ("AI Reply Assist",
    "Business"): product and plan names, written alike in a document in any language, so they
    find and rank the document across languages where meaning alone is too weak."""
    if lang not in ("uk", "ru", "zh", "ja"):
        return ()
    return tuple(dict.fromkeys(_LATIN_WORD.findall(question)))


def names_all(names: tuple[str, ...], text: str) -> float:
    """The share of ``names`` that ``text`` writes exactly so (case and all: "Business" the plan,
    not "for business")."""
    if not names:
        return 0.0
    found = [n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text)]
    return len(found) / len(names)


def required_terms(question: str, lang: str) -> tuple[frozenset[str], frozenset[str]]:
    """What an answer must mention: identifiers ("TCK-1130", "L4", "2.3.1") — a sentence without
    them is about another ticket, level or release, however close it sounds — and the names
    written with a capital inside the question ("Brightline", "Berlin"), which an answer usually
    names too (but not always: "moving from Hamburg" is answered by the rule for every move)."""

    def tokens(words: list[str]) -> frozenset[str]:
        out: set[str] = set()
        for word in words:
            out |= set(tokenize(word, lang))
        return frozenset(t for t in out if len(t) > 1)

    question = fold_versions(question)  # "release 2_3_1" names release 2.3.1
    # "98.7%" and "4.99 EUR" are values, matched as values (agent/values), not identifiers, and
    # the currency of "400 CHF" or "CHF 400" is no name: money is an open set
    found = quantities(question, lang)
    valued = [(q.start, q.end) for q in found if q.measure]
    money = [(q.start, q.end) for q in found if q.money]
    identifiers = tokens(
        [
            m.group(0)
            for m in _IDENTIFIER.finditer(question)
            if not any(a <= m.start() < b for a, b in valued)
        ]
    )
    names = tokens(
        [
            m.group(0)
            for m in _NAME.finditer(question)
            if m.group(0) not in _NOT_NAMES
            and not (m.group(0) in ISO_4217 and any(a <= m.start() < b for a, b in money))
        ]
    )
    return identifiers, names - identifiers


def asked_years(question: str) -> frozenset[str]:
    """The years the question's own part names ("out of fuel in 1973"): which case it asks about,
    as a release number is, so a sentence about 1974 answers another question. Not its
    situation's years ("I passed my test in 2000 — can I ride a 125cc?": the rule need not name
    them), not a value's ("1500 EUR") and not a decade's ("in the 2000s": a sentence names that
    span otherwise, "in 1962")."""
    return years_in(question.rpartition(SITUATED)[2])


def years_in(text: str) -> frozenset[str]:
    """The years ``text`` names: four digits alone, not a value's ("1500 EUR") or a decade's."""
    return frozenset(
        m.group(0)
        for q in quantities(text)
        if not q.measure
        and (m := _YEAR.match(text, q.start))
        and m.end() == q.end
        and not re.match(r"'?s\b", text[q.end :])
    )


# a stop, the space after it and the lower-case letter a typed sentence may begin with; the word
# before it is kept to tell an abbreviation with dots inside ("U.S. or Europe") from a sentence
_TYPED_START = re.compile(r"(\S*?)[.!?…]+[\"'”’»)\]]*\s+([a-z])")


def message_sentences(text: str) -> list[str]:
    """The sentences of a message as people type them in chat, where a sentence may begin in
    lower case ("my review was denied. can i appeal it?"): split as the documents' splitter would
    if each such letter were a capital, so its rules for abbreviations and initials ("approx.
    five", "J. smith") still hold; a word with a dot inside ("U.S. or Europe") goes on."""
    chars = list(text)
    for m in _TYPED_START.finditer(text):
        if "." not in m.group(1).rstrip("."):
            chars[m.start(2)] = chars[m.start(2)].upper()
    return [text[s:e] for s, e in sentence_spans("".join(chars))]
