"""The values a sentence states — amounts, durations, percentages, ranges, dates, versions — read
the same way in every language Footnote answers, so that answers can be chosen by comparing them:
the table row whose range holds the asker's amount, the newest date, the highest price.

Numbers: "1,000" and "60.000" (German) are thousands, "4.99" and "4,99" decimals, "12 500" one
number. A range is what a rule covers: "up to 1,000 EUR", "1,001–10,000 EUR", "over 25,000 EUR",
"under 6 hours", "6 hours or more", "below 99.0%". Dates: ISO, "1 February 2026", "February 1,
2026", "31 March", "1.2.2026", "2月15日", "15 лютого"; a date without a year takes the year given.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from dataclasses import dataclass
from datetime import date

from agent.phrasing import alternation, pattern, table

# ------------------------------------------------------------------------------------- units

# The words of units, counts, ordinals and months are per-language tables of agent/patterns/
# (``phrasing.table``); what follows builds the patterns that read values from them on first use.

# Money is an open set: any currency sign and any ISO 4217 code beside a number, besides the
# currencies the tables name in words. The signs are Unicode's category Sc (Unicode 14, as Python's
# unicodedata lists it; a test checks this copy); a sign that stands for one currency counts as
# that currency's code ("£12" and "12 GBP" compare), any other as itself.
CURRENCY_SIGNS = "$¢£¤¥֏؋߾߿৲৳৻૱௹฿៛₠₡₢₣₤₥₦₧₨₩₪₫€₭₮₯₰₱₲₳₴₵₶₷₸₹₺₻₼₽₾₿⃀꠸﷼﹩＄￠￡￥￦𑿝𑿞𑿟𑿠𞋿𞲰"
_SIGN_CODES = {"€": "eur", "$": "usd", "£": "gbp", "￡": "gbp", "＄": "usd", "₹": "inr"}
_SIGN_CODES |= {"₩": "krw", "￦": "krw", "₽": "rub", "₴": "uah", "₺": "try", "₪": "ils"}
_SIGN_CODES |= {"₫": "vnd", "₱": "php", "₦": "ngn", "฿": "thb", "₸": "kzt", "₼": "azn"}
_SIGN_CODES |= {"₾": "gel", "֏": "amd"}
PERCENT = "%"
# ISO 4217's active codes (the 2024 list), read in capitals only: "CHF 1'200", "1,200 SEK".
ISO_4217 = frozenset(
    """AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN
    BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP
    GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS
    KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR
    MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF
    SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD
    TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG""".split()  # noqa: SIM905
)
# Codes that are also words or names in capitals ("ALL 12 sites", "TOP 10", "PHP 8"): money only
# after a number, never before one.
_WORDLIKE_CODES = {"ALL", "TOP", "CUP", "MOP", "SOS", "PHP"}
# the measures that are money: every code, and what every sign stands for
CURRENCIES = frozenset(c.lower() for c in ISO_4217) | {
    _SIGN_CODES.get(s, s) for s in CURRENCY_SIGNS
}
_CODES = "|".join(sorted(ISO_4217))
_SIGNS = re.escape(CURRENCY_SIGNS)
# a sign, or a code before its number ("CHF 1'200", "USD 12.50"): three capitals, which
# ``_pre_measure`` checks against the codes (one alternation of 180 codes in each pattern that
# reads a value cost 25 ms of compiling at every start)
_PRE = rf"(?P<pre>[{_SIGNS}]|(?<![^\W\d_])(?-i:[A-Z]{{3}})(?=\s?\d))"
_PRE_CODES = ISO_4217 - _WORDLIKE_CODES


def _names(names: list[str] | tuple[str, ...]) -> str:
    """Words as an alternation, the longest first; none matches nothing."""
    return "|".join(sorted(map(re.escape, names), key=len, reverse=True)) or "(?!)"


@functools.cache
def _measure_of() -> dict[str, str]:
    """Every word or sign of a unit, in lower case → its measure ("days" → "day", "£" → "gbp",
    "chf" → "chf")."""
    out = {PERCENT: PERCENT} | table("units")
    for sign in CURRENCY_SIGNS:
        out.setdefault(sign, _SIGN_CODES.get(sign, sign))
    for code in ISO_4217:
        out.setdefault(code.lower(), code.lower())
    return out


def measure_of(word: str) -> str:
    """The measure a unit's word or sign names; '' for none."""
    return _measure_of().get(word.lower(), "")


