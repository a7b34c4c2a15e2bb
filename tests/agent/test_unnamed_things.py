"""The things an answer seldom names are read off the train splits (benchmarks/unnamed_things.py),
and a question asking for one of them needs no unit that says it."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from agent import phrasing
from agent.corpora import DATASETS, default_eval_dir, split_of
from agent.phrasing import read_patterns
from agent.questions import asks
from benchmarks.unnamed_things import OUT, counts, render, unnamed


def test_a_thing_the_evidence_never_names_is_listed_one_it_names_is_not(tmp_path):
    rows = []
    for i in range(80):
        rows.append(  # "zorbits" are asked for and answered by what they are, never by name
            {
                "id": f"a{i}",
                "question": f"What are the zorbits of plan {i}?",
                "answerable": True,
                "doc": f"doc{i % 20}.md",
                "evidence": [f"Plan {i} starts on a Monday and ends on a Friday."],
            }
        )
        rows.append(  # "quibbles" are named by the sentence that answers
            {
                "id": f"b{i}",
                "question": f"What quibble does plan {i} pay?",
                "answerable": True,
                "doc": f"doc{i % 20}.md",
                "evidence": [f"Plan {i} pays a quibble of {i} EUR."],
            }
        )
    (tmp_path / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    asked, named = counts(tmp_path, "madeup")
    train = sum(1 for r in rows[::2] if split_of("madeup", r["doc"], r["id"]) == "train")
    assert 0 < asked["zorbits"] == train < 80  # the train split only
    assert named["zorbits"] == 0 and named["quibble"] == asked["quibble"] > 0
    assert unnamed(asked, named, min_asked=4, max_named=0.2) == ["zorbits"]
    assert unnamed(asked, named, min_asked=train + 1, max_named=0.2) == []


def test_a_question_for_an_unnamed_thing_asks_for_no_thing(tmp_path, monkeypatch):
    (tmp_path / "en.yaml").write_text(render(["zorbits"], 4, 0.2, ["madeup"]), encoding="utf-8")
    patterns = read_patterns(tmp_path)
    assert asks("What quibble does plan 7 pay?").thing == "quibble"
    assert asks("What are the zorbits of plan 7?").thing == "zorbits"
    monkeypatch.setattr(phrasing, "_patterns", lambda: patterns)
    assert asks("What are the zorbits of plan 7?").thing == ""
    assert asks("What quibble does plan 7 pay?").thing == "quibble"


def test_the_shipped_list_is_what_the_train_splits_give():
    """agent/patterns/en-unnamed.yaml is written by the benchmark, not by hand: re-reading the
    train splits with the settings its header names gives the same file."""
    shipped = OUT.read_text(encoding="utf-8")
    m = re.search(r"--min-asked (\d+) --max-named ([\d.]+)", shipped)
    assert m, "the header names the settings it was written with"
    answers = default_eval_dir() / "answers"
    sets = [d for d in DATASETS if (answers / d / "questions.jsonl").exists()]
    if not sets:
        pytest.skip(f"the public answer sets are not on this machine ({answers})")
    asked: Counter[str] = Counter()
    named: Counter[str] = Counter()
    for dataset in sets:
        a, n = counts(answers / dataset, dataset)
        asked.update(a)
        named.update(n)
    min_asked, max_named = int(m.group(1)), float(m.group(2))
    things = unnamed(asked, named, min_asked, max_named)
    assert render(things, min_asked, max_named, sets) == shipped
