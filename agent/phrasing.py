"""How each language phrases what the offline answer step reads: the kind of answer a question
asks for ("how many", "скільки", "多少"), the extreme it wants, a greeting, a worked example in a
document. The phrasings are data, one file per language in ``agent/patterns/``, so that teaching
Footnote a language, or a phrasing it misses, is an edit to a word file, not to the code.

Each list is the alternation of its entries in every language's file: a question is read by
every language's phrasings at once, since a short question's language is a guess and a
Ukrainian question may quote an English term.
"""

from __future__ import annotations

import functools
import re
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
        "number_words",
        "soon",
        "within",
        "someone",
        "smalltalk",
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
    }
)


def pattern(name: str) -> re.Pattern[str]:
    """The list ``name`` of ``agent/patterns/*.yaml`` as one pattern, matched ignoring case."""
    return _patterns()[name]


@functools.cache
def _patterns() -> dict[str, re.Pattern[str]]:
    return read_patterns(resources.files("agent") / "patterns")


def read_patterns(folder: Traversable) -> dict[str, re.Pattern[str]]:
    """Every ``<lang>.yaml`` of ``folder``, each list joined across languages; a list the code
    does not read, an entry that is not a quoted string or not a regular expression names its
    file. A list no file fills matches nothing."""
    entries: dict[str, list[str]] = {name: [] for name in LISTS}
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
    # English first: where two languages' entries match at one place, English's span is taken
    for f in sorted(files, key=lambda f: f.name != "en.yaml"):
        where = f"agent/patterns/{f.name}"
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ConfigError(f"{where} must map list names to entries")
        unknown = set(data) - LISTS
        if unknown:
            raise ConfigError(f"{where}: unknown list(s) {sorted(unknown)}; known: {sorted(LISTS)}")
        for name, values in data.items():
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
