"""Whose rule is this? The asker's groups choose the rule that applies to them.

Ingest ties every chunk to the audience its document or section is written for
(``ingest/audience.py``: metadata, title, a scope sentence, a heading), an open set kept in the
form a directory group is named ("interns", "contractors"). Here that meets the asker, through
their groups:

- a rule for group X applies to the members of X (a group "intern" meets "interns");
- every asker of the directory is staff or outside staff: a rule for staff ("employees") applies
  to everyone whose groups do not mark them as outside staff (the lexicon's outside-staff
  audiences, e.g. "contractors"), so an intern gets the employees' rule where no interns' rule
  says otherwise; someone given no group at all (a public corpus's reader) is neither, and every
  rule is theirs;
- where both apply, the narrower is the asker's own (``narrowest``): an intern's rule is the
  interns' one, and only a channel whose members' own rules differ gets each rule labelled.

A group of the asker counts as an audience when the lexicon sorts people by it (staff and outside
staff) or when the passages at hand are written for it (``written_for``): "engineering" is no
audience until some document is written for engineering. A passage for another audience gives
way when one that applies to the asker answers too; a sentence whose subject is an audience
("Contractors do not receive the employee per diem") counts for that audience.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from ingest.audience import audience_key, named
from ingest.lexicon import lexicon


class Written(Protocol):
    @property
    def audience(self) -> Sequence[str]: ...  # who its text is for; empty: everyone


W = TypeVar("W", bound=Written)


def staff_audience() -> str:
    """The audience every staff member belongs to ("employees")."""
    return lexicon().staff


def audiences_of(groups: Iterable[str], written_for: Iterable[str] = ()) -> frozenset[str]:
    """The audiences of someone in ``groups``: the groups that are audiences — staff and outside
    staff, and those the passages at hand are ``written_for`` — and staff unless a group marks
    them as outside staff. Someone given no group at all, not even their own ``user:<email>``
    (a public corpus's reader; the chat adapters answer only the directory's people), has none:
    every rule may be theirs."""
    groups = list(groups)
    if not groups:
        return frozenset()
    lex = lexicon()
    keys = {audience_key(g) for g in groups if g != "*" and not g.startswith("user:")}
    out = keys & (lex.sorted_audiences | frozenset(written_for))
    if not keys & lex.outside_staff:
        out.add(lex.staff)
    return frozenset(out)


def asked_for(
    question: str, asker: frozenset[str], written_for: Iterable[str] = ()
) -> frozenset[str]:
    """Whose rules a question is about: the asker's own and any audience it names ("what can
    contractors claim?", "which applies to interns?")."""
    return asker | named(question, written_for)


def unit_audience(
    sentence: str, passage: Sequence[str], written_for: Iterable[str] = ()
) -> frozenset[str]:
    """The audience a sentence is for: the one it names as its subject ("Contractors do not …",
    "For interns, …"), else its passage's."""
    head = re.sub(r"^[\s\-–•·*\d.)]+", "", sentence)[:40]
    subject = named(head, frozenset(written_for) | frozenset(passage))
    return subject or frozenset(passage)


def applies(audience: Iterable[str], asker: frozenset[str]) -> bool:
    """Does a rule written for ``audience`` (empty: everyone) apply to someone in ``asker``?"""
    audience = frozenset(audience)
    return not audience or bool(audience & asker)


def readers_audiences(
    passages: Sequence[W], readers: Iterable[Iterable[str]], question: str
) -> frozenset[str]:
    """The audiences of the readers (the asker's groups; in a channel, every member's) and those
    the question names. Every group the passages are written for is an audience here
    ("engineering")."""
    written_for = frozenset(a for p in passages for a in p.audience)
    asker = frozenset().union(*(audiences_of(g, written_for) for g in readers))
    return asked_for(question, asker, written_for)


def applicable(passages: Sequence[W], readers: Iterable[Iterable[str]], question: str) -> list[W]:
    """The passages whose rule applies to the readers or to an audience the question names
    (``readers_audiences``): one written for another audience gives way when one for theirs (or
    for everyone) is there too."""
    asker = readers_audiences(passages, readers, question)
    if not asker:
        return list(passages)  # no audience is known to be the asker's: none gives way
    fits = [p for p in passages if applies(p.audience, asker)]
    return fits if fits else list(passages)


def narrowest(asker: frozenset[str]) -> frozenset[str]:
    """The audiences whose rule is the asker's own: staff's rule gives way to a narrower
    group's ({"interns", "employees"} → {"interns"})."""
    own = asker - {lexicon().staff}
    return own or asker


def told_apart(readers: Iterable[frozenset[str]]) -> frozenset[str]:
    """The audiences whose rules a reply gives one by one, labelled: each reader's own
    (``narrowest``). One audience means one rule serves everyone — a DM always."""
    return frozenset().union(*(narrowest(r) for r in readers))
