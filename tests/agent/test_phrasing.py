"""The phrasings questions are read by are data, one file per language (agent/patterns/)."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from agent import phrasing
from agent.phrasing import LISTS, read_patterns
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
    assert filled == LISTS
