"""The answer model's mechanism on made-up text: its inputs, its file, its two stages, its
training; and that the shipped cross-encoder runs as it was trained."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agent.answer_model import (
    FEATURES,
    MODEL_FILE,
    AnswerModel,
    Blend,
    Calibration,
    Candidate,
    CrossEncoder,
    Logistic,
    Spec,
    build_answer_model,
    features,
    fit,
    logit_ceiling,
)
from agent.corpora import split_of
from agent.terms import TermStats
from ingest.errors import ConfigError

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


def test_row_weights_count_as_repeated_rows() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(600, 2))
    y = (x[:, 0] > 0).astype(float)
    twice = fit(np.vstack([x, x[:100]]), np.concatenate([y, y[:100]]), l2=0.5)
    w = np.ones(600)
    w[:100] = 2.0
    weighted = fit(x, y, l2=0.5, w=w)
    assert np.allclose(twice[2] / twice[1], weighted[2] / weighted[1], atol=0.05)


def test_features_tell_the_unit_that_states_the_rare_words() -> None:
    stats = TermStats.from_texts(TEXTS)
    question = "How many summers do saplings need watering?"
    cands = [
        Candidate(TEXTS[2], "Planting", "en", "sentence", 0, 0.7),
        Candidate(TEXTS[3], "Ferry", "en", "item", 2, 0.3),
    ]
    x = features(question, "en", cands, stats)
    col = {f: i for i, f in enumerate(FEATURES)}
    assert x[0, col["cover"]] > x[1, col["cover"]] == 0.0
    assert x[0, col["use_gap"]] == 0.0 and x[1, col["use_gap"]] == pytest.approx(-0.4)
    assert x[1, col["cover_gap"]] < 0.0 and x[1, col["rank"]] == 2.0
    assert x[1, col["item"]] == 1.0 and x[0, col["item"]] == 0.0


def test_the_pair_text_puts_the_nearest_headings_before_the_unit() -> None:
    c = Candidate("Two evenings a week.", "Garden > Volunteers > Watering", "en", "item", 0, None)
    assert c.pair_text == "Volunteers > Watering: Two evenings a week."
    assert Candidate("Alone.", "", "en", "sentence", 0, None).pair_text == "Alone."


def test_calibration_is_a_logistic_of_the_score() -> None:
    cal = Calibration(2.0, -1.0)
    assert cal(np.array([0.5]))[0] == pytest.approx(0.5)
    assert cal(np.array([3.0]))[0] > cal(np.array([1.0]))[0]


class CountingCross:
    """The cross-encoder seam, scripted: the logit is the number of words the unit shares with
    the question; every pair read is counted."""

    def __init__(self) -> None:
        self.read: list[tuple[str, str]] = []

    def logits(self, question: str, texts: list[str]) -> np.ndarray:
        self.read += [(question, t) for t in texts]
        q = set(question.lower().split())
        return np.array([len(q & set(t.lower().split())) for t in texts], dtype=np.float32)


def spec(size: int = 2) -> Spec:
    n = len(FEATURES)
    weights = np.zeros(n)
    weights[FEATURES.index("use")] = 1.0
    return Spec(
        Logistic(np.zeros(n), np.ones(n), weights, 0.0),
        size,
        Calibration(1.0, 0.0),
        Blend(1.0, 0.0, -2.0),
        0.5,
        128,
        Path("unused"),
        "first",
        (),
    )


def test_the_cross_encoder_reads_only_the_shortlist_and_each_pair_once() -> None:
    stats = TermStats.from_texts(TEXTS)
    cross = CountingCross()
    model = AnswerModel(spec(size=2), cross)  # type: ignore[arg-type]
    cands = [
        Candidate(t, "", "en", "sentence", 0, use)
        for t, use in zip(TEXTS, (0.9, 0.1, 0.8, 0.2), strict=True)
    ]
    probs = model.probabilities("when do volunteers plant saplings", "en", cands, stats)
    assert len(cross.read) == 2  # the two best by the shortlist
    assert probs[1] == probs[3] == 0.0  # not shortlisted: not read
    assert probs[0] > probs[2]  # more words shared, a higher logit
    model.probabilities("when do volunteers plant saplings", "en", cands, stats)
    assert len(cross.read) == 2  # remembered


def test_only_the_pairs_asked_for_are_read_and_they_score_as_among_all() -> None:
    """The shortlist weighs each candidate against the best of all of them, so the ones asked
    for score as they would in the turn; the cross-encoder reads only those."""
    stats = TermStats.from_texts(TEXTS)
    question = "when do volunteers plant saplings"
    cands = [
        Candidate(t, "", "en", "sentence", 0, use)
        for t, use in zip(TEXTS, (0.9, 0.1, 0.8, 0.2), strict=True)
    ]
    full = AnswerModel(spec(size=4), CountingCross()).probabilities(question, "en", cands, stats)  # type: ignore[arg-type]
    cross = CountingCross()
    model = AnswerModel(spec(size=4), cross)  # type: ignore[arg-type]
    some = model.probabilities(question, "en", cands, stats, only={2})
    assert [t for _, t in cross.read] == [TEXTS[2]]
    assert some[2] == full[2]


def test_a_pair_that_could_not_reach_the_cut_off_is_not_read() -> None:
    """When only "does it reach 0.5?" matters, a shortlisted pair whose probability stays under
    0.5 even at the highest logit the head can give is left unread, and every unit's answer to
    that question is what reading all of them gives."""
    stats = TermStats.from_texts(TEXTS)
    # five question words: the scripted logit (words shared) is at most 5
    bounded = replace(spec(size=4), cross_calibration=Blend(1.0, 4.0, -6.0), logit_max=5.0)
    cands = [
        Candidate(t, "", "en", "sentence", 0, use)
        for t, use in zip(TEXTS, (0.9, 0.1, 0.8, 0.2), strict=True)
    ]
    question = "when do volunteers plant saplings"
    everything = AnswerModel(bounded, CountingCross())  # type: ignore[arg-type]
    full = everything.probabilities(question, "en", cands, stats)
    cross = CountingCross()
    pruned = AnswerModel(bounded, cross).probabilities(question, "en", cands, stats, at=0.5)  # type: ignore[arg-type]
    assert sorted(t for _, t in cross.read) == sorted([TEXTS[0], TEXTS[2]])
    assert list(pruned >= 0.5) == list(full >= 0.5) == [True, False, False, False]
    unknown = replace(bounded, logit_max=None)  # a model file without the bound: all are read
    cross = CountingCross()
    AnswerModel(unknown, cross).probabilities(question, "en", cands, stats, at=0.5)  # type: ignore[arg-type]
    assert len(cross.read) == 4


def test_the_shipped_model_knows_the_highest_logit_its_head_can_give() -> None:
    s = Spec.read()
    assert s.logit_max == logit_ceiling(s.weights)


def test_a_question_in_another_language_is_read_by_the_shortlist_alone() -> None:
    stats = TermStats.from_texts(TEXTS)
    cross = CountingCross()
    model = AnswerModel(spec(), cross)  # type: ignore[arg-type]
    cands = [Candidate(TEXTS[0], "", "en", "sentence", 0, 0.6)]
    probs = model.probabilities("Коли саджають дерева?", "uk", cands, stats)
    assert cross.read == [] and probs[0] == pytest.approx(1 / (1 + np.exp(-0.6)))


def test_a_model_file_of_other_features_or_broken_names_the_fix(tmp_path: Path) -> None:
    data = json.loads(MODEL_FILE.read_text())
    data["features"] = data["features"][:-1]
    stale = tmp_path / "answer.json"
    stale.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="make train-answer-model"):
        Spec.read(stale)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ConfigError, match="reinstall Footnote"):
        Spec.read(broken)


def test_missing_weights_name_the_fix(tmp_path: Path) -> None:
    shutil.copy(MODEL_FILE, tmp_path / "answer.json")
    cross = CrossEncoder(Spec.read(tmp_path / "answer.json"))
    with pytest.raises(ConfigError, match="reinstall Footnote"):
        cross.load()


def test_the_shipped_model_says_what_set_each_number() -> None:
    data = json.loads(MODEL_FILE.read_text())
    assert set(data["set_by"]) >= {
        "shortlist",
        "shortlist_size",
        "cross_encoder",
        "calibration",
        "answer_at",
    }
    s = Spec.read()
    assert 0.0 < s.answer_at < 1.0 and s.shortlist_size > 0 and s.weights.is_file()


@pytest.mark.models
def test_the_shipped_cross_encoder_gives_the_logits_it_was_trained_to(tmp_path: Path) -> None:
    model = build_answer_model(cache_dir=tmp_path)
    assert model.cross is not None
    reference = model.spec.reference
    assert reference
    for question, text, logit in reference:
        assert float(model.cross.logits(question, [text])[0]) == pytest.approx(logit, abs=0.05)
    # read in batches of uneven length, each pair gets the logit it gets alone
    question = "How long do saplings need watering?"
    texts = [*TEXTS, "Watering.", " ".join(TEXTS * 3)]
    alone = [float(model.cross.logits(question, [t])[0]) for t in texts]
    together = model.cross.logits(question, texts, per_batch=3).tolist()
    assert together == pytest.approx(alone, abs=0.05)
    # no pair goes over the bound its weights set: the pair that answers, word for word
    said = "Saplings need watering for their first three summers."
    top = model.cross.logits(f"How long do {said.lower()}", [said, *TEXTS])
    assert model.spec.logit_max is not None and float(top.max()) <= model.spec.logit_max


@pytest.mark.models
def test_the_shipped_model_prefers_the_sentence_that_answers(tmp_path: Path) -> None:
    stats = TermStats.from_texts(TEXTS)
    model = build_answer_model(cache_dir=tmp_path)
    question = "How long do saplings need watering?"
    cands = [Candidate(t, "Riverside garden", "en", "sentence", 0, 0.5) for t in TEXTS]
    probs = model.probabilities(question, "en", cands, stats)
    assert int(np.argmax(probs)) == 2
    assert probs[2] >= model.answer_at > probs[1]


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
    out = tmp_path / "model"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "train_answer_model.py"),
            "--smoke",
            "--sets",
            "or_sharc",
            "--out",
            str(out),
            "--work",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        encoding="utf-8",
        timeout=900,
        env={**os.environ, "FOOTNOTE_DATA_DIR": str(tmp_path / "data")},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    s = Spec.read(out / "answer.json")
    assert 0.0 < s.answer_at < 1.0 and s.weights.is_file() and s.reference