@functools.cache
def unit_words() -> frozenset[str]:
    """Every word that names a unit of measure, in every language ("days", "EUR", "%")."""
    return frozenset(table("units")) | set(CURRENCY_SIGNS) | {PERCENT}


def _pre_measure(pre: str | None) -> str:
    """The money a sign or code before a number says; '' for none (or three capitals that are
    no currency code: "SLA 99.9%")."""
    if not pre:
        return ""
    if pre in _PRE_CODES:
        return pre.lower()
    return measure_of(pre) if pre in CURRENCY_SIGNS else ""


_DURATION_DAYS = {
    "minute": 1 / 1440,
    "hour": 1 / 24,
    "day": 1,
    "week": 7,
    "month": 30.44,
    "year": 365.25,
}

# thousands grouped by a comma, dot, space or apostrophe ("1'200", Swiss)
_NUMBER = r"\d{1,3}(?:[ ,.'’\u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?"


@functools.cache
def _measure() -> str:
    """Any unit: its words or signs in any case, an ISO code in capitals only ("12 all" is no
    money)."""
    return f"{_names(list(unit_words()))}|(?-i:{_CODES})"


# "3 business days", "10 unused vacation days", "4 weeks' paid leave": up to two words between a
# number and its unit
_BETWEEN_WORD = r"(?:[^\W\d_][\w'’-]*\s){0,2}?"


@functools.cache
def _quantity() -> re.Pattern[str]:
    return re.compile(
        rf"{_PRE}?\s?(?P<num>{_NUMBER})(?P<k>[kK](?![^\W\d_]))?"
        rf"(?:[\s-]?{_BETWEEN_WORD}(?P<measure>{_measure()})(?![^\W\d_]))?",
        re.I,
    )


@functools.cache
def _counts() -> tuple[dict[str, int], tuple[str, ...], tuple[str, ...]]:
    """The counts in words (word → number), and the tens (20 to 90) and ones (1 to 9) a count
    joins with a hyphen ("twenty-five")."""
    single = {w: int(n) for w, n in table("counts").items()}
    tens = tuple(w for w, n in single.items() if n in range(20, 100, 10))
    ones = tuple(w for w, n in single.items() if n in range(1, 10))
    joined = {f"{t}-{o}": single[t] + single[o] for t in tens for o in ones}
    return single | joined, tens, ones


def count_words() -> dict[str, int]:
    """Every count written in words, in every language: "five", "twenty-five", "fünf", "п'ять"."""
    return _counts()[0]


@functools.cache
def ordinal_words() -> dict[str, int]:
    """ "first" → 1, "fifth" → 5: the ordinals in words, in every language."""
    return {w: int(n) for w, n in table("ordinals").items()}


@functools.cache
def _count_word() -> str:
    """The counts as a pattern: the tens with their ones ("twenty-five") written once, not 72
    times."""
    counts, tens, ones = _counts()
    joined = [f"(?:{_names(tens)})(?:-(?:{_names(ones)}))?"] if tens and ones else []
    return "|".join([*joined, _names([w for w in counts if "-" not in w and w not in tens])])


@functools.cache
def _word_quantity() -> re.Pattern[str]:
    """A count in words right before its unit ("two weeks"): "two hotel nights" is left to
    ``numbers_said``, so that a value to order by stays a value the text states as one."""
    return re.compile(
        rf"(?<![^\W\d_])(?P<num>{_count_word()})[\s-](?P<measure>{_measure()})(?![^\W\d_])",
        re.I,
    )


@functools.cache
def _said() -> re.Pattern[str]:
    """A number however written, with the unit it counts: "five years", "the fifth", "5th"."""
    ordinal = _names(list(ordinal_words()))
    return re.compile(
        rf"(?<![^\W\d_])(?P<num>{_count_word()}|{ordinal}|\d{{1,3}}{alternation('ordinal_suffix')})"
        rf"(?![^\W\d_])(?:[\s-]{_BETWEEN_WORD}(?P<measure>{_measure()})(?![^\W\d_]))?",
        re.I,
    )


