"""The answer model's mechanism on made-up text: its fit, its inputs, its file, its training."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agent import answer_model
from agent.answer_model import (
    FEATURES,
    AnswerModel,
    Candidate,
    Logistic,
    features,
    fit,
    question_features,
)
from agent.corpora import split_of
from agent.terms import TermStats

ROOT = Path(__file__).resolve().parents[2]
EVAL = ROOT.parent / "shared" / "eval"
TEXTS = [
    "Volunteers plant saplings along the river every spring.",
    "The river ferry runs twice a day from the northern pier.",
    "Saplings need watering for their first three summers.",
    "The northern pier closes at dusk.",
]


def test_the_fit_recovers_a_known_logistic_rule() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4000, 3))
    y = (rng.random(4000) < 1 / (1 + np.exp(-(2.0 * x[:, 0] - 1.0 * x[:, 2])))).astype(float)
    mean, scale, w, b = fit(x, y, l2=0.1)
    assert w[0] / scale[0] == pytest.approx(2.0, abs=0.25)
    assert w[2] / scale[2] == pytest.approx(-1.0, abs=0.2)
    assert abs(w[1] / scale[1]) < 0.2


def test_features_tell_the_unit_that_states_the_rare_words_and_the_kind() -> None:
    stats = TermStats.from_texts(TEXTS)
    question = "How many summers do saplings need watering?"
    cands = [
        Candidate(TEXTS[2], "Planting", "en", "sentence", 0.8, 0.7),
        Candidate(TEXTS[3], "Ferry", "en", "sentence", 0.2, 0.3),
    ]
    x = features(question, "en", cands, stats)
    col = {f: i for i, f in enumerate(FEATURES)}
    assert x[0, col["cover"]] > x[1, col["cover"]]
    assert x[0, col["kind_ok"]] == 1.0 and x[0, col["kind_miss"]] == 0.0  # "three" is a number
    assert x[1, col["kind_miss"]] == 1.0
    assert x[0, col["minilm_gap"]] == 0.0 and x[1, col["minilm_gap"]] == pytest.approx(-0.6)
    assert x[1, col["use_gap"]] == pytest.approx(-0.4)


def test_question_features_read_the_best_unit_and_its_lead() -> None:
    x = np.zeros((3, len(FEATURES)))
    x[1, FEATURES.index("use")] = 0.9
    q = question_features(x, np.array([0.2, 0.7, 0.5]))
    assert q[list(answer_model.QUESTION_FEATURES).index("use")] == 0.9
    assert q[-1] == pytest.approx(0.2)  # the margin over the next


def test_the_model_file_round_trips_and_a_stale_one_names_the_fix(tmp_path: Path) -> None:
    units = Logistic(
        np.zeros(len(FEATURES)), np.ones(len(FEATURES)), np.arange(len(FEATURES)) / 10, -1.0
    )
    q = len(answer_model.QUESTION_FEATURES)
    question = Logistic(np.zeros(q), np.ones(q), np.ones(q), 0.5)
    path = tmp_path / "answer.json"
    path.write_text(AnswerModel(units, question, 0.3).to_json({"weights": "a test"}))
    loaded = answer_model.load(path)
    assert loaded.answer_at == 0.3
    x = np.ones((2, len(FEATURES)))
    assert np.allclose(loaded.probabilities(x), units.probabilities(x))
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1]
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="make train-answer-model"):
        answer_model.load(stale)


def test_the_shipped_model_loads_and_says_what_set_each_number() -> None:
    data = json.loads(answer_model.MODEL_FILE.read_text())
    assert set(data["set_by"]) >= {"units", "question", "answer_at"}
    assert 0.0 < answer_model.load().answer_at < 1.0


def test_the_split_is_by_document_and_near_sixty_twenty_twenty() -> None:
    docs = [f"corpus/doc{i}.md" for i in range(2000)]
    splits = [split_of("any", d, "q") for d in docs]
    assert all(
        split_of("any", d, f"q{i}") == s for i, (d, s) in enumerate(zip(docs, splits, strict=True))
    )
    share = {s: splits.count(s) / len(splits) for s in ("train", "dev", "test")}
    assert share["train"] == pytest.approx(0.6, abs=0.04)
    assert share["dev"] == pytest.approx(0.2, abs=0.03) and share["test"] == pytest.approx(
        0.2, abs=0.03
    )


@pytest.mark.models
@pytest.mark.skipif(not (EVAL / "answers").is_dir(), reason=f"no answer sets in {EVAL}")
def test_a_smoke_training_writes_a_model_that_loads(tmp_path: Path) -> None:
    out = tmp_path / "answer.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "train_answer_model.py"),
            "--smoke",
            "--sets",
            "or_sharc",
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "cache"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert answer_model.load(out).answer_at > 0.0
