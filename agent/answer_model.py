"""The answer model: P(this unit answers the question), learned from public question sets.

Not yet in the answer path: its card (``agent/models/answer/README.md``) gives the figures that
keep it out — it ranks units well, but cannot tell SQuAD's unanswerable questions apart.

Every candidate unit (a sentence, list item or table row of the passages found) is described by
a few signals the answer step already has — closeness in meaning by two sentence embedders
(MiniLM for English, the multilingual USE in every language), the question's key terms it and
its headings state (weighted by rarity), whether it holds the kind of answer asked for, what kind
of unit it is, and how it stands against the other candidates — and a logistic model turns them
into one probability. The weights, the scaling and the cut-off for "I don't know" are data, in
``agent/models/answer/answer.json``, written by ``scripts/train_answer_model.py``
(``make train-answer-model``) from the train and dev splits of four public sets; that file says
what set each number (``agent/models/answer/README.md`` is the card).

Why a model over signals rather than a fine-tuned cross-encoder: on two shared AVX2 cores a
MiniLM cross-encoder trains at ~1–10 pairs a second, hours for one pass over the data; this
model trains in seconds, runs in microseconds, and its inputs are the vectors a turn computes
anyway. ``features`` is the one definition of the inputs, for training and for answering.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from agent.questions import asks, matches_kind
from agent.terms import TermStats, coverage
from ingest.languages import tokenize

MODEL_FILE = Path(__file__).parent / "models" / "answer" / "answer.json"

FEATURES = (
    "minilm",  # cosine with the question, MiniLM (English pairs; 0 otherwise)
    "minilm_known",  # 1 when the MiniLM cosine is known
    "use",  # cosine with the question, multilingual USE
    "minilm_gap",  # minilm minus the best candidate's
    "use_gap",  # use minus the best candidate's
    "cover",  # share of the question's key-term weight the unit states
    "cover_context",  # ... the unit with its headings
    "cover_gap",  # cover_context minus the best candidate's
    "top_term",  # the question's rarest term is in the unit or its headings
    "unseen",  # share of the question's key-term weight no document uses
    "kind_ok",  # the question asks a kind (number, date, who, …) and the unit holds it
    "kind_miss",  # the question asks a kind and the unit does not hold it
    "words",  # log of the unit's length in words
    "row",
    "item",
    "asks_back",  # the unit is itself a question
    "cross",  # the unit is in another language than the question
    "terms",  # log of the number of the question's key terms
    "minilm_x_cover",
    "use_x_cover",
)


@dataclass(frozen=True)
class Candidate:
    text: str
    context: str  # the headings and label it sits under
    lang: str
    kind: str  # sentence, item, row, question
    minilm: float | None  # cosine with the question, when known
    use: float | None


def features(
    question: str, q_lang: str, cands: Sequence[Candidate], stats: TermStats
) -> np.ndarray:
    """One row of ``FEATURES`` per candidate."""
    weights = stats.key_terms(question, q_lang)
    total = sum(weights.values())
    unseen = sum(weights[t] for t in stats.unseen(weights)) / total if total else 0.0
    top = max(weights, key=weights.__getitem__) if weights else None
    kind = asks(question).kind
    asked_kind = kind in ("number", "duration", "date", "who")
    rows = np.zeros((len(cands), len(FEATURES)), dtype=np.float64)
    for i, c in enumerate(cands):
        toks = set(tokenize(c.text, c.lang))
        ctx = toks | set(tokenize(c.context, c.lang))
        holds = matches_kind(kind, c.text) if asked_kind else False
        rows[i] = (
            c.minilm or 0.0,
            float(c.minilm is not None),
            c.use or 0.0,
            0.0,
            0.0,
            coverage(weights, toks) if weights else 0.0,
            coverage(weights, ctx) if weights else 0.0,
            0.0,
            float(top is not None and top in ctx),
            unseen,
            float(asked_kind and holds),
            float(asked_kind and not holds),
            math.log1p(len(c.text.split())),
            float(c.kind == "row"),
            float(c.kind == "item"),
            float(c.kind == "question"),
            float(c.lang != q_lang),
            math.log1p(len(weights)),
            0.0,
            0.0,
        )
    if len(cands):
        col = {name: k for k, name in enumerate(FEATURES)}
        rows[:, col["minilm_gap"]] = rows[:, col["minilm"]] - rows[:, col["minilm"]].max()
        rows[:, col["use_gap"]] = rows[:, col["use"]] - rows[:, col["use"]].max()
        rows[:, col["cover_gap"]] = (
            rows[:, col["cover_context"]] - rows[:, col["cover_context"]].max()
        )
        rows[:, col["minilm_x_cover"]] = rows[:, col["minilm"]] * rows[:, col["cover_context"]]
        rows[:, col["use_x_cover"]] = rows[:, col["use"]] * rows[:, col["cover_context"]]
    return rows


# What the question-level model reads of the best unit: its absolute signals (the unit model
# weighs each against the other candidates; whether anything answers needs them as they are)
BEST = (
    "minilm",
    "minilm_known",
    "use",
    "cover",
    "cover_context",
    "top_term",
    "unseen",
    "kind_miss",
    "cross",
    "terms",
    "asks_back",
)
QUESTION_FEATURES = (*BEST, "logit", "margin")


def question_features(x: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """What says whether the documents answer at all: the best unit's signals, its logit, and
    how far it stands above the next."""
    order = np.argsort(-probs)
    top = order[0]
    second = probs[order[1]] if len(order) > 1 else 0.0
    p = float(np.clip(probs[top], 1e-6, 1 - 1e-6))
    picked = [x[top, FEATURES.index(f)] for f in BEST]
    return np.array([*picked, math.log(p / (1 - p)), p - second])


@dataclass(frozen=True)
class Logistic:
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = ((x - self.mean) / self.scale) @ self.weights + self.bias
        p: np.ndarray = 1.0 / (1.0 + np.exp(-z))
        return p

    def as_dict(self) -> dict[str, object]:
        return {
            "mean": self.mean.round(6).tolist(),
            "scale": self.scale.round(6).tolist(),
            "weights": self.weights.round(6).tolist(),
            "bias": round(self.bias, 6),
        }

    @classmethod
    def of(cls, d: dict[str, object]) -> Logistic:
        return cls(
            np.array(d["mean"]),
            np.array(d["scale"]),
            np.array(d["weights"]),
            float(d["bias"]),  # type: ignore[arg-type]
        )


@dataclass(frozen=True)
class AnswerModel:
    """Two logistic models and one cut-off, as trained: ``units`` ranks the candidates,
    ``question`` says from the best one whether the documents answer at all."""

    units: Logistic
    question: Logistic
    answer_at: float  # the question model's probability from which the documents answer

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        return self.units.probabilities(x)

    def answerable(self, x: np.ndarray, probs: np.ndarray) -> float:
        return float(self.question.probabilities(question_features(x, probs)[None])[0])

    def to_json(self, set_by: dict[str, object]) -> str:
        return (
            json.dumps(
                {
                    "features": list(FEATURES),
                    "question_features": list(QUESTION_FEATURES),
                    "units": self.units.as_dict(),
                    "question": self.question.as_dict(),
                    "answer_at": self.answer_at,
                    "set_by": set_by,
                },
                indent=1,
            )
            + "\n"
        )


@lru_cache(maxsize=4)
def load(path: Path = MODEL_FILE) -> AnswerModel:
    data = json.loads(path.read_text(encoding="utf-8"))
    if tuple(data["features"]) != FEATURES or tuple(data["question_features"]) != QUESTION_FEATURES:
        raise ValueError(
            f"{path} was trained on other features: run `make train-answer-model` again"
        )
    return AnswerModel(
        Logistic.of(data["units"]), Logistic.of(data["question"]), float(data["answer_at"])
    )


def fit(
    x: np.ndarray, y: np.ndarray, l2: float = 1.0, rounds: int = 30
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Logistic regression by Newton's method on standardised features: (mean, scale, weights,
    bias). ``l2`` is the ridge on the weights (not the bias)."""
    mean = x.mean(0)
    scale = x.std(0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    ridge = np.eye(z.shape[1]) * l2
    ridge[-1, -1] = 0.0
    for _ in range(rounds):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        grad = z.T @ (p - y) + ridge @ w
        hess = (z * (p * (1 - p))[:, None]).T @ z + ridge
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return mean, scale, w[:-1], float(w[-1])
