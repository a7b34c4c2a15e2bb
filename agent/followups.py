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

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent.turns import Message
from agent.values import quantities
from ingest.languages import detect_lang, tokenize

_CONNECTIVE = re.compile(
    r"^\s*(?:and|and if|and for|and what|and how|what about|how about|what if|also|but|same for|"
    r"or|а|і|й|та|а якщо|а що|а як|и|а если|а что|а как|und|und wenn|was ist mit|wie ist es mit|"
    r"auch|那|那么|还有|如果|那如果|では|じゃあ|それで|それと)(?=[\s,，、?？]|$)",
    re.I,
)
_PRONOUN = re.compile(
    r"\b(?:they|them|their|it|its|that|this|those|these|he|she|him|her|the customer)\b|"
    r"\b(?:вони|їх|їм|це|воно|він|вона|они|их|им|это|оно|он|она|sie|ihnen|ihr|es|das|dies)\b|"
    r"他们|她们|它|这个|那个|该客户",
    re.I,
)
_CUSTOMER = re.compile(
    r"\b(?:customer|client|account)\s*(?:no\.?|number|id)?\s*#?\s*(\d{3,})\b|#(\d{3,})\b", re.I
)


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
    if _CONNECTIVE.match(message):
        return True
    content = tokenize(message, detect_lang(message))
    if len(content) <= 1:
        return True
    return bool(_PRONOUN.search(message)) and len(content) <= 4 and not customer_in(message)


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
    rest = _CONNECTIVE.sub("", message).strip(" ,，、")
    return f"{merged.rstrip(' ?？.')} — {rest}" if rest else merged


_ASKS = re.compile(
    r"\b(?:who|whom|what|which|when|where|why|how|by when|until when|can|could|should|must|do|does|"
    r"is|are|will)\b|хто|що|коли|де|як|скільки|кто|что|когда|где|как|сколько|wer|was|wann|wo|wie|"
    r"谁|什么|何时|哪|怎么|多少|誰|何|いつ|どこ|どう|いくら",
    re.I,
)
_IT = re.compile(r"\b(?:it|that|this)\b(?!\s+(?:is|was)\b\s*\?)", re.I)
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
    rest = _CONNECTIVE.sub("", message).strip(" ,，、?？.")
    if not rest or len(rest.split()) > 2 or not rest[:1].isupper():
        return None
    old = _NAME.findall(previous)  # not the sentence's first word
    if len(old) != 1:
        return None
    return previous.replace(old[0], rest, 1)


def _substituted(previous: str, message: str) -> str | None:
    """ "And by when should it be fixed?" after "How fast do we reply to a P2 ticket?": the
    message as its own question, with what "it" stood for written out."""
    rest = _CONNECTIVE.sub("", message).strip(" ,，、")
    topic = _topic(previous)
    if topic is None or not _ASKS.match(rest) or not _IT.search(rest):
        return None
    out = _IT.sub(topic, rest, count=1)
    return out[:1].upper() + out[1:]


_THEY = re.compile(r"\b(?:they|them|the customer)\b", re.I)


def _for_customer(message: str, customer: str | None) -> str | None:
    """ "Can they still get a refund?" after a question about customer 4502: asked of them."""
    rest = _CONNECTIVE.sub("", message).strip(" ,，、")
    if not customer or customer_in(rest) or not _ASKS.match(rest) or not _THEY.search(rest):
        return None
    out = _THEY.sub(f"customer {customer}", rest, count=1)
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
    text = message.strip()
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
