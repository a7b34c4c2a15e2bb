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


def _customer(text: str) -> str | None:
    m = _CUSTOMER.search(text)
    return (m.group(1) or m.group(2)) if m else None


def is_follow_up(message: str) -> bool:
    if _CONNECTIVE.match(message):
        return True
    content = tokenize(message, detect_lang(message))
    if len(content) <= 1:
        return True
    return bool(_PRONOUN.search(message)) and len(content) <= 4 and not _customer(message)


def _merge(previous: str, message: str) -> str:
    """The previous question with the message's values in place of the old ones of the same kind,
    and the message's other words after it."""
    merged = previous
    new = [q for q in quantities(message) if q.unit]
    for old in sorted(quantities(previous), key=lambda q: -q.start):
        replacement = next((q for q in new if q.comparable(old)), None)
        if replacement is not None and old.unit:
            merged = (
                merged[: old.start]
                + message[replacement.start : replacement.end].strip()
                + merged[old.end :]
            )
    rest = _CONNECTIVE.sub("", message).strip(" ,，、")
    return f"{merged.rstrip(' ?？.')} — {rest}" if rest else merged


def resolve(message: str, history: Sequence[Message]) -> Resolved:
    """``message`` read against the earlier user messages of ``history`` (each resolved in turn)."""
    earlier: Resolved | None = None
    for m in history:
        if m.role == "user":
            earlier = _resolve_one(m.text, earlier)
    return _resolve_one(message, earlier)


def _resolve_one(message: str, earlier: Resolved | None) -> Resolved:
    text = message.strip()
    own = _customer(text)
    if earlier is None or not is_follow_up(text):
        return Resolved(text, False, own)
    question = _merge(earlier.question, text)
    customer = own or earlier.customer
    if customer and not _customer(question):
        question += f" (customer {customer})"
    return Resolved(question, True, customer)
