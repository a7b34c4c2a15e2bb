"""Whose rule is this? The asker's groups choose the rule that applies to them.

Ingest ties every chunk to the audience its document or section is written for
(``ingest/audience.py``: metadata, title, a scope sentence, a heading). Here that meets the asker:
their audiences come from their groups (a ``contractors`` member is a contractor; everyone not in
a group outside the staff is an employee). A passage for another audience gives way when one that
applies to the asker answers too; a sentence whose subject is an audience ("Contractors do not
receive the employee per diem") counts for that audience. In a channel whose members belong to
different audiences, the rule for each is given, labelled with its audience.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ingest.audience import AUDIENCE_TERMS, named

# Groups whose members are not staff: everyone else is an employee as well.
OUTSIDE_STAFF = frozenset({"contractors"})


def audiences_of(groups: Iterable[str]) -> frozenset[str]:
    """The audiences of someone in ``groups``."""
    groups = {g.lower() for g in groups}
    out = {a for a in AUDIENCE_TERMS if a in groups or a.rstrip("s") in groups}
    if not groups & OUTSIDE_STAFF:
        out.add("employees")
    return frozenset(out)


def asked_for(question: str, asker: frozenset[str]) -> frozenset[str]:
    """Whose rules a question is about: the asker's own and any audience it names ("what can
    contractors claim?", "which applies to contractors?")."""
    return asker | named(question)


def unit_audience(sentence: str, passage: Sequence[str]) -> frozenset[str]:
    """The audience a sentence is for: the one it names as its subject ("Contractors do not …",
    "For employees, …"), else its passage's."""
    head = re.sub(r"^[\s\-–•·*\d.)]+", "", sentence)[:40]
    subject = named(head)
    return subject or frozenset(passage)


def applies(audience: Iterable[str], asker: frozenset[str]) -> bool:
    """Does a rule written for ``audience`` (empty: everyone) apply to someone in ``asker``?"""
    audience = frozenset(audience)
    return not audience or bool(audience & asker)


def label(audience: str) -> str:
    return audience.capitalize()
