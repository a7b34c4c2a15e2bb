"""The public answer sets as ``footnote eval --dataset`` reads them: the split by document, the
stratified sample, each scoring rule on made-up items, and one run over a tiny corpus written
here in the sets' layout (corpus/*.md + questions.jsonl)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agent.corpora import (
    CorpusQuestion,
    CorpusReport,
    load_corpus,
    quotes_evidence,
    sample,
    score,
    split_of,
)
from agent.turns import Answer, Citation
from bot.cli import main as footnote
from ingest.errors import ConfigError


def _q(**kw) -> CorpusQuestion:
    fields = dict(
        dataset="squad2",
        id="q1",
        question="How many vacation days do employees get?",
        answerable=True,
        answers=("25 days",),
        doc="corpus/leave.md",
        evidence=("Employees get 25 days of paid vacation per year.",),
        split="test",
        key_facts=("25 days",),
    )
    return CorpusQuestion(**(fields | kw))


def _answer(text: str, status: str = "answered", cites: tuple[tuple[str, str], ...] = ()):
    citations = [
        Citation(n, doc, doc, "", doc, "", None, "", quote, "")
        for n, (doc, quote) in enumerate(cites, 1)
    ]
    return Answer(text, status, citations)


# ----------------------------------------------------------------------------- the split


def test_the_split_is_the_documented_hash_by_document_and_stable():
    assert split_of("squad2", "corpus/Normans.md", "a") == split_of(
        "squad2", "corpus/Normans.md", "b"
    )
    # pinned: the training script splits with the same function, so these must never move
    assert [split_of("squad2", f"corpus/doc{i}.md", "x") for i in range(8)] == [
        split_of("squad2", f"corpus/doc{i}.md", "other id") for i in range(8)
    ]
    assert split_of("mtrag", None, "abc") == split_of("mtrag", None, "abc")
    assert split_of("mtrag", None, "abc") == split_of("mtrag", "id:abc", "ignored")


def test_the_split_is_about_60_20_20_and_differs_between_sets():
    docs = [f"corpus/doc{i}.md" for i in range(3000)]
    shares = Counter(split_of("policyqa", d, "q") for d in docs)
    assert abs(shares["train"] / 3000 - 0.6) < 0.03
    assert abs(shares["dev"] / 3000 - 0.2) < 0.03
    assert abs(shares["test"] / 3000 - 0.2) < 0.03
    other = [split_of("doc2dial", d, "q") for d in docs]
    assert other != [split_of("policyqa", d, "q") for d in docs]


def test_the_sample_keeps_the_share_of_unanswerable_items_and_is_stable():
    qs = [_q(id=f"a{i}") for i in range(75)] + [
        _q(id=f"u{i}", answerable=False, answers=(), key_facts=()) for i in range(25)
    ]
    twenty = sample(qs, 20)
    assert sum(not q.answerable for q in twenty) == 5 and len(twenty) == 20
    assert [q.id for q in sample(list(reversed(qs)), 20)] == [q.id for q in reversed(twenty)]
    assert {q.id for q in twenty} <= {q.id for q in sample(qs, 40)}
    assert sample(qs, None) == qs and sample(qs, 500) == qs


# ----------------------------------------------------------------------------- scoring


def test_an_answer_with_the_fact_from_the_right_document_is_correct():
    o = score(_q(), _answer("You get 25 days [1].", cites=(("corpus/leave.md", "x"),)), 0.2)
    assert o.correct and o.cited and o.key_fact and o.ms == pytest.approx(200)


def test_a_citation_of_another_document_is_wrong_even_with_the_fact():
    o = score(_q(), _answer("You get 25 days [1].", cites=(("corpus/other.md", "x"),)), 0.1)
    assert o.cited is False and o.key_fact and not o.correct


def test_a_citation_of_an_extra_evidence_document_counts():
    q = _q(extra_docs=("corpus/second.md",))
    o = score(q, _answer("You get 25 days [1].", cites=(("corpus/second.md", "x"),)), 0.1)
    assert o.cited and o.correct


def test_without_the_key_fact_a_span_item_is_wrong_even_quoting_the_evidence():
    quote = "Employees get 25 days of paid vacation per year."
    o = score(_q(), _answer("Vacation is paid [1].", cites=(("corpus/leave.md", quote),)), 0.1)
    assert o.key_fact is False and o.evidence_quoted and not o.correct


def test_an_item_without_span_answers_needs_the_evidence_quoted():
    q = _q(dataset="or_sharc", answers=("Yes",), key_facts=())
    right = _answer(
        "Yes [1].", cites=(("corpus/leave.md", "employees get 25 days of paid vacation"),)
    )
    wrong = _answer("Yes [1].", cites=(("corpus/leave.md", "Parking is free on weekends."),))
    assert score(q, right, 0.1).correct and score(q, right, 0.1).key_fact is None
    assert not score(q, wrong, 0.1).correct and score(q, wrong, 0.1).evidence_quoted is False


def test_evidence_overlap_by_containment_either_way_or_token_f1():
    ev = ["Employees get 25 days of paid vacation per year."]
    assert quotes_evidence("get 25  DAYS of paid", ev)  # the quote inside the evidence
    assert quotes_evidence("Leave. Employees get 25 days of paid vacation per year. More.", ev)
    assert quotes_evidence("Employees get 25 paid vacation days each year", ev)  # F1 >= 0.5
    assert not quotes_evidence("Employees get a laptop each year", ev)
    assert not quotes_evidence("", ev)


def test_refusals_count_for_unanswerable_items_and_against_answerable_ones():
    unans = _q(answerable=False, answers=(), key_facts=(), evidence=())
    assert score(unans, _answer("I don't know.", "unknown"), 0.1).correct
    assert not score(unans, _answer("Yes [1].", cites=(("corpus/leave.md", "x"),)), 0.1).correct
    refused = score(_q(), _answer("I don't know.", "unknown"), 0.1)
    assert refused.refused and not refused.correct and refused.cited is None
    assert refused.key_fact is False  # a refusal holds no fact


def test_an_answerable_item_with_no_document_is_left_out_of_citation():
    q = _q(dataset="mtrag", doc=None, key_facts=(), answers=("long reply",))
    o = score(q, _answer("Something [1].", cites=(("corpus/x.md", "Employees get 25 days"),)), 0.1)
    assert o.cited is None and o.correct


def test_the_report_gives_each_metric_over_its_own_items():
    report = CorpusReport("squad2", "test")
    right = _answer("25 days [1].", cites=(("corpus/leave.md", "x"),))
    report.outcomes = [
        score(_q(id="1"), right, 0.1),
        score(_q(id="2"), _answer("I don't know.", "unknown"), 0.2),
        score(_q(id="3", answerable=False, key_facts=()), _answer("I don't know.", "unknown"), 0.3),
        score(_q(id="4", answerable=False, key_facts=()), right, 0.4),
    ]
    m = report.metrics
    assert m["questions"] == 4 and (m["answerable"], m["unanswerable"]) == (2, 2)
    assert m["answered_correctly"] == 0.5
    assert m["refusal"] == 0.5 and m["over_refusal"] == 0.5
    assert m["citation"] == 1.0  # of the one answered answerable item
    assert m["key_facts"] == 0.5
    assert m["p50_ms"] == pytest.approx(300) and m["p95_ms"] == pytest.approx(400)
    items = report.as_json()["items"]
    assert [i["correct"] for i in items] == [True, False, True, False]
    assert report.outcomes[1].failure().endswith(": refused")
    assert report.outcomes[3].failure().endswith(": answered an unanswerable question")
    wrong_doc = score(
        _q(), _answer("25 days [1].", cites=(("corpus/x.md", "Parking is free."),)), 0.1
    )
    assert wrong_doc.failure().endswith(": not cited, evidence not quoted")


# ----------------------------------------------------------------------------- loading


def _write_set(root: Path, name: str, docs: dict[str, str], rows: list[dict]) -> Path:
    folder = root / "answers" / name
    (folder / "corpus").mkdir(parents=True)
    for file, text in docs.items():
        (folder / "corpus" / file).write_text(text, encoding="utf-8")
    (folder / "questions.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    return root


def _row(qid: str, doc: str | None, **kw) -> dict:
    return {
        "id": qid,
        "question": "q?",
        "answerable": True,
        "answers": [],
        "doc": doc,
        "evidence": [],
        "history": [],
        "conditions": [],
        "split": "dev",
    } | kw


def test_loading_builds_each_sets_turn_and_span_answers(tmp_path):
    docs = {"a.md": "# A\n\nApply within 10\u00a0days of the decision."}
    _write_set(
        tmp_path,
        "conditionalqa",
        docs,
        [
            _row(
                "c1",
                "corpus/a.md",
                scenario="I was refused.",
                question="How long do I have?",
                answers=["within 10 days", "ten days at most"],
                meta={"answer_type": "span"},
            ),
            _row("c2", "corpus/a.md", answers=["Yes"], meta={"answer_type": "yes_no"}),
        ],
    )
    _write_set(
        tmp_path,
        "or_sharc",
        docs,
        [
            _row(
                "o1",
                "corpus/a.md",
                scenario="I am 18.",
                question="Can I get the rate?",
                followups=[{"question": "Are you under 19?", "answer": "Yes"}],
            )
        ],
    )
    _write_set(
        tmp_path,
        "mtrag",
        docs,
        [
            _row(
                "m1",
                None,
                answerable=False,
                question="And the fee?",
                history_full=[{"role": "user", "text": "Hi"}, {"role": "agent", "text": "Hello"}],
            ),
            _row(
                "m2",
                "corpus/a.md",
                extra_evidence=[{"doc": "corpus/b.md", "evidence": ["B says so."]}],
            ),
        ],
    )
    _write_set(
        tmp_path,
        "policyqa",
        docs,
        [_row("p1", "corpus/a.md", question="Is my data sold?", title="a.com")],
    )
    assert load_corpus(tmp_path, "policyqa")[0].message == "a.com privacy policy: Is my data sold?"
    c1, c2 = load_corpus(tmp_path, "conditionalqa")
    assert c1.message == "I was refused. How long do I have?"
    assert c1.key_facts == ("within 10 days",)  # only the answer the document holds
    assert c2.key_facts == () and c1.split == split_of("conditionalqa", "corpus/a.md", "c1")
    (o1,) = load_corpus(tmp_path, "or_sharc")
    assert o1.message == "I am 18. Can I get the rate? Are you under 19? Yes."
    m1, m2 = load_corpus(tmp_path, "mtrag")
    assert m1.history == (("user", "Hi"), ("assistant", "Hello")) and m1.message == "And the fee?"
    assert m1.targets == () and m1.split == split_of("mtrag", None, "m1")
    assert m2.targets == ("corpus/a.md", "corpus/b.md") and m2.evidence == ("B says so.",)


def test_a_missing_set_says_where_it_goes(tmp_path, capsys):
    assert footnote(["eval", "--dataset", "squad2", "--eval-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no answer set squad2" in err and "--eval-dir" in err
    assert footnote(["eval", "--dataset", "nope", "--eval-dir", str(tmp_path)]) == 2
    assert "unknown dataset 'nope'" in capsys.readouterr().err
    assert footnote(["eval", "--json", str(tmp_path / "x.json")]) == 2
    assert "--json goes with --dataset" in capsys.readouterr().err
    assert footnote(["eval", "--dataset", "squad2", "--limit", "0"]) == 2
    assert "--limit takes a number of questions >= 1" in capsys.readouterr().err


# ----------------------------------------------------------------------------- end to end

LEAVE = """# Leave policy

