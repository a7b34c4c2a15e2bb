"""Who a document or a section is written for, read from the document itself.

Footnote ties each chunk to the audience its text is for, so that the answer step can give an
asker the rule that applies to them. Audiences are an open set: an audience is whatever group of
people the document says it is written for — its metadata (``audience: interns``), its title
("Parking Rules for Interns"), a scope sentence near its start ("This policy applies to interns
and working students"), or the heading of a section ("8. Contractors and guests", "For
interns"). The asker side matches an audience to a person through their directory groups
(``agent/scope.py``), so each audience is kept in the form a group would be named: lower case,
plural ("interns", "new hires"), a word of any language mapped to its group ("підрядників" →
"contractors").

The words come from the lexicon (``ingest/words/*.yaml``): the words for staff and outside
staff, every asker being one or the other; the words for other groups of people, which tell a
group from a thing ("applies to interns" names readers, "applies to purchases" does not); and
the phrases of scope sentences. A group the lexicon does not know still counts when the text
makes it people: listed beside a known group ("interns and working students"), followed by
"who …", or at the end of a title ("Handbook for Ferry Pilots"). Text that names no audience is
for everyone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from ingest.documents import Section
from ingest.languages import CJK
from ingest.lexicon import lexicon
from ingest.sentences import sentences

MAX_GROUP_WORDS = 3  # a group's name is short: a longer phrase after "for" is a subject
_TRAILER = re.compile(r"\s*(?:\(.*\)|[-–—|:]\s.*|\d{4}.*)$")  # "(2026)", " – Berlin", "2026"


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[_\-‐–]+", " ", text.lower()).split()).strip(" .,:;'’\"")


def _pattern(phrases: Iterable[str], *, prefix: bool = False) -> re.Pattern[str] | None:
    """One alternation of ``phrases``, longest first, each bounded by non-word characters where
    its script has word boundaries (Chinese and Japanese have none). ``prefix``: stems, open at
    the end ("eligib" matches "eligibility")."""
    alternatives = []
    for phrase in sorted(set(phrases), key=len, reverse=True):
        body = r"\s+".join(re.escape(w) for w in phrase.split())
        if phrase[:1].isalnum() and not CJK.match(phrase[:1]):
            body = r"(?<![\w-])" + body
        if not prefix and phrase[-1:].isalnum() and not CJK.match(phrase[-1:]):
            body += r"(?![\w-])"
        alternatives.append(body)
    return re.compile("|".join(alternatives), re.I) if alternatives else None


@functools.cache
def _phrases(name: str, prefix: bool = False) -> re.Pattern[str] | None:
    return _pattern(lexicon().phrases[name], prefix=prefix)


@functools.cache
def _forms(everyone: bool) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """The words for staff and outside staff (``everyone``: for every group the lexicon knows),
    and the audience each names."""
    lex = lexicon()
    forms = lex.forms if everyone else lex.sorted_forms
    return _pattern(forms), {_norm(f): a for f, a in forms.items()}


def _found(text: str, everyone: bool) -> frozenset[str]:
    pattern, audience = _forms(everyone)
    if pattern is None:
        return frozenset()
    return frozenset(audience[_norm(m.group())] for m in pattern.finditer(text))


def _plural(words: str) -> str:
    """ "intern" → "interns", "deputy" → "deputies": English plurals, so that a document's
    "Interns" and a group named "intern" meet. Other scripts, short names ("hr") and words
    that are no count nouns ("engineering", "staff") stay as they are."""
    head, _, _ = words.rpartition(" ")
    last = words.rsplit(" ", 1)[-1]
    if not re.fullmatch(r"[a-z]{3,}", last) or last.endswith(("s", "ing", "ff")):
        return words
    if re.search(r"[^aeiou]y$", last):
        last = last[:-1] + "ies"
    elif re.search(r"(?:ch|sh|x|z)$", last):
        last += "es"
    else:
        last += "s"
    return f"{head} {last}".strip()


def audience_key(name: str) -> str:
    """The form an audience is kept in, for a group name or for the words of a document:
    "Interns", "intern" and "interns" are "interns"; "freelancers" and "підрядників" are
    "contractors"."""
    words = _norm(name)
    known = _forms(True)[1]
    return known.get(words) or known.get(_plural(words)) or _plural(words)


def named(text: str, among: Iterable[str] = ()) -> frozenset[str]:
    """The audiences a title, heading, question or sentence names anywhere in it: staff and
    outside staff always, and the audiences in ``among`` (those the document or the passages
    at hand are written for)."""
    found = _found(text, everyone=False)
    others = frozenset(among) - lexicon().sorted_audiences
    if others:
        pattern, audience = _among(others)
        if pattern is not None:
            found |= {audience[_norm(m.group())] for m in pattern.finditer(text)}
    return found


@functools.lru_cache(maxsize=256)
def _among(audiences: frozenset[str]) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """The words for each of ``audiences``: the lexicon's, the audience itself and its
    singular."""
    words: dict[str, str] = {}
    for word, audience in lexicon().forms.items():
        if audience in audiences:
            words[word] = audience
    for audience in audiences:
        words.setdefault(audience, audience)
        if audience.endswith("s") and not audience.endswith("ss"):
            words.setdefault(audience[:-1], audience)
    return _pattern(words), {_norm(w): a for w, a in words.items()}


def groups_listed(text: str, *, title: bool = False) -> frozenset[str]:
    """The groups of people a list names where it begins ("all employees, contractors and
    interns who …"), when it names people: one group the lexicon knows makes the others in the
    same list groups too ("interns and working students"), and so does "who" after the list.
    In a ``title``, a short plural at its end names its readers even alone ("… for Ferry
    Pilots")."""
    lex = lexicon()
    text = re.split(r"[.;!?()\[\]\"“”«»。；！？]", text.strip(), maxsplit=1)[0]
    joins = _phrases("joins")
    parts = re.split(r",|，|" + joins.pattern, text, flags=re.I) if joins else text.split(",")
    determiners, ends = set(lex.phrases["determiners"]), set(lex.phrases["clause_ends"])
    relative = set(lex.phrases["relative"])
    phrases: list[str] = []
    people = False
    for part in parts:
        words = (part or "").split()
        while words and words[0].lower() in determiners:
            words.pop(0)
        cut = next((i for i, w in enumerate(words) if i and w.lower() in ends), None)
        if cut is not None:
            people = people or words[cut].lower() in relative
            words = words[:cut]
        if words:
            phrases.append(" ".join(words))
        if cut is not None:
            break  # a clause about the list began: what follows is not the list
    found: set[str] = set()
    unknown: list[str] = []
    for phrase in phrases:
        known = _found(phrase, everyone=True)
        if known:
            found |= known
        elif (
            len(phrase.split()) <= MAX_GROUP_WORDS
            and not re.search(r"\d", phrase)
            and not phrase.split()[0].lower().endswith("ing")
        ):
            unknown.append(phrase)
    if found or people:
        found |= {audience_key(p) for p in unknown}
    elif title:
        found |= {audience_key(p) for p in unknown if re.search(r"[a-z][^s]s$", _norm(p))}
    return frozenset(found)


def _clauses(text: str) -> list[str]:
    """Sentences (the one splitter, ``ingest.sentences``), cut again at semicolons: a scope often
    says who it covers and who it does not in one sentence."""
    return [c for s in sentences(text) for c in re.split(r"(?<=;)\s+", s)]


def scope_statement(text: str) -> frozenset[str]:
    """The audiences a scope sentence gives ("This policy applies to independent contractors"),
    without those it excludes ("It does not apply to employees")."""
    applies, not_applies = _phrases("applies"), _phrases("not_applies")
    if applies is None:
        return frozenset()
    found: set[str] = set()
    for sentence in _clauses(text):
        negative = not_applies.search(sentence) if not_applies else None
        positive = applies.search(sentence)
        if positive and not (negative and negative.start() <= positive.start()):
            tail = sentence[positive.end() : positive.end() + 80]
            if negative:
                tail = tail[: max(0, negative.start() - positive.end())]
            found |= named(tail) | groups_listed(tail)
    return frozenset(found)


def excluded(text: str) -> frozenset[str]:
    """The audiences a text shuts out ("not available to contractors", "does not apply to …")."""
    not_applies = _phrases("not_applies")
    out: set[str] = set()
    for sentence in _clauses(text):
        m = not_applies.search(sentence) if not_applies else None
        if m:
            tail = sentence[m.end() : m.end() + 80]
            out |= named(tail) | groups_listed(tail)
    return frozenset(out)


def _sent_elsewhere(text: str) -> frozenset[str]:
    """The audiences a scope sends to another rule ("Contractors do not book their own travel;
    they follow the Expense Policy for Contractors")."""
    redirect = _phrases("redirect")
    out: set[str] = set()
    for sentence in _clauses(text):
        if redirect and redirect.search(sentence):
            out |= _found(sentence, everyone=False) - {lexicon().staff}
    return frozenset(out)


def _for_whom(heading: str, *, title: bool) -> frozenset[str]:
    """The readers a title or heading names at its end: "Parking Rules for Interns", "For
    interns", "Інструкція для стажистів"."""
    words = _phrases("for")
    if words is None:
        return frozenset()
    ends = [m.end() for m in words.finditer(heading)]
    if not ends:
        return frozenset()
    return groups_listed(_TRAILER.sub("", heading[ends[-1] :]), title=title)


def title_audience(title: str) -> frozenset[str]:
    """The audiences a title names: the readers at its end ("Employee Handbook for Interns"),
    else staff or outside staff anywhere in it ("Employee Handbook")."""
    return _for_whom(title, title=True) or named(title)


_SCOPE_SECTIONS = 3  # a scope sentence sits in a document's first sections
_ELIGIBILITY_SECTIONS = 12


def document_names(title: str, sections: Sequence[Section], meta: dict[str, Any]) -> frozenset[str]:
    """Every audience a document names as its readers, the general ones too ("applies to
    employees and interns"): the headings of its sections may then name one of them."""
    found = set(_given(meta)) | title_audience(title)
    for section in sections[:_SCOPE_SECTIONS]:
        found |= scope_statement(section.text[:900])
    return frozenset(found)


def _given(meta: dict[str, Any]) -> frozenset[str]:
    given = meta.get("audience")
    if not given:
        return frozenset()
    values = [given] if isinstance(given, str) else list(given)
    return frozenset(audience_key(str(v)) for v in values if str(v).strip())


def _narrowing(found: frozenset[str], acl: Iterable[str]) -> frozenset[str]:
    """``found`` without the groups every reader of the document belongs to: "for managers" on a
    document only managers may read narrows nothing. Staff and outside staff stay: every asker
    is sorted into one of them, so their rule is always told apart."""
    readers = {audience_key(g) for g in acl if g != "*" and not g.startswith("user:")}
    if readers and readers <= found:
        return found - (readers - lexicon().sorted_audiences)
    return found


def document_audience(
    title: str,
    sections: Sequence[Section],
    meta: dict[str, Any],
    acl: Iterable[str],
) -> frozenset[str]:
    """Metadata first, then the title, then a scope sentence in the first sections, then an
    eligibility section that shuts an audience out, then an access list that holds only the
    group of staff or of outside staff."""
    lex = lexicon()
    acl = list(acl)
    given = _given(meta)
    if given:
        return _narrowing(given, acl)
    found = title_audience(title)
    if found:
        return _narrowing(found, acl)
    # "This policy applies to all employees" is the general case, not a scope: only a statement
    # for another audience ties the document to it.
    # A statement naming employees too ("employees, contractors and interns") is for everyone,
    # unless the scope sends the others elsewhere ("Contractors … follow the Expense Policy for
    # Contractors"): then it is the employees' rule.
    for section in sections[:_SCOPE_SECTIONS]:
        head = section.text[:900]
        stated = scope_statement(head)
        if stated and lex.staff not in stated:
            return _narrowing(stated, acl)
        if stated == {lex.staff} and _sent_elsewhere(head):
            return frozenset({lex.staff})
    # an eligibility section that shuts staff or outside staff out ("Relocation support is not
    # available to contractors") leaves the document to the others. Shutting out a group of staff
    # ("not available to interns") is not told: that group is staff all the same.
    scope_heading = _phrases("scope_headings", prefix=True)
    for section in sections[:_ELIGIBILITY_SECTIONS]:
        if scope_heading and scope_heading.search(" ".join(section.path[-1:])):
            shut = excluded(section.text[:1500]) & lex.sorted_audiences
            if shut:
                return lex.sorted_audiences - shut
    groups = {audience_key(g) for g in acl} - {"*"}
    return frozenset(groups) if len(groups) == 1 and groups <= lex.sorted_audiences else frozenset()


def section_audience(
    path: Sequence[str],
    document: frozenset[str],
    names: Iterable[str] = (),
    acl: Iterable[str] = (),
) -> frozenset[str]:
    """A section's audience: the one its headings name — staff or outside staff, one the
    document names as its readers (``names``: ``document_names``), or the readers at a
    heading's end ("Rules for interns") — else the document's. As for a document, a group every
    reader (``acl``) belongs to narrows nothing."""
    among = frozenset(names) | document
    found = named(" > ".join(path), among)
    if not found and path:
        found = _for_whom(path[-1], title=False)
    return _narrowing(found, acl) or document
