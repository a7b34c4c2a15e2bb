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

from agent.phrasing import pattern

# ------------------------------------------------------------------------------------- units

_MEASURE_WORDS: dict[str, tuple[str, ...]] = {
    "eur": ("eur", "euro", "euros", "€", "евро", "євро", "欧元", "ユーロ"),
    "usd": ("usd", "$", "dollar", "dollars", "доларів", "долларов", "美元"),
    "pln": ("pln", "zł", "zloty"),
    "uah": ("uah", "грн", "гривень", "гривня", "гривні"),
    "cny": ("cny", "rmb", "元", "人民币", "юанів", "юаней"),
    "%": ("%", "percent", "per cent", "prozent", "відсотків", "процентов", "процентів"),
    "minute": (
        "minute",
        "minutes",
        "min",
        "mins",
        "minuten",
        "хвилин",
        "хвилини",
        "минут",
        "минуты",
        "分钟",
        "分",
    ),
    "hour": (
        "hour",
        "hours",
        "h",
        "hrs",
        "stunde",
        "stunden",
        "std",
        "годин",
        "години",
        "година",
        "часов",
        "часа",
        "час",
        "小时",
        "時間",
    ),
    "day": (
        "day",
        "days",
        "tag",
        "tage",
        "tagen",
        "днів",
        "дні",
        "день",
        "дня",
        "дней",
        "天",
        "日",
        "日間",
    ),
    "week": (
        "week",
        "weeks",
        "woche",
        "wochen",
        "тижнів",
        "тижні",
        "тиждень",
        "недель",
        "недели",
        "неделя",
        "周",
        "週",
        "週間",
    ),
    "month": (
        "month",
        "months",
        "monat",
        "monate",
        "monaten",
        "місяців",
        "місяці",
        "місяць",
        "месяцев",
        "месяца",
        "месяц",
        "个月",
        "月",
        "ヶ月",
        "か月",
    ),
    "year": (
        "year",
        "years",
        "jahr",
        "jahre",
        "jahren",
        "років",
        "роки",
        "рік",
        "лет",
        "года",
        "год",
        "年",
    ),
    "km": ("km", "kilometre", "kilometres", "kilometer", "kilometers", "км", "公里"),
    "night": ("night", "nights", "nacht", "nächte", "ночей", "ночі", "晚", "泊"),
    "seat": ("seat", "seats", "user", "users", "licence", "licences", "license", "licenses"),
}
_MEASURE_OF = {w: measure for measure, words in _MEASURE_WORDS.items() for w in words}
# Money is an open set: any currency sign and any ISO 4217 code beside a number, besides the
# currencies named in words above. The signs are Unicode's category Sc (Unicode 14, as Python's
# unicodedata lists it; a test checks this copy); a sign that stands for one currency counts as
# that currency's code ("£12" and "12 GBP" compare), any other as itself.
CURRENCY_SIGNS = "$¢£¤¥֏؋߾߿৲৳৻૱௹฿៛₠₡₢₣₤₥₦₧₨₩₪₫€₭₮₯₰₱₲₳₴₵₶₷₸₹₺₻₼₽₾₿⃀꠸﷼﹩＄￠￡￥￦𑿝𑿞𑿟𑿠𞋿𞲰"
_SIGN_CODES = {"£": "gbp", "￡": "gbp", "＄": "usd", "₹": "inr", "₩": "krw", "￦": "krw"}
_SIGN_CODES |= {"₽": "rub", "₴": "uah", "₺": "try", "₪": "ils", "₫": "vnd", "₱": "php"}
_SIGN_CODES |= {"₦": "ngn", "฿": "thb", "₸": "kzt", "₼": "azn", "₾": "gel", "֏": "amd"}
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
for _sign in CURRENCY_SIGNS:
    _MEASURE_OF.setdefault(_sign, _SIGN_CODES.get(_sign, _sign))
for _code in ISO_4217:
    _MEASURE_OF.setdefault(_code.lower(), _code.lower())
