"""Train the answer model (``agent/answer_model.py``) on public question sets of real documents.

    make train-answer-model            # the shipped model: agent/models/answer/
    python scripts/train_answer_model.py --smoke --out /tmp/answer    # what CI runs (minutes)

Data: ``../shared/eval/answers/`` (its README), split by document with ``agent.corpora.split_of``
(train / dev / test = 60 / 20 / 20). Only sets whose licence allows a shipped model are read —
SQuAD 2.0 (CC BY-SA 4.0), Doc2Dial (CC BY 3.0), OR-ShARC (CC BY-SA 3.0), MTRAG (Apache-2.0):
their train splits fit the weights, their dev splits choose and calibrate; test splits are left
for ``footnote eval --dataset``. PolicyQA and ConditionalQA are never read here.

Steps, each cached under ``--work`` so a later step can be run again alone (``--steps``):

1. ``collect``: every question of a split is asked of the set's scratch index (the one
   ``footnote eval --dataset`` builds) as a turn would ask it — the follow-up read against its
   dialogue, the search, the passages cut into units (``agent.units``) — and each unit is
   labelled: it answers (it holds the answer in the evidence; the grounding span; the cited
   passage's sentence closest to the reference reply; the rule's sentence closest to the
   question), it does not (every unit of an unanswerable question, every unit of another
   document), or unsure (left out).
2. ``shortlist``: the logistic model over the turn's cheap signals (``answer_model.features``),
   each set weighted alike; its size is the smallest that keeps a right unit for
   ``--recall`` of the dev questions whose answer was found, on average over the sets.
3. ``cross``: MiniLM fine-tuned as a cross-encoder (torch, CPU; ``pip install torch==2.13.0``)
   on each train question's right units and its shortlist's best wrong ones; the word and
   position embeddings stay the package's, the rest is saved in float16.
4. ``calibrate``: the cross-encoder, run by OpenVINO exactly as a turn runs it, and the shortlist
   score each dev question's shortlist; a logistic calibration per stage turns scores into
   probabilities; ``answer_at`` is the cut-off with the most refusals of unanswerable dev
   questions while no dev set refuses more than ``--ceiling`` of the answerable questions whose
   answer was found.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.answer_model import (  # noqa: E402
    FEATURES,
    MODEL_DIR,
    Blend,
    Calibration,
    Candidate,
    CrossEncoder,
    Logistic,
    Spec,
    features,
    fit,
    logit_ceiling,
)
from agent.answers import p_of  # noqa: E402
from agent.corpora import CorpusQuestion, load_corpus, normalise, sample  # noqa: E402
from agent.terms import TermStats  # noqa: E402
from ingest.languages import detect_lang  # noqa: E402

TRAINABLE = ("squad2", "doc2dial", "or_sharc", "mtrag")  # licences that allow a shipped model
SIZES = (8, 12, 16, 20, 24, 32)  # shortlist sizes tried
_WORD = re.compile(r"\w+")


# -- 1. collect ---------------------------------------------------------------------------------
def overlap(a: str, b: str) -> float:
    """Share of ``a``'s words found in ``b``."""
    wa = _WORD.findall(a.lower())
    wb = set(_WORD.findall(b.lower()))
    return sum(w in wb for w in wa) / len(wa) if wa else 0.0


def label(q: CorpusQuestion, units: list[dict[str, Any]]) -> None:
    """Set each unit's ``label``: 1 answers, 0 does not, -1 unsure (left out of training)."""
    for u in units:
        u["label"] = 0
    if not q.answerable:
        return
    mine = [u for u in units if u["doc"] in q.targets]
    evidence = [normalise(e) for e in q.evidence]
    answers = [normalise(a) for a in q.answers if a.strip()]
    for u in mine:
        text = normalise(u["text"])
        within = max((overlap(text, e) for e in evidence), default=0.0)  # the unit in the evidence
        covers = max((overlap(e, text) for e in evidence), default=0.0)  # the evidence in the unit
        if q.dataset == "squad2":
            holds = any(a in text for a in answers)
            inside = within >= 0.6 or covers >= 0.6
            u["label"] = 1 if holds and inside else -1 if holds or inside else 0
        elif q.dataset == "doc2dial":
            u["label"] = 1 if within >= 0.5 or covers >= 0.7 else -1 if within >= 0.2 else 0
        else:  # mtrag, or_sharc: the evidence is a whole passage or rule
            u["label"] = -1 if within >= 0.8 else 0
    if q.dataset in ("mtrag", "or_sharc"):
        inside = [u for u in mine if u["label"] == -1]
        reference = normalise(" ".join(q.answers) if q.dataset == "mtrag" else q.message)
        ranked = sorted(inside, key=lambda u: -overlap(normalise(u["text"]), reference))
        for u in ranked[: 2 if q.dataset == "mtrag" else 1]:
            if q.dataset == "or_sharc" or overlap(normalise(u["text"]), reference) >= 0.3:
                u["label"] = 1