def numbers_said(text: str, lang: str = "en", *, ordinals: bool = True) -> list[Quantity]:
    """Every number a text states with its unit, however written: "5 years", "five years", "the
    5th year" and "the fifth full year" all say 5 years, so a question and a rule that write the
    number differently still meet."""
    out = quantities(text, lang)
    taken = {q.start for q in out}
    counts = count_words()
    for m in _said().finditer(text):
        if m.start() in taken:
            continue
        word = m.group("num").lower()
        if not ordinals and word not in counts:
            continue  # "the first day" is a day, not a span of one day
        value = counts.get(word) or ordinal_words().get(word) or int(re.sub(r"\D", "", word) or 0)
        measure = measure_of(m.group("measure") or "")
        out.append(Quantity(float(value), measure, m.start(), m.end()))
    return sorted(out, key=lambda q: q.start)


def parse_number(text: str, lang: str = "en") -> float | None:
    """ "1,000" → 1000, "60.000" → 60000 (a dot before exactly three digits groups thousands,
    unless the language writes decimals with a dot and it could be one), "4.99" → 4.99,
    "4,99" → 4.99, "12 500" → 12500."""
    s = text.strip().replace("\u00a0", " ").replace("\u202f", " ")
    s = re.sub(r"(?<=\d)['’](?=\d{3}\b)", "", s)  # "1'200": Swiss thousands
    s = re.sub(r"(?<=\d) (?=\d{3}\b)", "", s)
    groups = re.fullmatch(r"(\d{1,3})((?:[.,]\d{3})+)([.,]\d+)?", s)
    if groups and (len(groups.group(2)) > 4 or groups.group(3) or "," in groups.group(2)):
        sep = groups.group(2)[0]
        whole = groups.group(1) + groups.group(2).replace(sep, "")
        tail = (groups.group(3) or "").replace(",", ".")
        try:
            return float(whole + tail)
        except ValueError:
            return None
    if re.fullmatch(r"\d{1,3}\.\d{3}", s) and lang in (
        "de",
        "ru",
        "uk",
        "pl",
        "nl",
        "it",
        "es",
        "pt",
        "fr",
    ):
        return float(s.replace(".", ""))
    try:
        return float(s.replace(",", "."))
    except ValueError:
        return None


@dataclass(frozen=True)
class Quantity:
    value: float
    measure: str  # "" for a bare number; "eur", "%", "day", "hour", ...
    start: int = 0
    end: int = 0

    @property
    def days(self) -> float | None:
        """A duration in days (for comparing "48 hours" with "3 days"); None for other units."""
        factor = _DURATION_DAYS.get(self.measure)
        return self.value * factor if factor is not None else None

    @property
    def money(self) -> bool:
        return self.measure in CURRENCIES

    def comparable(self, other: Quantity) -> bool:
        if self.measure == other.measure:
            return True
        return self.days is not None and other.days is not None


