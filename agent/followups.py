"""Short follow-ups read against the conversation: "what about London?", "and for contractors?",
"And if the ride takes five hours?", "Can they still get a refund?".

A message is a follow-up when it opens with a connective ("and", "what about", "а", "und",
"那"), leans on a pronoun for its subject ("they", "it", "вони", "sie", "他们"), or is too short to
stand alone. It is then read as the previous question with the new message's parts in place:
a value of the same kind replaces the old one (five hours for three), the rest of the message is
added, and the customer the previous turn was about is carried over when the message refers to
them. Anything else stands alone: the CRM customer of one turn never sticks to the next.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent.phrasing import alternation, pattern
from agent.terms import SITUATED
from agent.turns import Message
from agent.values import quantities
from ingest.languages import detect_lang, tokenize


@functools.cache
def _opens() -> re.Pattern[str]:
    """A follow-up's opening word ("and", "what about", "а якщо", "那"), as a whole word: the
    list ``follow_up_opens`` of agent/patterns/."""
    return re.compile(rf"^\s*{alternation('follow_up_opens')}(?=[\s,，、?？]|$)", re.I)


_CUSTOMER = re.compile(
    r"\b(?:customer|client|account)\s*(?:no\.?|number|id)?\s*#?\s*(\d{3,})\b|#(\d{3,})\b", re.I
)


@functools.cache
def _courtesies() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A greeting or thanks opening a message, and thanks closing it (the lists ``greeting``
    and ``thanks`` of agent/patterns/)."""
    # "Thanks for the list. What …" thanks for something: only thanks before a stop (or alone)
    opening = (
        rf"(?:{alternation('greeting')}(?![\w-])|"
        rf"{alternation('thanks')}(?=\s*(?:[,，、!！.。:-]|$)))"
    )
    return (
        re.compile(rf"^\s*{opening}[\s,，、!！.。:-]*", re.I),
        re.compile(rf"(?<=[.!?。！？])\s*{alternation('thanks')}(?!\w)[\s!！.。]*$", re.I),
    )


def _stripped(message: str) -> str:
    opening, closing = _courtesies()
    rest, before = closing.sub("", message, count=1), ""
    while rest != before:  # "Hi, thanks. When …?"
        rest, before = opening.sub("", rest, count=1), rest
    return rest


def without_courtesies(message: str) -> str:
    """The message without the greeting or thanks it opens with ("Hello, I have some questions
    about …", "Thanks! And for contractors?") and the thanks it closes with ("… ? Thanks!"): they
    ask nothing, and their words, which no document uses, were weighed as the question's, taken
    as the story around it, and carried into every follow-up. A message that is only courtesies
    stays as it is (``only_courtesies``: it is smalltalk)."""
    rest = _stripped(message)
    return rest if rest.strip() else message


def only_courtesies(message: str) -> bool:
    """ "Hi!", "Thanks a lot!", "Hello there": a message that greets or thanks and asks nothing."""
    return bool(message.strip()) and not _stripped(message).strip()


@dataclass(frozen=True)
class Resolved:
    question: str  # the message as a question that stands alone
    follow_up: bool
    customer: str | None = None  # the customer it is about, said or carried over


def customer_in(text: str) -> str | None:
    """The customer number a message names ("customer 4502", "#4502")."""
    m = _CUSTOMER.search(text)
    return (m.group(1) or m.group(2)) if m else None


def is_follow_up(message: str) -> bool:
    if _opens().match(message):
        return True
    content = tokenize(message, detect_lang(message))
    if len(content) <= 1:
        return True
    return (
        bool(pattern("points_back").search(message))
        and len(content) <= 4
        and not customer_in(message)
    )