CURRENCIES = frozenset({"eur", "usd", "pln", "uah", "cny", *(c.lower() for c in ISO_4217)}) | {
    m for m in map(_MEASURE_OF.get, CURRENCY_SIGNS) if m
}  # the measures that are money
_CODES = "|".join(sorted(ISO_4217))
_SIGNS = re.escape(CURRENCY_SIGNS)
# a sign, or a code before its number ("CHF 1'200", "USD 12.50"): three capitals, which
# ``_pre_measure`` checks against the codes (one alternation of 180 codes in each pattern that
# reads a value cost 25 ms of compiling at every start)
_PRE = rf"(?P<pre>[{_SIGNS}]|(?<![^\W\d_])(?-i:[A-Z]{{3}})(?=\s?\d))"
_PRE_CODES = ISO_4217 - _WORDLIKE_CODES


def _pre_measure(pre: str | None) -> str:
    """The money a sign or code before a number says; '' for none (or three capitals that are
    no currency code: "SLA 99.9%")."""
    if not pre:
        return ""
    if pre in _PRE_CODES:
        return pre.lower()
    return _MEASURE_OF.get(pre, "") if pre in CURRENCY_SIGNS else ""


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
# units written as words or signs, in any case; ISO codes in capitals only ("12 all" is no money)
# every word that names a unit of measure, in every language above ("days", "EUR", "%")
UNIT_WORDS = frozenset(
    {w for words in _MEASURE_WORDS.values() for w in words} | set(CURRENCY_SIGNS)
)
_MEASURE = "|".join(sorted(map(re.escape, UNIT_WORDS), key=len, reverse=True))
_MEASURE += f"|(?-i:{_CODES})"
# "3 business days", "10 unused vacation days", "4 weeks' paid leave": up to two words between a
# number and its unit
_BETWEEN_WORD = r"(?:[^\W\d_][\w'’-]*\s){0,2}?"
_QUANTITY = re.compile(
    rf"{_PRE}?\s?(?P<num>{_NUMBER})(?P<k>[kK](?![^\W\d_]))?"
    rf"(?:[\s-]?{_BETWEEN_WORD}(?P<measure>{_MEASURE})(?![^\W\d_]))?",
    re.I,
)
_ONES = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = [
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
# English counts from one to ninety-nine ("sixteen weeks", "twenty-five days"), and a hundred
WORD_NUMBERS = {w: n for n, w in enumerate(_ONES, 1)} | {w: n for n, w in enumerate(_TEENS, 10)}
for _t, _tens in enumerate(_TENS, 2):
    WORD_NUMBERS[_tens] = 10 * _t
    WORD_NUMBERS |= {f"{_tens}-{w}": 10 * _t + n for n, w in enumerate(_ONES, 1)}
WORD_NUMBERS["hundred"] = 100
# counts in words in the other languages Footnote answers (German, Ukrainian, Russian), in the
# forms a count takes before a unit ("zwei Wochen", "два тижні", "пять дней")
_OTHER_WORD_NUMBERS = {
    1: "ein eine einen einem einer один одна одно одну одного одної одні",
    2: "zwei два дві две двох двух",
    3: "drei три трьох трёх",
    4: "vier чотири четыре",
    5: "fünf п'ять п’ять пять",
    6: "sechs шість шесть",
    7: "sieben сім семь",
    8: "acht вісім восемь",
    9: "neun дев'ять дев’ять девять",
    10: "zehn десять",
    12: "zwölf дванадцять двенадцать",
    14: "vierzehn чотирнадцять четырнадцать",
    30: "dreißig тридцять тридцать",
}
COUNT_WORDS = dict(WORD_NUMBERS) | {
    w: n for n, words in _OTHER_WORD_NUMBERS.items() for w in words.split()
}
# "the fifth full year" says 5 as "five years" does: ordinals are matched as the number they order
ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "fifteenth": 15,
    "twentieth": 20,
    "thirtieth": 30,
}
# the counts as a pattern: English tens with their ones ("twenty-five") written once, not 72 times
_COUNT_WORD = "|".join(
    [
        f"(?:{'|'.join(_TENS)})(?:-(?:{'|'.join(_ONES)}))?",
        *sorted(
            (re.escape(w) for w in COUNT_WORDS if "-" not in w and w not in _TENS),
            key=len,
            reverse=True,
        ),
    ]
)
# a count in words right before its unit ("two weeks"): "two hotel nights" is left to
# ``numbers_said``, so that a value to order by stays a value the text states as one
_WORD_QUANTITY = re.compile(
    rf"(?<![^\W\d_])(?P<num>{_COUNT_WORD})[\s-](?P<measure>{_MEASURE})(?![^\W\d_])", re.I
)