def collect(
    name: str, split: str, limit: int, eval_dir: Path, work: Path, files: Any = None
) -> Path:
    """The split's questions with their candidate units, labelled (``work/NAME-SPLIT.jsonl``)."""
    from agent.followups import resolve
    from agent.offline import OfflineReasoner
    from agent.turns import Message
    from agent.units import units as units_of
    from bot.cli.evaluating import corpus_deps, shared_embedders
    from bot.settings import Settings

    out = work / f"{name}-{split}.jsonl"
    if out.exists():
        return out
    settings = Settings()
    deps, _ = corpus_deps(
        settings, eval_dir, name, files=files, embedders=shared_embedders(settings)
    )
    try:
        stats = TermStats.from_texts(deps.index.texts(50_000))
        rules = OfflineReasoner(lambda: stats, deps.embedders)  # the reasoner's rules alone

        def quoted(question: str, passages: list[Any]) -> list[str]:
            """What the rules quote from these passages ([] for "I don't know")."""
            draft = asyncio.run(rules.answer(question, [question], passages, []))
            return [s.text for s in draft.sentences if not s.note]

        asked = [q for q in load_corpus(eval_dir, name) if q.split == split]
        if files is not None:
            names = {f"corpus/{Path(f).name}" for f in files}
            asked = [q for q in asked if q.doc in names]
        asked = sample(asked, limit)
        t0 = time.time()
        rows = []
        for q in asked:
            history = tuple(
                Message("user" if role == "user" else "assistant", t) for role, t in q.history
            )
            question = resolve(q.message, history).question[:500]
            passages = deps.retriever.search(question, [], top_k=8)
            units = []
            for u in units_of(passages, "use"):
                if not (u.quotable or u.kind == "question"):
                    continue
                p = passages[u.passage]
                crumbs = [c.strip() for c in p.breadcrumbs.split(">") if c.strip()]
                if u.label and u.label not in crumbs:
                    crumbs.append(u.label)
                units.append(
                    {
                        "text": u.text,
                        "context": " > ".join(crumbs),
                        "lang": p.lang,
                        "kind": u.kind,
                        "rank": u.passage,
                        "use": u.sim,
                        "doc": p.doc_id,
                    }
                )
            label(q, units)
            lang = detect_lang(question)
            x = features(question, lang, [candidate(u) for u in units], stats)
            verdicts = {}
            if split == "dev":  # what the rules answer, with and without the answering documents
                verdicts["rules"] = quoted(question, passages)
                answering = {u["doc"] for u in units if u["label"] != 0}
                if any(u["label"] == 1 for u in units):
                    rest = [p for p in passages if p.doc_id not in answering]
                    verdicts["rules_silenced"] = quoted(question, rest)
            rows.append(
                verdicts
                | {
                    "set": name,
                    "id": q.id,
                    "answerable": q.answerable,
                    "question": question,
                    "lang": lang,
                    "units": units,
                    "x": x.round(5).tolist(),
                }
            )
    finally:
        deps.close()
    work.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".part")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    tmp.replace(out)
    print(f"{name} {split}: {len(rows)} questions collected ({time.time() - t0:.0f} s)")
    return out


def candidate(u: dict[str, Any]) -> Candidate:
    return Candidate(u["text"], u["context"], u["lang"], u["kind"], u["rank"], u["use"])