## Vacation

Employees get 25 days of paid vacation per year. Unused days expire at the end of March.

## Sick leave

Sick leave is paid for up to 30 days a year with a doctor's note.
"""
TRAVEL = """# Travel policy

Economy class is booked for flights under six hours. Business class needs a director's approval.
Hotel costs are reimbursed up to 150 EUR per night.
"""


@pytest.mark.models
def test_a_tiny_set_is_ingested_once_asked_and_scored(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    leave_split = split_of("squad2", "corpus/leave.md", "")
    vacation = "Employees get 25 days of paid vacation per year."
    rows = [
        _row(
            "v",
            "corpus/leave.md",
            question="How many days of paid vacation do employees get per year?",
            answers=["25 days"],
            evidence=[vacation],
        ),
        _row("p", "corpus/leave.md", answerable=False, question="How much is parking at Oslo?"),
        _row(
            "t", "corpus/travel.md", question="Who approves business class?", answers=["a director"]
        ),
    ]
    _write_set(tmp_path / "eval", "squad2", {"leave.md": LEAVE, "travel.md": TRAVEL}, rows)
    out = tmp_path / "out.json"
    args = ["eval", "--dataset", "squad2", "--eval-dir", str(tmp_path / "eval")]
    assert footnote([*args, "--split", leave_split, "--json", str(out)]) == 0
    first = capsys.readouterr()
    assert "ingesting 2 documents" in first.err and "squad2" in first.out
    (run,) = json.loads(out.read_text())["datasets"]
    asked = {i["id"]: i for i in run["items"]}
    expected = {"v", "p"} | (
        {"t"} if split_of("squad2", "corpus/travel.md", "") == leave_split else set()
    )
    assert set(asked) == expected
    assert run["ingest"]["chunks"] >= 2 and run["ingest"]["reused"] is False
    v = asked["v"]
    assert v["status"] == "answered" and v["cited_docs"][0] == "corpus/leave.md"
    assert v["correct"] and v["key_fact"] and v["evidence_quoted"]
    assert run["metrics"]["answerable"] == len(expected) - 1

    assert footnote([*args, "--split", leave_split]) == 0  # the second run reuses the index
    assert "reusing" in capsys.readouterr().err


def test_a_set_of_another_name_in_the_same_form_is_loaded_with_its_own_split(tmp_path):
    docs = {"a.md": "# A\n\nThe ferry leaves at 9 am from pier four."}
    rows = [
        _row("1", "corpus/a.md", answers=["9 am", "nine"], split="test"),
        _row("2", "corpus/gone.md", answerable=False, split="bogus"),
    ]
    _write_set(tmp_path, "ferries_de", docs, rows)
    answerable, silent = load_corpus(tmp_path, "ferries_de")
    assert answerable.split == "test"  # as its converter split it, by document
    assert answerable.key_facts == ("9 am",)  # the answers the document holds
    assert silent.split in ("train", "dev", "test") and not silent.key_facts
    with pytest.raises(ConfigError, match="unknown dataset 'ferries_fr'"):
        load_corpus(tmp_path, "ferries_fr")