_ORDINAL = "|".join(sorted(ORDINALS, key=len, reverse=True))
_SAID = re.compile(
    rf"(?<![^\W\d_])(?P<num>{_COUNT_WORD}|{_ORDINAL}|\d{{1,3}}(?:st|nd|rd|th))(?![^\W\d_])"
    rf"(?:[\s-]{_BETWEEN_WORD}(?P<measure>{_MEASURE})(?![^\W\d_]))?",
    re.I,
)


def numbers_said(text: str, lang: str = "en", *, ordinals: bool = True) -> list[Quantity]:
    """Every number a text states with its unit, however written: "5 years", "five years", "the
    5th year" and "the fifth full year" all say 5 years, so a question and a rule that write the
    number differently still meet."""
    out = quantities(text, lang)
    taken = {q.start for q in out}
    for m in _SAID.finditer(text):
        if m.start() in taken:
            continue
        word = m.group("num").lower()
        if not ordinals and word not in COUNT_WORDS:
            continue  # "the first day" is a day, not a span of one day
        value = COUNT_WORDS.get(word) or ORDINALS.get(word) or int(re.sub(r"\D", "", word) or 0)
        measure = _MEASURE_OF.get((m.group("measure") or "").lower(), "")
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
    while found := _QUANTITY.search(text, pos):
        m = found
        between = text[m.end("num") : m.start("measure")] if m.group("measure") else ""
        sign = m.group("measure")
        if sign and sign in CURRENCY_SIGNS and re.search(r"[^\W\d_]", between):
            # a sign is the unit of the number it touches: "€40 and $50" is 40 EUR, then $50
            short = _QUANTITY.match(text, m.start(), m.end("k") if m.group("k") else m.end("num"))
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
        measure = _MEASURE_OF.get((m.group("measure") or "").lower(), "")
        following = text[m.end("k") if m.group("k") else m.end("num") :]
        # "50k a year", "20 EUR per day": the unit after "a"/"per" is what the value is counted
        # in, not its own unit
        if m.group("measure") and re.match(rf"\s*{_words('per')}\s", following, re.I):
            measure = ""
        if pre:
            measure = pre
        start = m.start("pre") if pre else m.start("num")
        out.append(Quantity(value, measure, start, m.end()))
    for m in _WORD_QUANTITY.finditer(text):
        out.append(
            Quantity(
                float(COUNT_WORDS[m.group("num").lower()]),
                _MEASURE_OF[m.group("measure").lower()],
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
# "within a week", "for an hour": a duration of one that names no number
_ONE_MEASURE = re.compile(
    r"\b(?:within|in|for|after|about|over|under|once|up to|at least)\s+(?:a|an)\s+"
    r"(?:(?:full|whole|calendar|working|business)\s+)?(?P<measure>minute|hour|day|week|month|year)\b",
    re.I,
)


# German writes the kind of day into one word with the unit: "zwei Arbeitstage", "10 Werktagen"
_COMPOUND_MEASURE = {"tag": "day", "tage": "day", "tagen": "day", "woche": "week", "wochen": "week"}
_COMPOUND_MEASURE |= {"monat": "month", "monate": "month", "monaten": "month", "stunden": "hour"}
_COMPOUND_DURATION = re.compile(
    rf"(?<![^\W\d_])(?P<num>\d{{1,3}}|{_COUNT_WORD})\s+[A-ZÄÖÜ][a-zäöüß]+?"
    rf"(?P<measure>{'|'.join(sorted(_COMPOUND_MEASURE, key=len, reverse=True))})\b",
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
    for m in _COMPOUND_DURATION.finditer(text):
        raw = m.group("num")
        count = float(raw) if raw.isdigit() else float(COUNT_WORDS[raw.lower()])
        out.append(
            Quantity(count, _COMPOUND_MEASURE[m.group("measure").lower()], m.start(), m.end())
        )
    for m in _ONE_MEASURE.finditer(text):
        out.append(Quantity(1.0, m.group("measure").lower(), m.start("measure") - 2, m.end()))
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


_Q = rf"{_PRE}?\s?(?P<num>{_NUMBER})(?:\s?{_BETWEEN_WORD}(?P<measure>{_MEASURE})(?![^\W\d_]))?"


def _q(m: re.Match[str], lang: str, suffix: str = "") -> tuple[float, str] | None:
    value = parse_number(m.group("num" + suffix), lang)
    if value is None:
        return None
    measure = _MEASURE_OF.get((m.group("measure" + suffix) or "").lower(), "")
    measure = _pre_measure(m.group("pre" + suffix)) or measure
    return value, measure


# The words around a value, per language, are lists of agent/patterns/: a range's bound
# (``up_to``, ``over``, ``under``, ``or_more``, ``after_span``), what a value is counted per
# (``per``), the word between a range's ends (``range_to``).


def _words(name: str) -> str:
    return f"(?:{pattern(name).pattern})"


@functools.cache
def _between() -> re.Pattern[str]:
    """ "1,001–10,000 EUR", "5 to 10 days": two values and the word or dash between them."""
    first = _Q.replace("(?P<pre>", "(?P<pre1>").replace("(?P<num>", "(?P<num1>")
    first = first.replace("(?P<measure>", "(?P<measure1>")
    return re.compile(rf"{first}\s*(?:–|—|-|~|{_words('range_to')})\s*{_Q}", re.I)


@functools.cache
def _range_word() -> re.Pattern[str]:
    """ "up to 1,000 EUR", "over 5 hours", "after the first 24 months": a bound, then a value."""
    word = "|".join(_words(n) for n in ("up_to", "over", "under", "after_span"))
    return re.compile(rf"(?P<word>{word})\s+(?:the\s+)?(?:(?:first|next)\s+)?{_Q}", re.I)


@functools.cache
def _range_after() -> re.Pattern[str]:
    """ "6 hours or more": a value, then what opens it upwards."""
    return re.compile(rf"{_Q}\s+{_words('or_more')}", re.I)


@functools.cache
def _unit_first() -> re.Pattern[str]:
    """ "in months 13 to 24": a schedule names its unit before the numbers."""
    return re.compile(
        rf"(?<![^\W\d_])(?P<measure>{_MEASURE})\s+(?P<num1>{_NUMBER})\s*"
        rf"(?:–|—|-|{_words('range_to')})\s*(?P<num>{_NUMBER})(?![\d.,]*\d)",
        re.I,
    )


_MONEY_WORD = re.compile(
    rf"(?<![^\W\d_])(?:{'|'.join(re.escape(w) for u in _MEASURE_WORDS if u in CURRENCIES or u == '%' for w in _MEASURE_WORDS[u])}|(?-i:{'|'.join(sorted(ISO_4217 - _WORDLIKE_CODES))}))"
    rf"(?![^\W\d_])|[{_SIGNS}]",
    re.I,
)


def measure_named(text: str) -> str:
    """The currency or percentage a table's header names ("Order value (EUR, net)"), which its
    cells' bare figures are in; '' when it names none."""
    m = _MONEY_WORD.search(text)
    return _MEASURE_OF[m.group(0).lower()] if m else ""


def ranges(text: str, lang: str = "en") -> list[Range]:
    """The ranges a text states ("up to 1,000 EUR", "1,001–10,000 EUR", "6 hours or more")."""
    out: list[Range] = []
    taken: list[tuple[int, int]] = []
    for m in _unit_first().finditer(text):
        if len(m.group("measure")) < 4:
            continue  # "min 78,000 – 96,000" is a minimum, not minutes
        low, high = parse_number(m.group("num1"), lang), parse_number(m.group("num"), lang)
        if low is not None and high is not None and low <= high:
            out.append(Range(low, high, _MEASURE_OF[m.group("measure").lower()]))
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

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate(
    [
        "january jan januar января січня январь січень",
        "february feb februar февраля лютого февраль лютий",
        "march mar märz maerz марта березня март березень",
        "april apr апреля квітня апрель квітень",
        "may mai мая травня май травень",
        "june jun juni июня червня июнь червень",
        "july jul juli июля липня июль липень",
        "august aug августа серпня август серпень",
        "september sep sept septembre сентября вересня сентябрь вересень",
        "october oct oktober октября жовтня октябрь жовтень",
        "november nov ноября листопада ноябрь листопад",
        "december dec dezember декабря грудня декабрь грудень",
    ],
    1,
):
    for _name in _names.split():
        _MONTHS[_name] = _number

_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\.?\s+({_MONTH})\.?(?:\s+(\d{{4}}))?", re.I)
_MONTH_DAY = re.compile(
    rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.I
)
_NUMERIC = re.compile(r"\b(\d{1,2})\.(\d{1,2})\.(\d{4})\b")
_CJK_DATE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*日")


# "you may carry over", "March on": a month's name written in Latin letters is also a word, so it
# names a month only with a day or a year beside it, or after a word that places things in time
_TIME_WORD = (
    r"(?:in|by|until|till|before|after|from|since|of|through|during|each|every|next|last|this|"
    r"early|mid|late|end of|im|bis|ab|seit|vor|nach|ende|zum)"
)
_LATIN_MONTH = "|".join(sorted((m for m in _MONTHS if m.isascii()), key=len, reverse=True))
_MONTH_IN_CONTEXT = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\.?\s+(?:{_LATIN_MONTH})\b|"
    rf"\b(?:{_LATIN_MONTH})\.?\s+\d{{1,4}}(?:st|nd|rd|th)?\b|"
    rf"\b{_TIME_WORD}\s+(?:(?:the\s+)?(?:end|start|beginning|middle)\s+of\s+)?(?:{_LATIN_MONTH})\b",
    re.I,
)
_OTHER_MONTH = "|".join(sorted((m for m in _MONTHS if not m.isascii()), key=len, reverse=True))
_OTHER_MONTH_WORD = re.compile(rf"(?<!\w)(?:{_OTHER_MONTH})(?!\w)", re.I)


def names_a_month(text: str) -> bool:
    """Does the text name a month ("31 March", "by May", "May 2026", "до 15 лютого"), not the
    word a month's name also is ("you may", "to march")?"""
    for m in _MONTH_IN_CONTEXT.finditer(text):
        name = re.search(rf"(?:{_LATIN_MONTH})", m.group(0), re.I)
        after = text[m.end() : m.end() + 3]
        if name and not (name.start() and _a_word_not_a_month(name.group(0), after)):
            return True
    return bool(_OTHER_MONTH_WORD.search(text))


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
    for m in _DAY_MONTH.finditer(text):
        if not m.group(3) and _a_word_not_a_month(m.group(2), text[m.end() : m.end() + 3]):
            continue
        add(
            m.start(),
            int(m.group(3)) if m.group(3) else None,
            _MONTHS[m.group(2).lower()],
            int(m.group(1)),
        )
        spans.append(m.span())
    for m in _MONTH_DAY.finditer(text):
        if any(s <= m.start() < e for s, e in spans):
            continue
        add(
            m.start(),
            int(m.group(3)) if m.group(3) else None,
            _MONTHS[m.group(1).lower()],
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