def _merge(previous: str, message: str) -> str:
    """The previous question with the message's values in place of the old ones of the same kind,
    and the message's other words after it."""
    merged = previous
    new = [q for q in quantities(message) if q.measure]
    for old in sorted(quantities(previous), key=lambda q: -q.start):
        replacement = next((q for q in new if q.comparable(old)), None)
        if replacement is not None and old.measure:
            merged = (
                merged[: old.start]
                + message[replacement.start : replacement.end].strip()
                + merged[old.end :]
            )
    rest = _opens().sub("", message).strip(" ,，、")
    return f"{merged.rstrip(' ?？.')}{SITUATED}{rest}" if rest else merged


# "a P2 ticket", "the deposit for a flat", "my laptop": what an earlier question was about
_TOPIC = re.compile(
    r"\b(?:the|a|an|my|our|your|this|that)\s+((?:[\w%-]+\s+){0,2}?[\w%-]+"
    r"(?:\s+(?:for|of)\s+(?:the|a|an|my|our)?\s*[\w-]+)?)"
    r"(?=\s+(?:when|if|after|before|while|that|who|which|in|on|at|to|from|with|is|are|be)\b|\s*[?？.,]|$)",
    re.I,
)
_NAME = re.compile(r"(?<=[\s(])[A-ZÀ-ÖØ-ÞА-ЯІЇЄҐ][\w-]+")


def _topic(question: str) -> str | None:
    """The thing an earlier question was about: the phrase with an identifier or name in it, else
    the last noun phrase that has an article ("the deposit for a flat")."""
    phrases = [m.group(0) for m in _TOPIC.finditer(question)]
    if not phrases:
        return None
    marked = [p for p in phrases if re.search(r"\d|[A-Z]{2}|\b[A-Z]\w*\d", p)]
    return (marked or phrases)[-1]


def _renamed(previous: str, message: str) -> str | None:
    """ "А Business?" after a question about the Team plan: the previous question with the new name
    in place of its own, when the message is nothing but that name."""
    rest = _opens().sub("", message).strip(" ,，、?？.")
    if not rest or len(rest.split()) > 2 or not rest[:1].isupper():
        return None
    old = _NAME.findall(previous)  # not the sentence's first word
    if len(old) != 1:
        return None
    return previous.replace(old[0], rest, 1)


def _substituted(previous: str, message: str) -> str | None:
    """ "And by when should it be fixed?" after "How fast do we reply to a P2 ticket?": the
    message as its own question, with what "it" stood for written out."""
    rest = _opens().sub("", message).strip(" ,，、")
    topic = _topic(previous)
    if (
        topic is None
        or not pattern("follow_up_asks").match(rest)
        or not pattern("it_refers").search(rest)
    ):
        return None
    out = pattern("it_refers").sub(topic, rest, count=1)
    return out[:1].upper() + out[1:]


def _for_customer(message: str, customer: str | None) -> str | None:
    """ "Can they still get a refund?" after a question about customer 4502: asked of them."""
    rest = _opens().sub("", message).strip(" ,，、")
    if (
        not customer
        or customer_in(rest)
        or not pattern("follow_up_asks").match(rest)
        or not pattern("they_refers").search(rest)
    ):
        return None
    out = pattern("they_refers").sub(f"customer {customer}", rest, count=1)
    out = re.sub(r"\btheir\b", f"customer {customer}'s", out, flags=re.I)
    return out[:1].upper() + out[1:]


def resolve(message: str, history: Sequence[Message]) -> Resolved:
    """``message`` read against the earlier user messages of ``history`` (each resolved in turn)."""
    earlier: Resolved | None = None
    for m in history:
        if m.role == "user":
            earlier = _resolve_one(m.text, earlier)
    return _resolve_one(message, earlier)


def _resolve_one(message: str, earlier: Resolved | None) -> Resolved:
    text = without_courtesies(message.strip())
    own = customer_in(text)
    if earlier is None or not is_follow_up(text):
        return Resolved(text, False, own)
    customer = own or earlier.customer
    question = (
        _for_customer(text, customer)
        or _renamed(earlier.question, text)
        or _substituted(earlier.question, text)
        or _merge(earlier.question, text)
    )
    if customer and not customer_in(question):
        question += f" (customer {customer})"
    return Resolved(question, True, customer)
