"""benchmarks/closeness_scales.py reads only the train split, and pairs each question's evidence
with evidence about another document."""

from __future__ import annotations

import json
import random

from agent.corpora import split_of
from benchmarks.closeness_scales import pairs


def test_pairs_come_from_the_train_split_and_another_document(tmp_path):
    rows = [
        {
            "id": f"q{i}",
            "question": f"What does clause {i} of the zorblat charter say?",
            "answerable": i % 5 != 0,
            "doc": f"doc{i % 12}.md",
            "evidence": [f"Clause {i} says the zorblat meets on day {i}."],
        }
        for i in range(60)
    ]
    (tmp_path / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    found = pairs(tmp_path, "madeup", 100, random.Random(1))
    by_question = {r["question"]: r for r in rows}
    assert found
    for question, evidence, other in found:
        row = by_question[question]
        assert row["answerable"] and split_of("madeup", row["doc"], row["id"]) == "train"
        assert evidence == row["evidence"][0]
        other_row = next(r for r in rows if r["evidence"][0] == other)
        assert other_row["doc"] != row["doc"]
    assert len(found) == sum(
        1 for r in rows if r["answerable"] and split_of("madeup", r["doc"], r["id"]) == "train"
    )