def read(path: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    for r in rows:
        r["x"] = np.array(r["x"], dtype=np.float64).reshape(-1, len(FEATURES))
    return rows


def found(r: dict[str, Any]) -> bool:
    """An answerable question whose answer is among its candidates."""
    return bool(r["answerable"]) and any(u["label"] == 1 for u in r["units"])


# -- 2. shortlist -------------------------------------------------------------------------------
def fit_shortlist(train: list[dict[str, Any]], l2: float) -> Logistic:
    """Right units against wrong ones, each set weighted alike; questions whose answer was not
    found say nothing sure of their units and are left out."""
    per_set = Counter(r["set"] for r in train if found(r) or not r["answerable"])
    xs, ys, ws = [], [], []
    for r in train:
        if r["answerable"] and not found(r):
            continue
        y = np.array([u["label"] for u in r["units"]], dtype=np.float64)
        keep = y >= 0
        xs.append(r["x"][keep])
        ys.append(y[keep])
        ws.append(np.full(int(keep.sum()), 1.0 / per_set[r["set"]]))
    w = np.concatenate(ws)
    return Logistic(*fit(np.vstack(xs), np.concatenate(ys), l2=l2, w=w * len(w) / w.sum()))


def shortlist_order(model: Logistic, r: dict[str, Any]) -> np.ndarray:
    if not len(r["x"]):
        return np.zeros(0, dtype=int)
    order: np.ndarray = np.argsort(-model.scores(r["x"]), kind="stable")
    return order


def recall(model: Logistic, rows: list[dict[str, Any]], size: int) -> dict[str, float]:
    hits: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        if found(r):
            top = shortlist_order(model, r)[:size]
            hits[r["set"]].append(any(r["units"][i]["label"] == 1 for i in top))
    return {s: float(np.mean(v)) for s, v in sorted(hits.items())}


# -- 3. cross-encoder ---------------------------------------------------------------------------
def pairs_of(
    rows: list[dict[str, Any]], model: Logistic, negatives: int, rng: random.Random
) -> list[tuple[str, str, float]]:
    """(question, pair text, label): each train question's right units (at most 3), its
    shortlist's best wrong ones and one more wrong one at random."""
    out = []
    for r in rows:
        if r["answerable"] and not found(r):
            continue
        order = shortlist_order(model, r)
        units = r["units"]
        right = [units[i] for i in order if units[i]["label"] == 1][:3]
        wrong = [units[i] for i in order if units[i]["label"] == 0]
        chosen = (
            right
            + wrong[:negatives]
            + rng.sample(wrong[negatives:], min(1, len(wrong[negatives:])))
        )
        out += [(r["question"], candidate(u).pair_text, float(u["label"])) for u in chosen]
    return out


def train_cross(
    pairs: list[tuple[str, str, float]],
    out: Path,
    *,
    max_tokens: int,
    epochs: float,
    lr: float,
    frozen: int,
    pooling: str,
    batch: int,
    seed: int,
    steps: int | None = None,
) -> list[tuple[str, str, float]]:
    """Fine-tune and save the layers that moved (float16); returns a few reference pairs with
    the logits torch gives them, which the OpenVINO graph must reproduce."""
    try:
        import torch
    except ImportError as exc:
        raise SystemExit(
            "training the cross-encoder needs torch: pip install torch==2.13.0 (the CPU wheel; "
            "a training dependency, never the runtime's)"
        ) from exc
    from safetensors.numpy import load_file, save_file

    from ingest.minilm import model_dir, wordpiece

    CrossEncoderModule = torch_module()
    torch.manual_seed(seed)
    rng = random.Random(seed)
    tokenizer = wordpiece(512)
    tokenizer.enable_truncation(max_length=max_tokens, strategy="longest_first")
    encoded = tokenizer.encode_batch([(q, t) for q, t, _ in pairs])
    ids = [(e.ids, e.type_ids) for e in encoded]
    labels = [y for _, _, y in pairs]
    model = CrossEncoderModule(pooling=pooling)
    model.load(load_file(str(model_dir() / "model.safetensors")))
    model.freeze(frozen)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    total = steps or int(math.ceil(len(ids) / batch) * epochs)
    warm = max(1, total // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, 1 - s / total)
    )
    model.train()
    done, started, running = 0, time.time(), 0.0
    while done < total:
        for x, types, mask, y in _batches(ids, labels, batch, rng):
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x, types, mask), y)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            running = 0.98 * running + 0.02 * loss.item() if done else loss.item()
            done += 1
            if done % 50 == 0 or done == total:
                rate = done * batch / (time.time() - started)
                print(f"  step {done}/{total}: loss {running:.3f}, {rate:.1f} pairs/s", flush=True)
            if done >= total:
                break
    model.eval()
    tensors = {k: v.astype(np.float16) for k, v in model.saved().items()}
    out.parent.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(out))
    # the references are computed with the float16 weights, as shipped
    model.load({k: v.astype(np.float32) for k, v in tensors.items()})
    reference = []
    for k in range(0, len(pairs), max(1, len(pairs) // 6))[:6]:
        x, types, mask, _ = next(_batches([ids[k]], [0.0], 1, None))
        with torch.no_grad():
            reference.append((pairs[k][0], pairs[k][1], round(float(model(x, types, mask)[0]), 5)))
    return reference


def torch_module() -> Any:
    """BERT as a torch module whose parameters carry the Hugging Face names of the safetensors
    file (so MiniLM's weights load as they are, and the tuned ones save the same way), with a
    linear head on the first token. Defined on demand: torch is for training only."""
    import torch
    from torch import nn
    from torch.nn import functional

    hidden, heads, inner = 384, 12, 1536
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "aln": "attention.output.LayerNorm",
        "i": "intermediate.dense",
        "o": "output.dense",
        "ln": "output.LayerNorm",
    }

    class Layer(nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.q, self.k, self.v = (nn.Linear(hidden, hidden) for _ in range(3))
            self.ao, self.aln = nn.Linear(hidden, hidden), nn.LayerNorm(hidden, eps=1e-12)
            self.i, self.o = nn.Linear(hidden, inner), nn.Linear(inner, hidden)
            self.ln = nn.LayerNorm(hidden, eps=1e-12)
            self.drop = nn.Dropout(0.1)

        def forward(self, x: Any, bias: Any) -> Any:
            b, t, h = x.shape

            def split(y: Any) -> Any:
                return y.view(b, t, heads, h // heads).transpose(1, 2)

            a = functional.scaled_dot_product_attention(
                split(self.q(x)), split(self.k(x)), split(self.v(x)), attn_mask=bias
            )
            x = self.aln(x + self.drop(self.ao(a.transpose(1, 2).reshape(b, t, h))))
            return self.ln(x + self.drop(self.o(functional.gelu(self.i(x)))))

    class CrossEncoderModule(nn.Module):  # type: ignore[misc]
        def __init__(self, layers: int = 6, pooling: str = "mean") -> None:
            super().__init__()
            self.pooling = pooling
            self.we, self.pe = nn.Embedding(30522, hidden), nn.Embedding(512, hidden)
            self.te, self.eln = nn.Embedding(2, hidden), nn.LayerNorm(hidden, eps=1e-12)
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.classifier, self.drop = nn.Linear(hidden, 1), nn.Dropout(0.1)
            nn.init.normal_(self.classifier.weight, std=0.02)
            nn.init.zeros_(self.classifier.bias)

        def forward(self, ids: Any, types: Any, mask: Any) -> Any:
            positions = torch.arange(ids.shape[1])
            x = self.eln(self.we(ids) + self.pe(positions)[None] + self.te(types))
            bias = (1 - mask[:, None, None, :]) * -1e4
            for layer in self.layers:
                x = layer(x, bias)
            if self.pooling == "mean":
                pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)
            else:
                pooled = x[:, 0]
            return self.classifier(self.drop(pooled)).squeeze(-1)

        def named(self) -> dict[str, Any]:
            out = {
                "embeddings.word_embeddings.weight": self.we.weight,
                "embeddings.position_embeddings.weight": self.pe.weight,
                "embeddings.token_type_embeddings.weight": self.te.weight,
                "embeddings.LayerNorm.weight": self.eln.weight,
                "embeddings.LayerNorm.bias": self.eln.bias,
                "classifier.weight": self.classifier.weight,
                "classifier.bias": self.classifier.bias,
            }
            for n, layer in enumerate(self.layers):
                for short, long in names.items():
                    m = getattr(layer, short)
                    out[f"encoder.layer.{n}.{long}.weight"] = m.weight
                    out[f"encoder.layer.{n}.{long}.bias"] = m.bias
            return out

        def load(self, tensors: dict[str, np.ndarray]) -> None:
            with torch.no_grad():
                for name, p in self.named().items():
                    if name in tensors:
                        p.copy_(torch.as_tensor(np.asarray(tensors[name], dtype=np.float32)))

        def freeze(self, layers: int) -> None:
            """The word and position embeddings always (the package's ship), and the first
            ``layers`` layers."""
            for p in (self.we.weight, self.pe.weight):
                p.requires_grad = False
            for layer in self.layers[:layers]:
                for p in layer.parameters():
                    p.requires_grad = False

        def saved(self) -> dict[str, np.ndarray]:
            """What training moved: every tensor but the frozen ones."""
            return {
                name: p.detach().numpy().copy()
                for name, p in self.named().items()
                if p.requires_grad
            }

    return CrossEncoderModule


def _batches(
    ids: Sequence[tuple[list[int], list[int]]],
    labels: Sequence[float],
    size: int,
    rng: random.Random | None,
) -> Iterator[Any]:
    """Batches of similar length (little padding), in a random order when ``rng`` is given."""
    import torch

    order = sorted(range(len(ids)), key=lambda i: len(ids[i][0]) + (rng.random() if rng else 0))
    chunks = [order[i : i + size] for i in range(0, len(order), size)]
    if rng:
        rng.shuffle(chunks)
    for rows in chunks:
        width = max(len(ids[i][0]) for i in rows)
        x = torch.zeros(len(rows), width, dtype=torch.long)
        types = torch.zeros_like(x)
        mask = torch.zeros(len(rows), width)
        for k, i in enumerate(rows):
            n = len(ids[i][0])
            x[k, :n] = torch.tensor(ids[i][0])
            types[k, :n] = torch.tensor(ids[i][1])
            mask[k, :n] = 1.0
        yield x, types, mask, torch.tensor([labels[i] for i in rows], dtype=torch.float32)


# -- 4. calibrate -------------------------------------------------------------------------------
def blend(pairs: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> Blend:
    """A two-feature logistic fit of (cross-encoder logit, shortlist score), on the raw scores."""
    mean, scale, w, b = fit(pairs, labels, l2=1e-3, w=weights)
    a, c = (float(v) for v in w / scale)
    return Blend(round(a, 6), round(c, 6), round(float(b - a * mean[0] - c * mean[1]), 6))


def platt(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> Calibration:
    """A one-feature logistic fit, as (a, b) on the raw score."""
    mean, scale, w, b = fit(scores[:, None], labels, l2=1e-3, w=weights)
    a = float(w[0] / scale[0])
    return Calibration(round(a, 6), round(float(b - a * mean[0]), 6))


def silenced(r: dict[str, Any]) -> dict[str, Any]:
    """An answerable question asked of documents that lack its answer: the units of every
    document that holds a right one taken away — the documents are silent, as they are for a
    question on a topic nobody wrote about."""
    answering = {u["doc"] for u in r["units"] if u["label"] != 0}
    keep = [k for k, u in enumerate(r["units"]) if u["doc"] not in answering]
    x = r["x"][keep].copy()
    if len(keep):  # the gaps are to the best of what is left
        for col, of in ((FEATURES.index("use_gap"), 0), (FEATURES.index("cover_gap"), 3)):
            x[:, col] = x[:, of] - x[:, of].max()
    return r | {
        "answerable": False,
        "silenced": True,
        "rules": r.get("rules_silenced"),
        "units": [r["units"][k] for k in keep],
        "x": x,
    }


def dev_scores(
    rows: list[dict[str, Any]], shortlist: Logistic, size: int, cross: CrossEncoder
) -> list[dict[str, Any]]:
    """Per dev question (and per answerable one, silenced: ``silenced``): each shortlisted unit's
    shortlist score, cross-encoder logit (English pairs; None otherwise) and label."""
    out = []
    started, pairs = time.time(), 0
    rows = rows + [silenced(r) for r in rows if found(r)]
    for r in rows:
        order = shortlist_order(shortlist, r)[:size]
        units = [r["units"][i] for i in order]
        short = shortlist.scores(r["x"][order]) if len(order) else np.zeros(0)
        english = [k for k, u in enumerate(units) if u["lang"] == "en"] if r["lang"] == "en" else []
        logits = cross.logits(r["question"], [candidate(units[k]).pair_text for k in english])
        pairs += len(english)
        ce: list[float | None] = [None] * len(units)
        for k, v in zip(english, logits.tolist(), strict=True):
            ce[k] = v
        out.append(
            {
                "set": r["set"] + (" silenced" if r.get("silenced") else ""),
                "answerable": r["answerable"],
                "found": found(r),
                "short": short.tolist(),
                "cross": ce,
                "labels": [u["label"] for u in units],
                "texts": [u["text"] for u in units],  # the shortlist's
                "others": [u["text"] for k, u in enumerate(r["units"]) if k not in set(order)],
                "other_labels": [
                    u["label"] for k, u in enumerate(r["units"]) if k not in set(order)
                ],
                "rules": r.get("rules"),  # what the rules quote (dev rows collected with them)
            }
        )
    print(
        f"  {pairs} dev pairs read by the cross-encoder ({pairs / (time.time() - started):.0f}/s)"
    )
    return out


def probabilities(d: dict[str, Any], short_cal: Calibration, cross_cal: Blend) -> list[float]:
    return [
        float(cross_cal(np.array(c), np.array(s)))
        if c is not None
        else float(short_cal(np.array(s)))
        for s, c in zip(d["short"], d["cross"], strict=True)
    ]


def best_probability(d: dict[str, Any], short_cal: Calibration, cross_cal: Blend) -> float:
    return max(probabilities(d, short_cal, cross_cal), default=0.0)


def choose_cut(
    scored: list[dict[str, Any]], best: list[float], ceiling: float
) -> tuple[float, dict[str, dict[str, float]]]:
    """The cut-off with the most refusals of unanswerable questions (mean over the sets that have
    them) while no set refuses more than ``ceiling`` of its answerable questions whose answer was
    found; without one, the cut-off that refuses least of those."""
    sets = sorted({d["set"] for d in scored})

    def at(cut: float) -> dict[str, dict[str, float]]:
        out = {}
        for s in sets:
            ans = [
                b < cut for d, b in zip(scored, best, strict=True) if d["set"] == s and d["found"]
            ]
            un = [
                b < cut
                for d, b in zip(scored, best, strict=True)
                if d["set"] == s and not d["answerable"]
            ]
            out[s] = {"over_refusal": float(np.mean(ans)) if ans else 0.0}
            if un:
                out[s]["refusal"] = float(np.mean(un))
        return out

    feasible, fallback = [], []
    for cut in np.round(np.arange(0.02, 0.981, 0.01), 3):
        o = at(float(cut))
        worst = max(v["over_refusal"] for v in o.values())
        refusal = [v["refusal"] for v in o.values() if "refusal" in v]
        fallback.append((worst, float(cut)))
        if worst <= ceiling:
            feasible.append((float(np.mean(refusal)) if refusal else 0.0, float(cut)))
    cut = max(feasible)[1] if feasible else min(fallback)[1]
    return cut, at(cut)


def overrule_cuts(
    scored: list[dict[str, Any]],
    short_cal: Calibration,
    cross_cal: Blend,
    rescue_false: float,
    veto_false: float,
) -> tuple[float, float, dict[str, dict[str, float]]]:
    """Where the model overrules the reasoner's rules (``agent.answers.Opinion``), from the dev
    rows that carry the rules' verdict. ``veto_at``: the highest cut-off at which refusing the
    rules' answer, when none of its quotes reaches it, refuses at most ``veto_false`` of any dev
    set's answerable questions the rules answered right (a quote is a right unit).
    ``rescue_at``: then the lowest at which answering with the model's best unit what the rules
    refused, or what it vetoed, answers at most ``rescue_false`` of any dev set's questions the
    documents are silent on (unanswerable, silenced). Also what each gains on each set."""
    rows = []
    for d in scored:
        if d.get("rules") is None:
            continue
        probs = probabilities(d, short_cal, cross_cal)
        judged = list(zip(d["texts"], probs, strict=True)) + [(t, 0.0) for t in d["others"]]
        best = int(np.argmax(probs)) if probs else -1
        rights = [(t, float(y == 1)) for t, y in zip(d["texts"], d["labels"], strict=True)] + [
            (t, float(y == 1)) for t, y in zip(d["others"], d["other_labels"], strict=True)
        ]
        rows.append(
            {
                "set": d["set"].removesuffix(" silenced"),
                "silent": not d["answerable"],
                "found": d["found"],
                "refused": not d["rules"],
                "best": probs[best] if probs else 0.0,
                "right": best >= 0 and d["labels"][best] == 1,
                "quote_p": [p_of(q, judged) for q in d["rules"]],
                "rules_right": any(p_of(q, rights) == 1.0 for q in d["rules"]),
            }
        )
    sets = sorted({r["set"] for r in rows})
    grid = [float(c) for c in np.round(np.arange(0.02, 0.991, 0.01), 3)]

    def share(rs: list[dict[str, Any]], hit: Any) -> float:
        return float(np.mean([bool(hit(r)) for r in rs])) if rs else 0.0

    def vetoed_at(r: dict[str, Any], v: float) -> bool:
        ps = r["quote_p"]
        return not r["refused"] and bool(ps) and all(p is not None and p < v for p in ps)

    def silent(s: str) -> list[dict[str, Any]]:
        return [r for r in rows if r["set"] == s and r["silent"]]

    def found(s: str) -> list[dict[str, Any]]:
        return [r for r in rows if r["set"] == s and not r["silent"] and r["found"]]

    def false_vetoes(s: str, v: float) -> float:  # of the answers the rules got right
        return share([r for r in found(s) if r["rules_right"]], lambda r: vetoed_at(r, v))

    veto_at = max(
        (v for v in grid if all(false_vetoes(s, v) <= veto_false for s in sets)), default=0.0
    )

    def open_to_rescue(r: dict[str, Any]) -> bool:  # the rules refused, or the model vetoed
        return bool(r["refused"] or vetoed_at(r, veto_at))

    def false_rescues(s: str, c: float) -> float:
        return share(silent(s), lambda r: open_to_rescue(r) and r["best"] >= c)

    rescue_at = next(
        (c for c in grid if all(false_rescues(s, c) <= rescue_false for s in sets)), 1.0
    )
    figures = {}
    for s in sets:
        figures[s] = {
            "rules_over_refusal": share(found(s), lambda r: r["refused"]),
            "rescued_right": share(
                found(s), lambda r: open_to_rescue(r) and r["best"] >= rescue_at and r["right"]
            ),
            "rescued_silent": share(
                silent(s), lambda r: open_to_rescue(r) and r["best"] >= rescue_at
            ),
            "rules_refusal": share(silent(s), lambda r: r["refused"]),
            "vetoed_silent": share(silent(s), lambda r: vetoed_at(r, veto_at)),
            "vetoed_found": share(found(s), lambda r: vetoed_at(r, veto_at)),
            "vetoed_right": false_vetoes(s, veto_at),
        }
    return rescue_at, veto_at, figures


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    ap.add_argument("--out", type=Path, default=MODEL_DIR, help="folder for the model files")
    ap.add_argument("--work", type=Path, default=ROOT / ".footnote" / "train-answer")
    ap.add_argument("--sets", default=",".join(TRAINABLE))
    ap.add_argument("--steps", default="collect,shortlist,cross,calibrate")
    ap.add_argument(
        "--train-limit",
        default="squad2=1500,doc2dial=2000,or_sharc=600,mtrag=600",
        help="train questions per set (SET=N,…): what two shared cores train in about an hour",
    )
    ap.add_argument("--dev-limit", type=int, default=600, help="dev questions per set")
    ap.add_argument("--recall", type=float, default=0.95, help="shortlist recall to keep")
    ap.add_argument("--ceiling", type=float, default=0.10, help="most over-refusal per dev set")
    ap.add_argument(
        "--rescue-false",
        type=float,
        default=0.02,
        help="most of the silent dev questions per set the model may answer where rules refused",
    )
    ap.add_argument(
        "--veto-false",
        type=float,
        default=0.0,
        help="most of the answered dev questions per set the model may refuse over the rules",
    )
    ap.add_argument("--negatives", type=int, default=7)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--frozen", type=int, default=0, help="lower layers left as they are")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--pooling", choices=("first", "mean"), default="mean")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--smoke", action="store_true", help="a few documents and steps: it runs")
    args = ap.parse_args()
    names = [n for n in args.sets.split(",") if n]
    bad = [n for n in names if n not in TRAINABLE]
    if bad:
        raise SystemExit(f"not trained on (licence): {bad}; choose from {', '.join(TRAINABLE)}")
    if not (args.eval_dir / "answers").is_dir():
        raise SystemExit(f"no answer sets in {args.eval_dir}/answers: pass --eval-dir")
    steps = set(args.steps.split(","))
    work = args.work / ("smoke" if args.smoke else "full")
    files: dict[str, Any] = {}
    if args.smoke:  # a dozen documents of each set, ingested into their own scratch index
        for n in names:
            docs = sorted((args.eval_dir / "answers" / n / "corpus").glob("*.md"))
            files[n] = docs[:: max(1, len(docs) // 12)][:12]
    limits = {k: int(v) for k, v in (p.split("=") for p in args.train_limit.split(",") if p)}
    dev_limit = 20 if args.smoke else args.dev_limit
    t0 = time.time()
    train, dev = [], []
    for n in names:
        if "collect" in steps or not (work / f"{n}-train.jsonl").exists():
            train_limit = 40 if args.smoke else limits.get(n, 600)
            collect(n, "train", train_limit, args.eval_dir, work, files.get(n))
            collect(n, "dev", dev_limit, args.eval_dir, work, files.get(n))
        train += read(work / f"{n}-train.jsonl")
        dev += read(work / f"{n}-dev.jsonl")
    shortlist_file = work / "shortlist.json"
    if "shortlist" in steps or not shortlist_file.exists():
        shortlist = fit_shortlist(train, l2=1.0)
        by_size = {k: recall(shortlist, dev, k) for k in SIZES}
        size = next(
            (k for k in SIZES if np.mean(list(by_size[k].values())) >= args.recall), SIZES[-1]
        )
        for k, v in by_size.items():
            print(f"  shortlist {k:2d}: recall " + ", ".join(f"{s} {r:.3f}" for s, r in v.items()))
        shortlist_file.write_text(
            json.dumps({"model": shortlist.as_dict(), "size": size, "recall": by_size[size]})
        )
    saved = json.loads(shortlist_file.read_text())
    shortlist, size = Logistic.of(saved["model"]), int(saved["size"])
    print(f"shortlist: {size} units ({time.time() - t0:.0f} s)")
    weights_file = work / "cross_encoder.safetensors"
    reference_file = work / "reference.json"
    if "cross" in steps or not weights_file.exists():
        rng = random.Random(args.seed)
        pairs = pairs_of(train, shortlist, args.negatives, rng)
        print(f"cross-encoder: {len(pairs)} pairs, {sum(p[2] for p in pairs):.0f} right")
        reference = train_cross(
            pairs,
            weights_file,
            max_tokens=args.max_tokens,
            epochs=args.epochs,
            lr=args.lr,
            frozen=args.frozen,
            pooling=args.pooling,
            batch=args.batch,
            seed=args.seed,
            steps=3 if args.smoke else None,
        )
        reference_file.write_text(json.dumps(reference))
    reference = json.loads(reference_file.read_text())
    spec = Spec(
        shortlist,
        size,
        Calibration(1.0, 0.0),
        Blend(1.0, 0.0, 0.0),
        0.5,
        args.max_tokens,
        weights_file,
        args.pooling,
        tuple(tuple(r) for r in reference),
    )
    cross = CrossEncoder(spec, threads=2, cache_dir=work / "cache")
    # the graph OpenVINO runs is the network torch trained: as close as bfloat16 allows (a CPU
    # with AVX-512 BF16 or AMX runs it in bf16, 8 bits of mantissa; a wrong graph is off by ~1)
    for q, t, want in reference:
        have = float(cross.logits(q, [t])[0])
        if abs(want - have) > 0.05:
            raise SystemExit(f"OpenVINO gives {have:.4f} where torch gave {want:.4f} for {t!r}")
    scores_file = work / "dev-scores.json"  # what the cross-encoder read, kept for a re-cut
    if (
        scores_file.exists()
        and scores_file.stat().st_mtime > weights_file.stat().st_mtime
        and not ({"collect", "shortlist", "cross"} & steps)
    ):
        scored = json.loads(scores_file.read_text())
    else:
        scored = dev_scores(dev, shortlist, size, cross)
        scores_file.write_text(json.dumps(scored))
    per_set = Counter(d["set"] for d in scored)
    xs, ys, ws = [], [], []
    cs, cy, cw = [], [], []
    for d in scored:
        if d["set"].endswith("silenced"):  # its units are its question's, counted once
            continue
        for s, c, y in zip(d["short"], d["cross"], d["labels"], strict=True):
            if y < 0 or (d["answerable"] and not d["found"]):
                continue
            xs.append(s)
            ys.append(y)
            ws.append(1.0 / per_set[d["set"]])
            if c is not None:
                cs.append((c, s))
                cy.append(y)
                cw.append(1.0 / per_set[d["set"]])
    short_cal = platt(np.array(xs), np.array(ys, dtype=float), np.array(ws) * len(ws) / sum(ws))
    cross_cal = blend(np.array(cs), np.array(cy, dtype=float), np.array(cw) * len(cw) / sum(cw))
    best = [best_probability(d, short_cal, cross_cal) for d in scored]
    cut, figures = choose_cut(scored, best, args.ceiling)
    top1 = defaultdict(list)
    for d in scored:
        if d["found"]:
            probs = probabilities(d, short_cal, cross_cal)
            top1[d["set"]].append(d["labels"][int(np.argmax(probs))] == 1 if d["labels"] else False)
    for s in sorted(figures):
        figures[s]["best_unit_right"] = round(float(np.mean(top1[s])), 3) if top1[s] else 0.0
        figures[s] = {k: round(v, 3) for k, v in figures[s].items()}
        print(f"  dev {s}: {figures[s]}")
    rescue_at, veto_at, overrules = overrule_cuts(
        scored, short_cal, cross_cal, args.rescue_false, args.veto_false
    )
    print(f"  rescue_at {rescue_at}, veto_at {veto_at}")
    for s in sorted(overrules):
        overrules[s] = {k: round(v, 3) for k, v in overrules[s].items()}
        print(f"  dev {s} (rules beside the model): {overrules[s]}")
        figures.setdefault(s, {}).update(overrules[s])
    write(
        args.out,
        spec,
        short_cal,
        cross_cal,
        cut,
        (rescue_at, veto_at),
        weights_file,
        reference,
        figures,
        args,
        names,
        len(train),
        len(dev),
    )
    print(f"wrote {args.out}: answer_at {cut} ({time.time() - t0:.0f} s)")


def write(
    out: Path,
    spec: Spec,
    short_cal: Calibration,
    cross_cal: Blend,
    cut: float,
    overrule: tuple[float, float],
    weights_file: Path,
    reference: list[Any],
    figures: dict[str, Any],
    args: argparse.Namespace,
    names: list[str],
    n_train: int,
    n_dev: int,
) -> None:
    import shutil

    out.mkdir(parents=True, exist_ok=True)
    if weights_file.resolve() != (out / "cross_encoder.safetensors").resolve():
        shutil.copyfile(weights_file, out / "cross_encoder.safetensors")
    data = {
        "features": list(FEATURES),
        "shortlist": spec.shortlist.as_dict(),
        "shortlist_size": spec.shortlist_size,
        "shortlist_calibration": [short_cal.a, short_cal.b],
        "cross_calibration": [cross_cal.a, cross_cal.c, cross_cal.b],
        "answer_at": cut,
        "rescue_at": overrule[0],
        "veto_at": overrule[1],
        "cross_encoder": {
            "file": "cross_encoder.safetensors",
            "max_tokens": args.max_tokens,
            "pooling": args.pooling,
            "reference": reference,
            "logit_max": logit_ceiling(out / "cross_encoder.safetensors"),
        },
        "set_by": {
            "logit_max": "the weights: the most the head can give any pair, sqrt(d) * "
            "|w*gamma - mean(w*gamma)| + w.beta + b over the last LayerNorm's gamma, beta "
            "(agent.answer_model.logit_ceiling)",
            "shortlist": f"logistic fit (ridge 1.0) on the units of {n_train} train questions of "
            f"{', '.join(names)}, each set weighted alike",
            "shortlist_size": f"the smallest of {list(SIZES)} keeping a right unit for "
            f"{args.recall} of the dev questions whose answer was found, mean over the sets",
            "cross_encoder": f"MiniLM fine-tuned ({args.epochs} epoch, lr {args.lr}, batch "
            f"{args.batch}, {args.frozen} lower layers frozen, {args.negatives} shortlisted wrong "
            f"units and one at random per question) on the same train questions",
            "calibration": f"logistic fits on the shortlisted units of {n_dev} dev questions, "
            "each set weighted alike: of the shortlist's score (units not in English), and of the "
            "cross-encoder's logit with the shortlist's score (English units)",
            "answer_at": f"the cut-off with the most refusals of unanswerable dev questions while "
            f"no dev set refuses over {args.ceiling} of the answerable ones whose answer was found",
            "rescue_at": f"the lowest cut-off at which answering what the rules refused answers "
            f"at most {args.rescue_false} of any dev set's questions the documents are silent on "
            "(unanswerable, and answerable ones with the answering documents taken away)",
            "veto_at": f"the highest cut-off at which refusing the rules' answer when none of its "
            f"quotes reaches it refuses at most {args.veto_false} of any dev set's answerable "
            "questions the rules answered right",
        },
        "dev": figures,
    }
    (out / "answer.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