def quantities(text: str, lang: str = "en") -> list[Quantity]:
    """The numbers of a text with their units (a currency sign before the number counts)."""
    out: list[Quantity] = []
    pos = 0
    while found := _quantity().search(text, pos):
        m = found
        between = text[m.end("num") : m.start("measure")] if m.group("measure") else ""
        sign = m.group("measure")
        if sign and sign in CURRENCY_SIGNS and re.search(r"[^\W\d_]", between):
            # a sign is the unit of the number it touches: "€40 and $50" is 40 EUR, then $50
            short = _quantity().match(text, m.start(), m.end("k") if m.group("k") else m.end("num"))
            assert short is not None  # the same match, cut before the words
            m = short
        pos = m.end()
        if re.match(r"\d", text[m.end() : m.end() + 1] or " "):
            continue
        before = text[max(0, m.start("num") - 1) : m.start("num")]
        pre = _pre_measure(m.group("pre"))
        if before and (before.isalpha() or before in "._/-:") and not pre:
            continue  # part of a name, version, date or time: "L4", "2.3.1", "TCK-1042", "9:00"
        after = text[
            m.start("num") + len(m.group("num")) : m.start("num") + len(m.group("num")) + 2
        ]
        if re.match(r"[._:/-]\d", after):
            continue  # a version, a date, a time, a ratio or the start of a range
        value = parse_number(m.group("num"), lang)
        if value is None:
            continue
        if m.group("k"):
            value *= 1000  # "50k"
        measure = measure_of(m.group("measure") or "")
        following = text[m.end("k") if m.group("k") else m.end("num") :]
        # "50k a year", "20 EUR per day": the unit after "a"/"per" is what the value is counted
        # in, not its own unit
        if m.group("measure") and re.match(rf"\s*{alternation('per')}\s", following, re.I):
            measure = ""
        if pre:
            measure = pre
        start = m.start("pre") if pre else m.start("num")
        out.append(Quantity(value, measure, start, m.end()))
    for m in _word_quantity().finditer(text):
        out.append(
            Quantity(
                float(count_words()[m.group("num").lower()]),
                measure_of(m.group("measure")),
                m.start(),
                m.end(),
            )
        )
    return sorted(out, key=lambda q: q.start)


_HAN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6}
_HAN_DIGITS |= {"七": 7, "八": 8, "九": 9}


