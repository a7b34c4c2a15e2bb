"""The words ingest reads documents by, one YAML file per language in ``ingest/words/``.

Which words name a group of people, which phrases say whom a text applies to, which words a title
never ends with: these are data, kept apart from the code that uses them, so that a new language
or a new word is a line in a file. Every language's words are read together, as one lexicon: a
document is read by all of them, whatever language it is in.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml

from ingest.errors import ConfigError

_LISTS = (
    "applies",
    "not_applies",
    "redirect",
    "scope_headings",
    "for",
    "determiners",
    "joins",
    "clause_ends",
    "relative",
)
_GROUPS = ("staff", "outside_staff", "people")


@dataclass(frozen=True)
class Lexicon:
    staff: str  # the audience every staff member belongs to ("employees")
    outside_staff: frozenset[str]  # audiences whose members are not staff ("contractors")
    sorted_forms: dict[str, str]  # a word for staff or outside staff → its audience
    forms: dict[str, str]  # a word for any group of people → its audience (the above included)
    phrases: dict[str, tuple[str, ...]]  # list name ("applies", "joins", …) → its phrases
    dangling: frozenset[str]  # words a title never ends with
    named: dict[tuple[str, str], str]  # (language, audience) → its name after "for" in replies

    @property
    def sorted_audiences(self) -> frozenset[str]:
        """The audiences every asker is sorted into: staff, or one of outside staff."""
        return frozenset({self.staff, *self.outside_staff})


def _words(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{where} must be a list of words; fix it in ingest/words/")
    odd = [v for v in value if not isinstance(v, str)]
    if odd:  # YAML reads a bare on, no, yes as true or false
        raise ConfigError(f"{where} holds {odd[0]!r}, not a word: quote it in ingest/words/")
    return [" ".join(v.lower().split()) for v in value if v.strip()]


def _groups(value: Any, where: str) -> dict[str, list[str]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must map an audience to its words; fix it in ingest/words/")
    return {str(k).lower(): _words(v, f"{where}.{k}") for k, v in value.items()}


def _names(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{where} must map an audience to one word; fix it in ingest/words/")
    return {str(k).lower(): v.strip() for k, v in value.items() if v.strip()}


@functools.cache
def lexicon() -> Lexicon:
    """Every language's file, merged; read once, on first use."""
    return read_lexicon(resources.files("ingest") / "words")


def read_lexicon(folder: Traversable) -> Lexicon:
    """Every ``<lang>.yaml`` of ``folder``, merged; a list or a name it cannot read names the fix."""
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
    if not files:
        raise ConfigError("no word lists in ingest/words/: reinstall Footnote (make install)")
    staff: set[str] = set()
    outside: set[str] = set()
    sorted_forms: dict[str, str] = {}
    forms: dict[str, str] = {}
    phrases: dict[str, list[str]] = {name: [] for name in _LISTS}
    dangling: set[str] = set()
    named: dict[tuple[str, str], str] = {}
    for f in files:
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        audience, title = data.get("audience") or {}, data.get("title") or {}
        unknown = (set(audience) - {*_LISTS, *_GROUPS, "named"}) | (set(title) - {"dangling"})
        if unknown:
            raise ConfigError(f"ingest/words/{f.name}: unknown list(s) {sorted(unknown)}")
        for kind in _GROUPS:
            for key, words in _groups(audience.get(kind), f"{f.name}: audience.{kind}").items():
                for word in [key, *words] if kind == "people" else words:
                    forms.setdefault(word, key)
                    if kind != "people":
                        sorted_forms.setdefault(word, key)
                if kind == "staff":
                    staff.add(key)
                elif kind == "outside_staff":
                    outside.add(key)
        for name in _LISTS:
            phrases[name] += _words(audience.get(name), f"{f.name}: audience.{name}")
        dangling.update(_words(title.get("dangling"), f"{f.name}: title.dangling"))
        lang = f.name.removesuffix(".yaml")
        for key, word in _names(audience.get("named"), f"{f.name}: audience.named").items():
            named[(lang, key)] = word
    unknown_named = sorted({key for _, key in named} - set(forms.values()))
    if unknown_named:
        raise ConfigError(
            f"ingest/words/: audience.named names {unknown_named}, which no file lists under"
            " staff, outside_staff or people"
        )
    if len(staff) != 1:
        raise ConfigError(
            f"ingest/words/: every file must name the same one staff audience, found {sorted(staff)}"
        )
    return Lexicon(
        staff=staff.pop(),
        outside_staff=frozenset(outside),
        sorted_forms=sorted_forms,
        forms=forms,
        phrases={name: tuple(dict.fromkeys(words)) for name, words in phrases.items()},
        dangling=frozenset(dangling),
        named=named,
    )
