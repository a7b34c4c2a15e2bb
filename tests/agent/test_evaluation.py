"""The golden set and how it is scored: the set is valid and complete, an item is scored as the
header of examples/golden.yaml says, multi-turn items carry the assistant's real replies and dated
items are answered as on their date (real handbook index, offline reasoner, no mocks)."""

from __future__ import annotations

import asyncio
import importlib.util
from collections import Counter
from dataclasses import replace
from datetime import date

import pytest
import yaml

from agent.assistant import build_assistant, build_reasoner
from agent.evaluation import EvalReport, GoldenItem, ItemResult, load_golden, run_eval
from agent.turns import Answer, Citation
from bot.cli import main as footnote
from bot.identity.directory import groups_of
from tests.conftest import ROOT

GOLDEN = ROOT / "examples" / "golden.yaml"


def _check_golden():
    spec = importlib.util.spec_from_file_location(
        "check_golden", ROOT / "scripts" / "check_golden.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _item(**kw) -> GoldenItem:
    fields = dict(
        id="t",
        question="q",
        user="alice",
        answerable=True,
        sources=["hr/leave-policy-2026.md"],
        facts=[],
        kind="single",
    )
    return GoldenItem(**(fields | kw))


def _result(text: str, status: str = "answered", cited: tuple[str, ...] = (), **kw) -> ItemResult:
    citations = [
        Citation(n, doc, doc, "", doc, "", None, "", "", "") for n, doc in enumerate(cited, 1)
    ]
    return ItemResult(_item(**kw), Answer(text, status, citations), 0.01, [])


# ----------------------------------------------------------------------------- the set


def test_golden_set_is_valid_has_150_items_every_kind_and_keeps_the_original_99(capsys):
    check = _check_golden()
    assert check.main([]) == 0, capsys.readouterr().out
    items = load_golden(GOLDEN)
    assert len(items) >= 150
    kinds = Counter(item.kind for item in items)
    assert set(kinds) <= check.KINDS
    for kind, least in check.MIN_KIND.items():
        assert kinds[kind] >= least, kind
    assert [i.id for i in items if i.original] == [f"q{n:02d}" for n in range(1, 100)]
    assert all(i.set in ("v2", "v3") for i in items[99:])
    assert [i.set for i in items[99:]] == sorted(i.set for i in items[99:])  # later sets follow


def test_a_page_break_does_not_hide_a_fact_from_the_checker():
    pages = [
        "Northwind Cloud GmbH\nThe allowance is paid in full. You do not\nPage 1 of 3",
        "Northwind Cloud GmbH\nneed to show receipts, and it is not paid retro-\nactively.\nPage 2 of 3",
        "Northwind Cloud GmbH\nThe end.\nPage 3 of 3",
    ]
    text = _check_golden().pdf_reader_text(pages)
    assert "You do not\nneed to show receipts" in text and "retroactively" in text
    assert "Northwind Cloud GmbH" not in text and "Page" not in text


def test_the_checker_rejects_a_conclusion_that_a_source_states_word_for_word(tmp_path):
    check = _check_golden()
    golden = tmp_path / "golden.yaml"
    golden.write_text(
        yaml.safe_dump(
            [
                {
                    "id": "t1",
                    "question": "Can customer 4215 still get a refund?",
                    "user": "dave",
                    "today": date(2026, 10, 6),
                    "answerable": True,
                    "sources": ["refunds.md"],
                    "facts": ["60 days"],
                    "conclusions": [["no refunds", "not eligible"]],
                    "kind": "tool_policy",
                    "set": "v2",
                }
            ]
        )
    )
    rep = check.Report()
    texts = {"refunds.md": "Annual plans: within 60 days. After that there are no refunds."}
    check.check_golden(
        golden, tmp_path, {"refunds.md": {"acl": ["*"]}}, texts, {"dave": {"sales"}}, rep
    )
    mine = [e for e in rep.errors if e.startswith("golden t1")]
    assert len(mine) == 1 and "'no refunds'" in mine[0]


# ----------------------------------------------------------------------------- scoring


def test_a_fact_with_alternatives_counts_when_any_spelling_is_in_the_answer():
    facts = [["March 31", "31. März"]]
    assert _result("Bis zum 31. März [1].", facts=facts).correct
    assert not _result("Bis Ende April [1].", facts=facts).correct


def test_forbidden_text_makes_an_answer_wrong_but_leaves_key_fact_coverage_alone():
    r = _result(
        "Meals up to 40 EUR per travel day [1]. Employees get 66 EUR [2].",
        facts=[["40 EUR"]],
        forbidden=["66 EUR"],
    )
    assert r.fact_coverage == 1.0 and r.forbidden_found == ["66 EUR"] and not r.correct


def test_conclusions_are_key_facts_the_answer_itself_must_state():
    r = _result(
        "Monthly plans are refundable within 30 days [1]. Order 2026-07-05 (93 days ago).",
        facts=[["30 days"]],
        conclusions=[["not eligible", "has passed"]],
    )
    assert r.fact_coverage == 0.5 and r.missing == ["not eligible"] and not r.correct


def test_an_unanswerable_item_is_right_only_when_refused():
    kw = dict(answerable=False, sources=[], kind="near_miss")
    assert _result("I don't know: …", status="unknown", **kw).correct
    assert not _result("Primary 250 EUR per week [1].", **kw).correct


def test_the_report_shows_the_original_99_and_every_kind_on_their_own():
    report = EvalReport(
        [
            _result(
                "25 days [1].",
                facts=[["25"]],
                cited=("kb/hr/leave-policy-2026.md",),
            ),
            _result("I don't know.", status="unknown", facts=[["170"]], kind="table", set="v2"),
            _result(
                "I don't know.", status="unknown", answerable=False, kind="near_miss", set="v2"
            ),
        ]
    )
    assert report.original.metrics["answered_correctly"] == 1.0
    assert report.metrics["answered_correctly"] == pytest.approx(2 / 3)
    assert report.metrics["over_refusal"] == 0.5 and report.metrics["refusal_accuracy"] == 1.0
    kinds = report.by_kind()
    assert set(kinds) == {"single", "table", "near_miss"}
    assert kinds["table"].kind_row() == ["1", "0.000", "0.000", "–", "1.000", "–"]
    assert kinds["near_miss"].kind_row() == ["1", "1.000", "–", "1.000", "–", "–"]
    assert kinds["single"].kind_row()[-1] == "1.000"  # the citation came from an expected source
    assert [c.header for c in report.table().columns] == ["metric", "original (1)", "full set (3)"]
    assert [c.header for c in kinds["table"].table().columns] == ["metric", "full set (1)"]


def test_eval_rejects_an_unknown_kind_before_loading_anything(capsys):
    assert footnote(["eval", "--kind", "tables"]) == 2
    out = capsys.readouterr().err  # errors go to stderr
    assert "no golden items of kind tables" in out and "known kinds:" in out and "single" in out


# ----------------------------------------------------------------------------- running items


class HistoryRecorder:
    """The real offline reasoner, remembering the text and history every turn was routed with."""

    def __init__(self, inner):
        self.inner = inner
        self.routed: list[tuple[str, tuple]] = []

    async def route(self, text, history):
        self.routed.append((text, tuple(history)))
        return await self.inner.route(text, history)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_multi_turn_items_ask_the_earlier_turns_first_and_pass_the_real_replies_on(
    handbook_deps, tmp_path
):
    golden = tmp_path / "golden.yaml"
    golden.write_text(
        yaml.safe_dump(
            [
                {
                    "id": "t1",
                    "turns": ["How many vacation days can I carry over?"],
                    "question": "and by when must I use them?",
                    "user": "alice",
                    "answerable": True,
                    "sources": ["hr/leave-policy-2026.md"],
                    "facts": ["March 31"],
                    "kind": "followup",
                    "set": "v2",
                }
            ]
        )
    )
    recorder = HistoryRecorder(build_reasoner(handbook_deps))
    assistant = build_assistant(handbook_deps, reasoner=recorder)
    report = asyncio.run(
        run_eval(assistant, load_golden(golden), groups_of(handbook_deps.directory))
    )
    (result,) = report.results
    first, last = recorder.routed
    assert first == ("How many vacation days can I carry over?", ())
    text, history = last
    # the follow-up reaches the reasoner read against the conversation
    assert text.startswith(first[0].rstrip("?")) and text.endswith("by when must I use them?")
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[0].text == first[0] and "10" in history[1].text  # the reply it really gave
    assert result.correct and result.ranks == []  # a follow-up alone is no search to score


def test_dated_items_are_answered_as_on_their_date(handbook_deps):
    item = _item(
        id="t2",
        question="Can customer #3980 still get a refund?",
        user="dave",
        sources=["sales/refund-policy.md"],
        facts=[["30 days"]],
        kind="tool_policy",
        today=date(2026, 10, 6),
        set="v2",
    )
    report = asyncio.run(
        run_eval(
            build_assistant(handbook_deps),
            [item, replace(item, id="t3", today=date(2026, 11, 1))],
            groups_of(handbook_deps.directory),
        )
    )
    on_the_6th, on_the_1st = (r.answer.text for r in report.results)
    assert "2026-09-22 (14 days ago)" in on_the_6th
    assert "2026-09-22 (40 days ago)" in on_the_1st
