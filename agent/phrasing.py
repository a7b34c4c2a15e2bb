"""How each language phrases what the offline answer step reads: the kind of answer a question
asks for ("how many", "скільки", "多少"), the extreme it wants, a greeting, a worked example in a
document. The phrasings are data, one file per language in ``agent/patterns/``, so that teaching
Footnote a language, or a phrasing it misses, is an edit to a word file, not to the code.

Each list is the alternation of its entries in every language's file: a question is read by
every language's phrasings at once, since a short question's language is a guess and a
Ukrainian question may quote an English term. Each table (the words of units, counts, ordinals
and months, ``agent/values.py``) maps what a word stands for to the words, joined the same way.
Each rule list (a request to see a document, a comparison to split) holds patterns that take a
message apart, tried one at a time in order, each with what it makes of the parts it names.
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

import yaml

from ingest.errors import ConfigError

# every list the code reads, so a misspelt list name in a file is an error, not a silent no-op
LISTS = frozenset(
    {
        "duration_question",
        "number_question",
        "date_question",
        "who_question",
        "where_question",
        "yesno_question",
        "question_word",
        "terse_duration",
        "terse_number",
        "terse_date",
        "terse_where",
        "highest",
        "lowest",
        "latest",
        "earliest",
        "version_dimension",
        "date_dimension",
        "versions_asked",
        "up_to_what",
        "from_what",
        "date_words",
        "era_words",
        "number_words",
        "soon",
        "within",
        "someone",
        "smalltalk",
        "greeting",
        "thanks",
        "reply",
        "ticket",
        "part_break",
        "anaphora",
        "overview",
        "examples",
        "an_example",
        "several",
        "follow_up_opens",
        "points_back",
        "follow_up_asks",
        "it_refers",
        "they_refers",
        "contact_asked",
        "ticket_number_asked",
        "new_ticket_asked",
        "up_to",
        "over",
        "under",
        "or_more",
        "after_span",
        "per",
        "range_to",
        "ordinal_suffix",
        "time_words",
        "a_unit_of",
        "not_a_document_name",
        "unnamed_things",
    }
)
# every table the code reads: what a word stands for (a unit, a number, a month) → its words
TABLES = frozenset({"units", "counts", "ordinals", "months", "compound_units"})
# every rule list the code reads: patterns that take a message apart, tried one at a time
RULES = frozenset({"document_request", "comparison"})


@dataclass(frozen=True)
class Rule:
    """A pattern whose named groups are the parts of a message, and what it makes of them:
    ``parts`` are templates of those groups ("{what} for {a}"), one result each."""

    match: re.Pattern[str]
    parts: tuple[str, ...]

    def apply(self, text: str) -> list[str] | None:
        """The parts ``text`` is made of, or None when the pattern does not match it; a group
        the match left out is empty."""
        m = self.match.match(text)
        if not m:
            return None
        groups = {k: v or "" for k, v in m.groupdict().items()}
        return [t.format_map(groups) for t in self.parts]


def rules(name: str) -> tuple[Rule, ...]:
    """The rule list ``name`` of ``agent/patterns/*.yaml``: English's first, then the other
    languages', each file's in its order."""
    return _rules()[name]


def pattern(name: str) -> re.Pattern[str]:
    """The list ``name`` of ``agent/patterns/*.yaml`` as one pattern, matched ignoring case."""
    return _patterns()[name]


def alternation(name: str) -> str:
    """The list ``name`` as a group to build a larger pattern from ("(?:a|b)"), which the larger
    pattern must compile with ``re.I``."""
    return f"(?:{pattern(name).pattern})"


Files = list[tuple[str, dict[str, object]]]  # (where, what the file holds), as ``_files`` reads


@functools.cache
def _shipped() -> Files:
    """The files of ``agent/patterns/``, read once for the lists, tables and rules alike."""
    return _files(resources.files("agent") / "patterns")


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return patterns_of(_shipped())


@functools.cache
def _tables() -> dict[str, dict[str, str]]:
    return tables_of(_shipped())


def table(name: str) -> dict[str, str]:
    """The table ``name`` of ``agent/patterns/*.yaml``: each word, in lower case, → what it
    stands for ("days" → "day", "fünf" → "5", "лютого" → "2")."""
    return _tables()[name]


@functools.cache
def _rules() -> dict[str, tuple[Rule, ...]]:
    return rules_of(_shipped())


def _files(folder: Traversable) -> Files:
    """Each ``<lang>.yaml`` of ``folder`` as (where, its lists and tables), English first: where
    two languages' entries match at one place, English's span is taken. A name the code does not
    read is an error naming the file."""
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
    out = []
    for f in sorted(files, key=lambda f: f.name != "en.yaml"):
        where = f"agent/patterns/{f.name}"
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ConfigError(f"{where} must map list names to entries")
        unknown = set(data) - LISTS - TABLES - RULES
        if unknown:
            known = sorted(LISTS | TABLES | RULES)
            raise ConfigError(f"{where}: unknown list(s) {sorted(unknown)}; known: {known}")
        out.append((where, data))
    return out


def read_patterns(folder: Traversable) -> dict[str, re.Pattern[str]]:
    return patterns_of(_files(folder))


def read_tables(folder: Traversable) -> dict[str, dict[str, str]]:
    return tables_of(_files(folder))


def read_rules(folder: Traversable) -> dict[str, tuple[Rule, ...]]:
    return rules_of(_files(folder))


def patterns_of(files: Files) -> dict[str, re.Pattern[str]]:
    """Every list of the files, joined across languages; an entry that is not a quoted string
    or not a regular expression names its file. A list no file fills matches nothing."""
    entries: dict[str, list[str]] = {name: [] for name in LISTS}
    for where, data in files:
        for name, values in data.items():
            if name in TABLES or name in RULES:
                continue
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise ConfigError(f"{where}: {name} must be a list of quoted regular expressions")
            for v in values:
                try:
                    re.compile(v)
                except re.error as e:
                    raise ConfigError(f"{where}: {name} entry {v!r} is no pattern ({e})") from e
            entries[name] += values
    return {
        name: re.compile("|".join(f"(?:{v})" for v in values) or r"(?!)", re.I)
        for name, values in entries.items()
    }


def tables_of(files: Files) -> dict[str, dict[str, str]]:
    """Every table of the files, joined across languages: word (lower case) → what it
    stands for. A word two entries give different meanings ("mar" a month and a unit) names
    both, so that reading a value never depends on the order the files were read in."""
    out: dict[str, dict[str, str]] = {name: {} for name in TABLES}
    said_by: dict[tuple[str, str], str] = {}
    for where, data in files:
        for name, entries in data.items():
            if name not in TABLES:
                continue
            if not isinstance(entries, dict) or not all(
                isinstance(words, list) and all(isinstance(w, str) and w.strip() for w in words)
                for words in entries.values()
            ):
                raise ConfigError(
                    f"{where}: {name} must map what a word stands for to a list of words"
                )
            for meaning, words in entries.items():
                for word in words:
                    w = word.strip().lower()
                    known = out[name].get(w)
                    if known is not None and known != str(meaning):
                        raise ConfigError(
                            f"{where}: {name} gives {word!r} as {meaning!r}, but "
                            f"{said_by[name, w]} gives it as {known!r}: a word means one thing"
                        )
                    out[name][w] = str(meaning)
                    said_by.setdefault((name, w), where)
    return out


def rules_of(files: Files) -> dict[str, tuple[Rule, ...]]:
    """Every rule list of the files: each entry a ``match`` pattern (matched ignoring
    case, from the message's start) and the ``parts`` it makes, templates of the pattern's named
    groups; a template naming a group the pattern lacks names its file."""
    out: dict[str, list[Rule]] = {name: [] for name in RULES}
    for where, data in files:
        for name, entries in data.items():
            if name not in RULES:
                continue
            fix = f"{where}: each entry of {name} needs match: 'a pattern' and parts: ['{{group}}']"
            if not isinstance(entries, list):
                raise ConfigError(fix)
            for entry in entries:
                if not (
                    isinstance(entry, dict)
                    and isinstance(entry.get("match"), str)
                    and isinstance(entry.get("parts"), list)
                    and entry["parts"]
                    and all(isinstance(t, str) for t in entry["parts"])
                ):
                    raise ConfigError(fix)
                try:
                    match = re.compile(entry["match"], re.I)
                except re.error as e:
                    raise ConfigError(f"{where}: {name} match {entry['match']!r}: {e}") from e
                for template in entry["parts"]:
                    asked = {
                        f for _, f, _, _ in string.Formatter().parse(template) if f is not None
                    }
                    if asked - set(match.groupindex):
                        raise ConfigError(
                            f"{where}: {name} part {template!r} names a group its match "
                            f"lacks; it has {sorted(match.groupindex)}"
                        )
                out[name].append(Rule(match, tuple(entry["parts"])))
    return {name: tuple(found) for name, found in out.items()}
