"""The phrasings questions are read by are data, one file per language (agent/patterns/)."""

from __future__ import annotations

from datetime import date
from importlib import resources

import pytest
import yaml

from agent import phrasing
from agent.phrasing import LISTS, RULES, TABLES, read_patterns, read_rules, read_tables
from agent.questions import asks, matches_kind
from ingest.errors import ConfigError


def test_a_language_is_a_file_whose_phrasings_join_every_other_languages(tmp_path, monkeypatch):
    """A made-up language's file teaches the reader its question words, beside another
    language's, without a line of code."""
    (tmp_path / "xx.yaml").write_text(
        "number_question: ['\\bzorpa\\b']\nnumber_words: ['\\bglim\\b']\n", encoding="utf-8"
    )
    (tmp_path / "yy.yaml").write_text("number_question: ['\\bquenta\\b']\n", encoding="utf-8")
    patterns = read_patterns(tmp_path)
    assert patterns["number_question"].search("ZORPA flit varn?")  # ignoring case
    assert patterns["number_question"].search("quenta flit?")
    assert not patterns["number_question"].search("how many?")  # only the folder's languages
    assert not patterns["duration_question"].search("zorpa")  # a list no file fills: nothing

    monkeypatch.setattr(phrasing, "_patterns", lambda: patterns)
    assert asks("Zorpa flit varn dopp?").kind == "number"
    assert matches_kind("number", "flit varn glim dopp")
    assert not matches_kind("number", "flit varn dopp")


@pytest.mark.parametrize(
    "text, error",
    [
        (
            "numbr_question: ['x']\n",
            r"agent/patterns/xx\.yaml: unknown list\(s\) \['numbr_question'\]",
        ),
        ("number_question: [1]\n", r"number_question must be a list of quoted regular expressions"),
        ("number_question: 'x'\n", r"number_question must be a list of quoted regular expressions"),
        ("number_question: ['(unclosed']\n", r"entry '\(unclosed' is no pattern"),
        ("- number_question\n", r"must map list names to entries"),
    ],
)
def test_a_file_the_code_cannot_read_names_itself_and_the_fix(tmp_path, text, error):
    (tmp_path / "xx.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=error):
        read_patterns(tmp_path)


def test_every_list_the_code_reads_is_filled_by_the_shipped_files():
    folder = resources.files("agent") / "patterns"
    filled: set[str] = set()
    for f in folder.iterdir():
        if f.name.endswith(".yaml"):
            filled |= set(yaml.safe_load(f.read_text(encoding="utf-8")))
    assert filled == LISTS | TABLES | RULES


def test_a_languages_units_counts_and_months_are_tables_in_its_file(tmp_path, monkeypatch):
    """A made-up language teaches the value reader a unit, a count and a month by its file."""
    (tmp_path / "xx.yaml").write_text(
        "units: {day: [plomb, plombs]}\ncounts: {3: [trava]}\nmonths: {4: [quibrel]}\n"
        "time_words: ['\\bvo']\n",
        encoding="utf-8",
    )
    (tmp_path / "en.yaml").write_text("units: {day: [day, days]}\n", encoding="utf-8")
    tables = read_tables(tmp_path)
    assert tables["units"] == {"plomb": "day", "plombs": "day", "day": "day", "days": "day"}
    assert tables["counts"] == {"trava": "3"}

    from agent import values

    def rebuild() -> None:  # the value reader builds its patterns from the tables once
        for built in vars(values).values():
            if hasattr(built, "cache_clear"):
                built.cache_clear()

    monkeypatch.setattr(phrasing, "_tables", lambda: tables)
    monkeypatch.setattr(phrasing, "_patterns", lambda: read_patterns(tmp_path))
    rebuild()
    try:
        said = values.numbers_said("flit trava plombs varn 12 plomb")
        assert [(q.value, q.measure) for q in said] == [(3.0, "day"), (12.0, "day")]
        assert values.durations("trava plombs")[0].days == 3
        assert values.names_a_month("flit vo quibrel")
        assert values.dates("3 quibrel 2027") == [date(2027, 4, 3)]
    finally:
        monkeypatch.undo()
        rebuild()


@pytest.mark.parametrize(
    "files, error",
    [
        (
            {"xx.yaml": "units: {day: [plomb]}\n", "yy.yaml": "units: {week: [plomb]}\n"},
            r"agent/patterns/yy\.yaml: units gives 'plomb' as 'week', but "
            r"agent/patterns/xx\.yaml gives it as 'day'",
        ),
        ({"xx.yaml": "units: [plomb]\n"}, r"units must map what a word stands for to a list"),
        ({"xx.yaml": "counts: {3: trava}\n"}, r"counts must map what a word stands for"),
    ],
)
def test_a_table_the_code_cannot_read_names_its_file_and_the_fix(tmp_path, files, error):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=error):
        read_tables(tmp_path)


def test_a_rule_takes_a_message_apart_into_the_parts_its_file_says(tmp_path, monkeypatch):
    """A made-up language teaches the planner its way of asking for a comparison, and the
    document finder its way of asking for a document, by its file alone."""
    (tmp_path / "xx.yaml").write_text(
        "comparison:\n"
        "  - match: 'zorp (?P<a>.+?) vink (?P<b>.+?) nal (?P<what>.+?)\\?$'\n"
        "    parts: ['{what} fo {a}', '{what} fo {b}']\n"
        "document_request:\n"
        "  - match: 'glim (?P<name>.+)'\n"
        "    parts: ['{name}']\n",
        encoding="utf-8",
    )
    rules = read_rules(tmp_path)
    (compare,) = rules["comparison"]
    assert compare.apply("Zorp flit vink varn nal dopp?") == ["dopp fo flit", "dopp fo varn"]
    assert compare.apply("flit vink varn") is None  # from the message's start only

    from agent.document_requests import asked_document
    from agent.offline import _parts

    monkeypatch.setattr(phrasing, "_rules", lambda: rules)
    assert _parts("zorp flit vink varn nal dopp?") == ["dopp fo flit", "dopp fo varn"]
    assert _parts("compare A with B, and C") == ["compare A with B, and C"]  # not this language's
    assert asked_document("glim dopp") == "dopp"
    assert asked_document("show me the travel policy") is None


@pytest.mark.parametrize(
    "text, error",
    [
        ("comparison: ['x']\n", r"each entry of comparison needs match: 'a pattern' and parts"),
        ("comparison: [{match: 'x'}]\n", r"each entry of comparison needs match"),
        (
            "comparison: [{match: '(?P<a>x)', parts: ['{a} {b}']}]\n",
            r"comparison part '\{a\} \{b\}' names a group its match lacks; it has \['a'\]",
        ),
        ("document_request: [{match: '(x', parts: ['y']}]\n", r"document_request match '\(x'"),
        (  # a template that names no group would fail on the first message it reads
            "comparison: [{match: '(?P<a>x)', parts: ['{a} {}']}]\n",
            r"comparison part '\{a\} \{\}' names a group its match lacks",
        ),
    ],
)
def test_a_rule_the_code_cannot_read_names_its_file_and_the_fix(tmp_path, text, error):
    (tmp_path / "xx.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=error):
        read_rules(tmp_path)