def han_number(text: str) -> int | None:
    """ "三" → 3, "十五" → 15, "二十" → 20, "三十五" → 35 (the counts a rule writes in Han
    numerals); None for anything else."""
    if not text or any(c not in _HAN_DIGITS and c != "十" for c in text):
        return None
    if "十" not in text:
        return _HAN_DIGITS[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    if len(tens) > 1 or len(ones) > 1:
        return None
    return (_HAN_DIGITS[tens] if tens else 1) * 10 + (_HAN_DIGITS[ones] if ones else 0)


# "一个工作日", "3 个工作日", "两周", "30天", "2 週間": a count, its classifier, what kind of day,
# and the unit of time; not "5月1日" (a date) nor "2026 年" (a year)
_CJK_DURATION = re.compile(
    r"(?<![\d月年])(?P<num>\d{1,3}|[零一二两兩三四五六七八九十]{1,3})\s*(?:个|個|ヶ|か|カ)?"
    r"(?:工作|自然|日历|営業|整)?"
    r"(?P<measure>小时|小時|時間|分钟|分鐘|天|日間|日(?!\d)|星期|周|週間|週|个月|ヶ月|か月|カ月|月(?!\s*\d)|年(?!\s*\d))"
)
_CJK_MEASURE = {"小时": "hour", "小時": "hour", "時間": "hour", "分钟": "minute", "分鐘": "minute"}
_CJK_MEASURE |= {
    "天": "day",
    "日間": "day",
    "日": "day",
    "星期": "week",
    "周": "week",
    "週間": "week",
}
_CJK_MEASURE |= {"週": "week", "个月": "month", "ヶ月": "month", "か月": "month", "カ月": "month"}
_CJK_MEASURE |= {"月": "month", "年": "year"}


@functools.cache
def _one_of_unit() -> re.Pattern[str]:
    """ "within a week", "for an hour": a duration of one that names no number. The unit is a
    measure's own name, the singular (not "min", which "a min. size" abbreviates otherwise)."""
    unit = _names(list(_DURATION_DAYS))
    return re.compile(rf"{alternation('a_unit_of')}(?P<measure>{unit})\b", re.I)


@functools.cache
def _compound_duration() -> re.Pattern[str]:
    """German writes the kind of day into one word with the unit: "zwei Arbeitstage", "10
    Werktagen" (the table ``compound_units``)."""
    units = _names(list(table("compound_units")))
    return re.compile(
        rf"(?<![^\W\d_])(?P<num>\d{{1,3}}|{_count_word()})\s+[A-ZÄÖÜ][a-zäöüß]+?"
        rf"(?P<measure>{units})\b",
        re.I,
    )


def durations(text: str, lang: str = "en") -> list[Quantity]:
    """The spans of time a text states, with their unit: "30 days", "two weeks", "一个工作日",
    "within a week". A number without a unit of time ("15 楼", "one of them") is none."""
    out = [q for q in numbers_said(text, lang, ordinals=False) if q.days is not None]
    for m in _CJK_DURATION.finditer(text):
        raw = m.group("num")
        value = float(raw) if raw.isdigit() else han_number(raw)
        if value is not None:
            out.append(Quantity(float(value), _CJK_MEASURE[m.group("measure")], m.start(), m.end()))
    for m in _compound_duration().finditer(text):
        raw = m.group("num")
        count = float(raw) if raw.isdigit() else float(count_words()[raw.lower()])
        measure = table("compound_units")[m.group("measure").lower()]
        out.append(Quantity(count, measure, m.start(), m.end()))
    for m in _one_of_unit().finditer(text):
        out.append(Quantity(1.0, measure_of(m.group("measure")), m.start("measure") - 2, m.end()))
    return sorted(out, key=lambda q: q.start)


# ------------------------------------------------------------------------------------- ranges


@dataclass(frozen=True)
class Range:
    """The values a rule covers: ``low`` < or <= x < or <= ``high``, in ``measure`` ("day", "eur",
    "%"; "" for a bare number)."""

    low: float
    high: float
    measure: str
    low_open: bool = False
    high_open: bool = False

    def contains(self, q: Quantity) -> bool:
        if not self.measure_matches(q):
            return False
        if (
            q.measure == self.measure or self.measure not in _DURATION_DAYS
        ):  # the same measure, or a bare amount
            x = q.value
        else:
            x = (q.days or 0) / _DURATION_DAYS[self.measure]
        above = x > self.low if self.low_open else x >= self.low
        below = x < self.high if self.high_open else x <= self.high
        return above and below

    def measure_matches(self, q: Quantity) -> bool:
        return (
            q.measure == self.measure
            or (not q.measure and self.measure in CURRENCIES)
            or (q.days is not None and self.measure in _DURATION_DAYS)
        )


@functools.cache
def _value() -> str:
    """One value of a range, with its sign, code or unit."""
    return (
        rf"{_PRE}?\s?(?P<num>{_NUMBER})"
        rf"(?:\s?{_BETWEEN_WORD}(?P<measure>{_measure()})(?![^\W\d_]))?"
    )


def _q(m: re.Match[str], lang: str, suffix: str = "") -> tuple[float, str] | None:
    value = parse_number(m.group("num" + suffix), lang)
    if value is None:
        return None
    measure = measure_of(m.group("measure" + suffix) or "")
    measure = _pre_measure(m.group("pre" + suffix)) or measure
    return value, measure


# The words around a value, per language, are lists of agent/patterns/: a range's bound
# (``up_to``, ``over``, ``under``, ``or_more``, ``after_span``), what a value is counted per
# (``per``), the word between a range's ends (``range_to``).


@functools.cache
def _between() -> re.Pattern[str]:
    """ "1,001–10,000 EUR", "5 to 10 days": two values and the word or dash between them."""
    first = _value().replace("(?P<pre>", "(?P<pre1>").replace("(?P<num>", "(?P<num1>")
    first = first.replace("(?P<measure>", "(?P<measure1>")
    return re.compile(rf"{first}\s*(?:–|—|-|~|{alternation('range_to')})\s*{_value()}", re.I)


@functools.cache
def _range_word() -> re.Pattern[str]:
    """ "up to 1,000 EUR", "over 5 hours", "after the first 24 months": a bound, then a value."""
    word = "|".join(alternation(n) for n in ("up_to", "over", "under", "after_span"))
    return re.compile(rf"(?P<word>{word})\s+(?:the\s+)?(?:(?:first|next)\s+)?{_value()}", re.I)


@functools.cache
def _range_after() -> re.Pattern[str]:
    """ "6 hours or more": a value, then what opens it upwards."""
    return re.compile(rf"{_value()}\s+{alternation('or_more')}", re.I)


@functools.cache
def _unit_first() -> re.Pattern[str]:
    """ "in months 13 to 24": a schedule names its unit before the numbers."""
    return re.compile(
        rf"(?<![^\W\d_])(?P<measure>{_measure()})\s+(?P<num1>{_NUMBER})\s*"
        rf"(?:–|—|-|{alternation('range_to')})\s*(?P<num>{_NUMBER})(?![\d.,]*\d)",
        re.I,
    )


@functools.cache
def _money_word() -> re.Pattern[str]:
    """A currency or percentage in words, code or sign, anywhere in a text."""
    words = [w for w, m in table("units").items() if m in CURRENCIES or m == PERCENT]
    words.append(PERCENT)
    codes = "|".join(sorted(ISO_4217 - _WORDLIKE_CODES))
    return re.compile(
        rf"(?<![^\W\d_])(?:{'|'.join(map(re.escape, words))}|(?-i:{codes}))(?![^\W\d_])"
        rf"|[{_SIGNS}]",
        re.I,
    )


def measure_named(text: str) -> str:
    """The currency or percentage a table's header names ("Order value (EUR, net)"), which its
    cells' bare figures are in; '' when it names none."""
    m = _money_word().search(text)
    return measure_of(m.group(0)) if m else ""


def ranges(text: str, lang: str = "en") -> list[Range]:
    """The ranges a text states ("up to 1,000 EUR", "1,001–10,000 EUR", "6 hours or more")."""
    out: list[Range] = []
    taken: list[tuple[int, int]] = []
    for m in _unit_first().finditer(text):
        if len(m.group("measure")) < 4:
            continue  # "min 78,000 – 96,000" is a minimum, not minutes
        low, high = parse_number(m.group("num1"), lang), parse_number(m.group("num"), lang)
        if low is not None and high is not None and low <= high:
            out.append(Range(low, high, measure_of(m.group("measure"))))
            taken.append(m.span())
    for m in _between().finditer(text):
        if any(s <= m.start() < e for s, e in taken):
            continue
        a, b = _q(m, lang, "1"), _q(m, lang)
        if a is None or b is None or b[0] < a[0]:
            continue
        measure = b[1] or a[1]
        out.append(Range(a[0], b[0], measure))
        taken.append(m.span())
    for m in _range_word().finditer(text):
        if any(s <= m.start("num") < e for s, e in taken):
            continue
        got = _q(m, lang)
        if got is None:
            continue
        value, measure = got
        word = m.group("word").lower()
        if pattern("after_span").fullmatch(word):
            if measure in _DURATION_DAYS:
                out.append(Range(value, math.inf, measure, low_open=True))
                taken.append(m.span())
            continue
        if pattern("up_to").fullmatch(word):
            out.append(Range(-math.inf, value, measure))
        elif pattern("over").fullmatch(word):
            out.append(Range(value, math.inf, measure, low_open=True))
        else:
            out.append(Range(-math.inf, value, measure, high_open=True))
        taken.append(m.span())
    for m in _range_after().finditer(text):
        if any(s <= m.start("num") < e for s, e in taken):
            continue
        got = _q(m, lang)
        if got is not None:
            out.append(Range(got[0], math.inf, got[1]))
    return out


# ------------------------------------------------------------------------------------- dates


@functools.cache
def _months() -> dict[str, int]:
    """Every month's name in every language, in lower case → its number ("märz" → 3)."""
    return {w: int(n) for w, n in table("months").items()}


_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_NUMERIC = re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b")
_CJK_DATE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*日")


@functools.cache
def _day_month() -> re.Pattern[str]:
    """ "1 February 2026", "31st March" """
    month, th = _names(list(_months())), alternation("ordinal_suffix")
    return re.compile(rf"\b(\d{{1,2}}){th}?\.?\s+({month})\.?(?:\s+(\d{{4}}))?", re.I)


@functools.cache
def _month_day() -> re.Pattern[str]:
    """ "February 1, 2026", "March 1st" """
    month, th = _names(list(_months())), alternation("ordinal_suffix")
    return re.compile(rf"\b({month})\.?\s+(\d{{1,2}}){th}?(?:,?\s+(\d{{4}}))?\b", re.I)


@functools.cache
def _latin_month() -> str:
    return _names([m for m in _months() if m.isascii()])


@functools.cache
def _month_in_context() -> re.Pattern[str]:
    """ "you may carry over", "March on": a month's name written in Latin letters is also a word,
    so it names a month only with a day or a year beside it, or after a word that places things
    in time (the list ``time_words``)."""
    month, th = _latin_month(), alternation("ordinal_suffix")
    return re.compile(
        rf"\b\d{{1,2}}{th}?\.?\s+(?:{month})\b|"
        rf"\b(?:{month})\.?\s+\d{{1,4}}{th}?\b|"
        rf"\b{alternation('time_words')}\s+(?:(?:the\s+)?(?:end|start|beginning|middle)\s+of\s+)?"
        rf"(?:{month})\b",
        re.I,
    )


@functools.cache
def _other_month_word() -> re.Pattern[str]:
    """A month's name in another script, which is no other word: "лютого", "märz"."""
    return re.compile(
        rf"(?<!\w)(?:{_names([m for m in _months() if not m.isascii()])})(?!\w)", re.I
    )


def names_a_month(text: str) -> bool:
    """Does the text name a month ("31 March", "by May", "May 2026", "до 15 лютого"), not the
    word a month's name also is ("you may", "to march")?"""
    for m in _month_in_context().finditer(text):
        name = re.search(rf"(?:{_latin_month()})", m.group(0), re.I)
        after = text[m.end() : m.end() + 3]
        if name and not (name.start() and _a_word_not_a_month(name.group(0), after)):
            return True
    return bool(_other_month_word().search(text))


def _a_word_not_a_month(name: str, after: str) -> bool:
    """ "10 may be carried over": a month's name in Latin letters, in lower case, with no year and
    a word after it, is the word ("may"), not the month."""
    return name.isascii() and name.islower() and bool(re.match(r"\s+[a-z]", after))


def dates(text: str, year: int | None = None) -> list[date]:
    """Every date a text states, in order; a date without a year takes ``year`` (or is skipped)."""
    found: list[tuple[int, date]] = []

    def add(pos: int, y: int | None, m: int, d: int) -> None:
        y = y or year
        if y is None:
            return
        with contextlib.suppress(ValueError):
            found.append((pos, date(y, m, d)))

    spans: list[tuple[int, int]] = []
    for m in _ISO.finditer(text):
        add(m.start(), int(m.group(1)), int(m.group(2)), int(m.group(3)))
        spans.append(m.span())
    for m in _NUMERIC.finditer(text):
        add(m.start(), int(m.group(3)), int(m.group(2)), int(m.group(1)))
        spans.append(m.span())
    for m in _day_month().finditer(text):
        if not m.group(3) and _a_word_not_a_month(m.group(2), text[m.end() : m.end() + 3]):
            continue
        add(
            m.start(),
            int(m.group(3)) if m.group(3) else None,
            _months()[m.group(2).lower()],
            int(m.group(1)),
        )
        spans.append(m.span())
    for m in _month_day().finditer(text):
        if any(s <= m.start() < e for s, e in spans):
            continue
        add(
            m.start(),
            int(m.group(3)) if m.group(3) else None,
            _months()[m.group(1).lower()],
            int(m.group(2)),
        )
    for m in _CJK_DATE.finditer(text):
        add(m.start(), int(m.group(1)) if m.group(1) else None, int(m.group(2)), int(m.group(3)))
    return [d for _, d in sorted(found, key=lambda x: x[0])]


def years(text: str) -> list[int]:
    return [int(y) for y in re.findall(r"\b(19\d{2}|20\d{2})\b", text)]


# ------------------------------------------------------------------------------------- versions

_VERSION = re.compile(r"(?<![\w.])v?(\d+)[._](\d+)(?:[._](\d+))?(?![\w.]*\d)")


def versions(text: str) -> list[tuple[int, ...]]:
    """Version numbers ("2.3.1", "v2.4", "2_3_2") as tuples, in order."""
    out = []
    for m in _VERSION.finditer(text):
        parts = tuple(int(g) for g in m.groups() if g is not None)
        if len(parts) >= 2 and not (len(parts) == 2 and 1900 <= parts[0] <= 2100):
            out.append(parts)
    return out
