"""What a question asks for, read from its words in the languages Footnote answers: the kind of
answer (an amount, a date, a duration, a place, a yes or no), the value it is about ("a 700 EUR
claim", "a 5-hour ride"), and whether it wants the extreme of something (the latest, the highest).
Answers are chosen by these, not only by shared words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from agent.values import OVER, UNDER, Quantity, dates, durations, names_a_month, quantities
from ingest.languages import detect_lang, fold_versions, tokenize

Kind = Literal["number", "date", "duration", "who", "where", "how", "yesno", "any"]
Dimension = Literal["date", "version", "amount"]

_NUMBER_Q = re.compile(
    r"\bhow (?:many|much)\b|\bwhat(?:'s| is| are)? (?:the )?(?:price|cost|rate|percentage|amount|"
    r"limit|cap|fee|budget|allowance|salary|range|band|maximum|minimum|number|share|factor)\b|"
    r"\bhow (?:big|high|large)\b|скільки|сколько|多少|几|いくら|何人|何日|wie (?:viel|hoch|groß)",
    re.I,
)
_DURATION_Q = re.compile(
    r"\bhow (?:long|soon|quickly|fast)\b|\bwithin how\b|\bhow many (?:days|weeks|months|hours)\b|"
    r"\bhow much (?:time|notice|lead time)\b|\bwie viel (?:Zeit|Vorlauf)\b|"
    r"як довго|протягом якого|скільки (?:є )?часу|сколько (?:у меня )?времени|多长时间|多少时间|"
    r"多久|どのくらい|どれくらい|何日前|wie lange",
    re.I,
)
# "when" asks at the start or before a verb ("tell me when is payday"); "when I travel" is a clause
_DATE_Q = re.compile(
    r"^\W*(?:and\s+|so\s+|but\s+)?when\b|\bwhen\s+(?:is|are|was|were|do|does|did|will|would|"
    r"should|can|could|must|has|have)\b|\bby when\b|\buntil when\b|\bwhat (?:date|time|day)\b|\bwhich (?:date|day|month)\b|\bdeadline\b|"
    r"\bby what date\b|^\W*(?:а\s+|і\s+|и\s+|та\s+)?(?:коли|когда)\b|"
    r"什么时候|何时|哪天|いつ|\bwann\b|bis wann|о котрій|в котором часу",
    re.I,
)
_WHO_Q = re.compile(
    r"\bwho\b|\bwhom\b|\bwhose\b|\bwhich (?:team|person|role|department|customer|client|company|"
    r"vendor|supplier|employee|manager|colleague)\b|хто|кто|谁|誰|\bwer\b",
    re.I,
)
_WHERE_Q = re.compile(
    r"\bwhere\b|\bwhich (?:address|city|office|tool|system)\b|(?<!\w)(?:де|где|куди|куда)\b|哪里|在哪|"
    r"どこ|\bwo(?:hin)?\b",
    re.I,
)
_YESNO_Q = re.compile(
    r"^\s*(?:can|could|may|do|does|did|is|are|was|were|will|should|am|has|have)\b|"
    r"^\s*(?:чи|ли)\b|吗[？?]?$|^(?!.*(?:何|いくら|どこ|いつ|誰|だれ|どの|どれ|どう|なぜ)).*ですか[？?]?$|^\s*(?:kann|darf|muss|ist|gibt)\b",
    re.I,
)

_MOST = {
    # not "maximum"/"minimum": "the maximum I can spend in London" asks for a limit, not a rank
    "high": re.compile(
        r"\b(?:highest|most expensive|largest|biggest|pays? the most|costs? the most)\b|найвищ|"
        r"найбільш|наибольш|самый высок|最高|最贵|höchste|teuerste",
        re.I,
    ),
    "low": re.compile(
        r"\b(?:lowest|cheapest|smallest|least expensive|pays? the least|costs? the least)\b|"
        r"найнижч|найменш|наименьш|самый низк|最低|最便宜|niedrigste|günstigste",
        re.I,
    ),
    # "last year", "first class", "first response" are not superlatives: "last"/"first" count
    # only before something that can be ordered
    "late": re.compile(
        r"\b(?:latest|newest|most recent)\b|\blast(?!\s+(?:year|month|week|night|time|day|name|"
        r"minute|resort))\b|останн|найнов|последн|новейш|最新|最后|neueste|letzte",
        re.I,
    ),
    "early": re.compile(
        r"\b(?:earliest|oldest)\b|\bfirst(?!\s*(?:-|class|time|day|week|month|year|response|"
        r"line|aid|name|half|step|of|reply))\b|найстар|старейш|最早|最初|älteste",
        re.I,
    ),
}
_DIMENSION = {
    "version": re.compile(r"\b(?:version|release|releases|build)\b|верс|版本|バージョン", re.I),
    "date": re.compile(
        r"\b(?:date|day|holiday|change|changed|revision|update|updated|when|deadline)\b|"
        r"свят|дата|день|日期|节|祝日|feiertag|datum",
        re.I,
    ),
}


# A terse question names what it wants without a question word ("Mileage rate for my own car?",
# "Free trial length?", "VPN port?"): the noun it asks for says the kind.
_QUESTION_WORD = re.compile(
    r"\b(?:what|which|who|whom|whose|where|when|why|how|is|are|do|does|can|could|may|should|"
    r"will|would|did|has|have)\b",
    re.I,
)
_TERSE = {
    "duration": re.compile(r"\b(?:length|duration|period|window|term|lead time)s?\b", re.I),
    "number": re.compile(
        r"\b(?:rate|price|cost|fee|cap|limit|amount|allowance|budget|salary|percentage|port|"
        r"number|rates|prices|costs|fees|caps|limits|per diem)\b",
        re.I,
    ),
    "date": re.compile(r"\b(?:deadline|date|due date|cut-?off|payday|pay day)\b", re.I),
    "where": re.compile(r"\b(?:address|location)\b", re.I),
}


def _terse_kind(question: str, lang: str) -> tuple[Kind, str] | None:
    """The kind a terse question asks for, and the noun that says so."""
    if lang != "en" or _QUESTION_WORD.search(question) or len(question.split()) > 8:
        return None
    # the last such noun is the head: "Salary payday?" asks for a day, not a salary
    found = [(m.start(), k, m.group(0)) for k, p in _TERSE.items() for m in p.finditer(question)]
    if not found:
        return None
    _, kind, noun = max(found)
    return kind, noun  # type: ignore[return-value]


_VERSION_Q = re.compile(
    r"\b(?:which|what|in which|in what)\s+(?:version|release|build)\b|\b(?:version|release)s?\b|"
    r"\bv?\d+[._]\d+(?:[._]\d+)?\b|верс|版本|バージョン",
    re.I,
)


# "over 50k": the words that put a value just above or below the one named, as rules write them
_OVER = re.compile(rf"(?<!\w){OVER}\s*$", re.I)
_UNDER = re.compile(rf"(?<!\w){UNDER}\s*$", re.I)


# "up to what amount …?" asks where a rule stops (the row "up to 500 EUR"), "from what amount …?"
# where one starts (the row "above 500 EUR")
_BOUND = {
    "upper": re.compile(
        r"\b(?:up to|until|till|at most) (?:what|which|how)\b|\bbis zu (?:welche|wie)|"
        r"(?<!\w)до (?:якої|якого|какой|какого|скільки|скольки)(?!\w)",
        re.I,
    ),
    "lower": re.compile(
        r"\b(?:from|above|over|beyond|starting (?:at|from)) (?:what|which|how)\b|"
        r"\bab (?:welche|wie)|(?<!\w)(?:від|с|от|начиная с) (?:якої|якого|какой|какого)(?!\w)",
        re.I,
    ),
}


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
    if _DURATION_Q.search(question):
        kind = "duration"
    elif _NUMBER_Q.search(question):
        kind = "number"
    elif _DATE_Q.search(question):
        kind = "date"
    elif _WHO_Q.search(question):
        kind = "who"
    elif _WHERE_Q.search(question):
        kind = "where"
    elif _YESNO_Q.search(question):
        kind = "yesno"
    terse = None if kind != "any" else _terse_kind(question, lang)
    if terse:
        kind = terse[0]
    found = quantities(question, lang)
    quantity = next((q for q in found if q.measure), found[0] if found else None)
    if quantity is not None:  # "over 50k" is a little more than 50k: the row "over 50,000" holds it
        before = question[max(0, quantity.start - 16) : quantity.start]
        if _OVER.search(before):
            quantity = replace(quantity, value=quantity.value * (1 + 1e-9) + 1e-9)
        elif _UNDER.search(before):
            quantity = replace(quantity, value=quantity.value * (1 - 1e-9) - 1e-9)
    extreme = next((e for e, pattern in _MOST.items() if pattern.search(question)), None)
    dimension: Dimension | None = None
    if extreme:
        if extreme in ("late", "early"):
            dimension = "version" if _DIMENSION["version"].search(question) else "date"
        else:
            dimension = "amount"
    about_versions = bool(_VERSION_Q.search(question))
    # "length", "period" are said by the value ("14 days"); "port", "rate" are words tables use
    noun = terse[1] if terse and kind in ("duration", "date") else ""
    thing = asked_thing(question) if lang == "en" and not about_versions else ""
    bound = next((b for b, pattern in _BOUND.items() if pattern.search(question)), None)
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
    comparative = len(phrase) == 1 and phrase[0].lower().endswith("er")
    if comparative and m.group(0).lstrip().lower().startswith("how"):
        return ""  # "How much cheaper is it …" asks for a difference, named by no noun
    return phrase[-1].lower()


_TIME = re.compile(r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b", re.I)
# a month's name counts only where it names a month (``names_a_month``): "you may" is no date
_DATE_WORD = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|"
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b(?:q[1-4])\b|\d+\s*(?:月|日|号)|"
    r"\b\d{1,2}(?:st|nd|rd|th)\b|\bend of\b|\bbefore\b|\bafter\b|"
    r"\b(?:working|business|calendar) day\b|\b(?:each|every) (?:month|week|year)\b|"
    r"(?:січ|лют|берез|квіт|трав|черв|лип|серп|верес|жовт|листоп|груд)",
    re.I,
)


def matches_kind(kind: Kind, text: str) -> bool:
    """Does ``text`` hold the kind of answer asked for (a number for "how many", a date or a
    time for "when")? Kinds that words cannot check (who, how, yes/no) always match."""
    if kind == "number":
        return bool(re.search(r"\d", text) or _NUMBER_WORD.search(text))
    if kind == "duration":  # a span of time: "30 days", "一个工作日"; not "15 楼" nor "one of"
        return bool(
            durations(text)
            or _TIME_SPAN.search(text)
            or _SOON.search(text)
            or dates(text, 2000)
            or names_a_month(text)
        )
    if kind == "date":  # "when should Tier 1 hand over?" — "within 4 hours" answers it too
        return bool(
            _TIME.search(text)
            or _DATE_WORD.search(text)
            or names_a_month(text)
            or _WITHIN.search(text)
        )
    if kind == "who":
        return bool(_SOMEONE.search(text) or _PERSON_NAME.search(text))
    return True


# a count written in words: English, the Han numerals of Chinese and Japanese ("一个工作日"),
# Ukrainian, Russian and German
_NUMBER_WORD = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|no|none)\b|"
    r"[一二两三四五六七八九十百千万]|"
    r"(?<!\w)(?:од(?:ин|на|но|ного|ної|ну)|дв(?:а|і|е|ох|ух)|три|чотири|четыре|п'ять|пять|шість|"
    r"шесть|сім|семь|вісім|восемь|дев'ять|девять|десять)(?!\w)|"
    r"\b(?:ein|eine|einen|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|zwölf)\b",
    re.I,
)
# "9:00–18:00" lasts a while; "the same day", "immediately" say how soon without a number
_TIME_SPAN = re.compile(r"\b\d{1,2}[:.]\d{2}\s*(?:–|—|-|to|bis|до|至)\s*\d{1,2}[:.]\d{2}\b")
_SOON = re.compile(
    r"\b(?:the same|the next|the following) (?:working |business |calendar )?day\b|"
    r"\bimmediately\b|\bsofort\b|(?<!\w)(?:одразу|негайно|сразу|немедленно)(?!\w)|当天|立即|即日",
    re.I,
)
_WITHIN = re.compile(
    r"\b(?:within|after|before|at least|no later than)\s+\d+\s*(?:working |business )?"
    r"(?:minutes?|hours?|days?|weeks?|months?)\b",
    re.I,
)
# who answers: a role, a team, an address, or a name inside the sentence
_SOMEONE = re.compile(
    r"@|\b(?:manager|team|lead|head|owner|department|desk|officer|director|admin|administrator|hr|"
    r"finance|support|partner|agency|employee|contractor|person|people|ceo|cfo|cto|coo|board|"
    r"committee|approver|reviewer|engineer|operations|you|your|tier|customer|client|vendor|"
    r"supplier|colleague|lawyer|accountant|payroll|security|it)\b",
    re.I,
)
_PERSON_NAME = re.compile(r"(?<![.:!?]\s)(?<=\s)[A-Z][a-z]+")


_IDENTIFIER = re.compile(r"\b(?:[A-Za-z]{1,6}-?\d[\w.-]*|\d+(?:\.\d+){1,3}|[A-Z]{2,}\d+)\b")
# a capitalised word inside a sentence (not its first word)
_NAME = re.compile(r"(?<![.!?:]\s)(?<=[\s(“\"'])(?:[A-ZÀ-ÖØ-ÞА-ЯІЇЄҐ][\w’'-]+)")
_NOT_NAMES = {"I", "EUR", "USD", "OK", "PDF", "FAQ", "HR", "IT", "Q"}


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
    # "98.7%" and "4.99 EUR" are values, matched as values (agent/values), not identifiers
    valued = [(q.start, q.end) for q in quantities(question, lang) if q.measure]
    identifiers = tokens(
        [
            m.group(0)
            for m in _IDENTIFIER.finditer(question)
            if not any(a <= m.start() < b for a, b in valued)
        ]
    )
    names = tokens([m.group(0) for m in _NAME.finditer(question) if m.group(0) not in _NOT_NAMES])
    return identifiers, names - identifiers
