"""Who a document or a section is written for, read from the document itself.

Footnote ties each chunk to the audience its text is for, so that the answer step can give an
asker the rule that applies to them. An audience is named by the document: its metadata
(``audience: contractors``), its title ("Expense Policy for Contractors"), a scope sentence near
its start ("This policy applies to independent contractors …"), or the heading of a section
("8. Contractors and guests"); a document readable only by an audience's group is for that
audience too. Text that names none is for everyone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ingest.documents import Section
from ingest.sentences import sentences

# Audience → the words that name it, in the languages Footnote reads. Only audiences that
# exclude each other: a rule for contractors is not a rule for employees, and the other way round.
AUDIENCE_TERMS: dict[str, tuple[str, ...]] = {
    "contractors": (
        "contractor",
        "contractors",
        "freelancer",
        "freelancers",
        "agency staff",
        "підрядник",
        "підрядники",
        "підрядників",
        "подрядчик",
        "подрядчики",
        "подрядчиков",
        "auftragnehmer",
        "freiberufler",
        "承包商",
        "外包人员",
        "契約者",
        "業務委託",
    ),
    "employees": (
        "employee",
        "employees",
        "staff member",
        "staff members",
        "mitarbeiter",
        "mitarbeitende",
        "працівник",
        "працівники",
        "працівників",
        "сотрудник",
        "сотрудники",
        "сотрудников",
        "员工",
        "职员",
        "従業員",
        "社員",
    ),
}

_TERM = {
    audience: re.compile(
        r"(?<![\w-])(?:"
        + "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
        + r")(?![\w-])",
        re.I,
    )
    for audience, terms in AUDIENCE_TERMS.items()
}
APPLIES = re.compile(
    r"\b(?:appl(?:y|ies)|is\s+(?:only\s+)?for|are\s+(?:only\s+)?for)\b|\bgilt\s+(?:nur\s+)?für\b|"
    r"поширюється на|распространяется на|适用于|適用",
    re.I,
)
NOT_APPLIES = re.compile(
    r"\b(?:does|do)\s+not\s+apply\s+to\b|\bnot\s+(?:available|eligible|open)\s+to\b|"
    r"\bgilt\s+nicht\s+für\b|не поширюється на|не распространяется на",
    re.I,
)


def named(text: str) -> frozenset[str]:
    """The audiences a title, heading or sentence names."""
    return frozenset(a for a, pattern in _TERM.items() if pattern.search(text))


def _clauses(text: str) -> list[str]:
    """Sentences (the one splitter, ``ingest.sentences``), cut again at semicolons: a scope often
    says who it covers and who it does not in one sentence."""
    return [c for s in sentences(text) for c in re.split(r"(?<=;)\s+", s)]


def scope_statement(text: str) -> frozenset[str]:
    """The audiences a scope sentence gives ("This policy applies to independent contractors"),
    without those it excludes ("It does not apply to employees")."""
    found: set[str] = set()
    for sentence in _clauses(text):
        negative = NOT_APPLIES.search(sentence)
        positive = APPLIES.search(sentence)
        if positive and not (negative and negative.start() <= positive.start()):
            tail = sentence[positive.end() : positive.end() + 80]
            if negative:
                tail = tail[: max(0, negative.start() - positive.end())]
            found |= named(tail)
    return frozenset(found)


REDIRECT = re.compile(
    r"\b(?:follow|follows|governed by|covered by|see the|instead|their own|a separate)\b|"
    r"\b(?:do|does) not\b|\bgilt (?:für sie )?nicht\b|\bfolgen\b|"
    r"не поширюється|не распространяется|其他|別の",
    re.I,
)


_SCOPE_HEADING = re.compile(
    r"scope|eligib|who (?:this|it) (?:policy )?applies|applies to|who is|who can|"
    r"geltungsbereich|anspruch|сфера|хто має право|кто имеет право|适用范围|対象",
    re.I,
)


def excluded(text: str) -> frozenset[str]:
    """The audiences a text shuts out ("not available to contractors", "does not apply to …")."""
    out: set[str] = set()
    for sentence in _clauses(text):
        m = NOT_APPLIES.search(sentence)
        if m:
            out |= named(sentence[m.end() : m.end() + 80])
    return frozenset(out)


def _sent_elsewhere(text: str) -> frozenset[str]:
    """The audiences a scope sends to another rule ("Contractors do not book their own travel;
    they follow the Expense Policy for Contractors")."""
    out: set[str] = set()
    for sentence in _clauses(text):
        if REDIRECT.search(sentence):
            out |= named(sentence) - {"employees"}
    return frozenset(out)


def document_audience(
    title: str,
    sections: Sequence[Section],
    meta: dict[str, Any],
    acl: Iterable[str],
) -> frozenset[str]:
    """Metadata first, then the title, then a scope sentence in the first sections, then an access
    list that holds only an audience's group."""
    given = meta.get("audience")
    if given:
        values = [given] if isinstance(given, str) else list(given)
        return frozenset(str(v).strip().lower() for v in values if str(v).strip())
    found = named(title)
    if found:
        return found
    # "This policy applies to all employees" is the general case, not a scope: only a statement
    # for another audience ties the document to it.
    # A statement naming employees too ("employees, contractors and interns") is for everyone,
    # unless the scope sends the others elsewhere ("Contractors … follow the Expense Policy for
    # Contractors"): then it is the employees' rule.
    for section in sections[:3]:
        head = section.text[:900]
        stated = scope_statement(head)
        if stated and "employees" not in stated:
            return stated
        if stated == {"employees"}:
            sent = _sent_elsewhere(head)
            if sent:
                return frozenset({"employees"})
    # an eligibility section that shuts an audience out ("Relocation support is not available to
    # contractors") leaves the document to the others
    for section in sections[:12]:
        if _SCOPE_HEADING.search(" ".join(section.path[-1:])):
            shut = excluded(section.text[:1500])
            if shut:
                return frozenset(AUDIENCE_TERMS) - shut
    groups = {g.lower() for g in acl} - {"*"}
    return frozenset(a for a in AUDIENCE_TERMS if groups and groups <= {a, a.rstrip("s")})


def section_audience(path: Sequence[str], document: frozenset[str]) -> frozenset[str]:
    """A section's audience: the audience its headings name, else the document's."""
    return named(" > ".join(path)) or document
