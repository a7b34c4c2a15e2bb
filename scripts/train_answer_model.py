"""Train the answer model (``agent/answer_model.py``) on public question sets of real documents.

    make train-answer-model                                   # the shipped model (~15 min)
    python scripts/train_answer_model.py --smoke --out /tmp/answer.json   # what CI runs

Data: ``../shared/eval/answers/`` (its README), split by document with ``agent.corpora.split_of``
(train / dev / test = 60 / 20 / 20). Only sets whose licence allows a shipped model are read —
SQuAD 2.0 (CC BY-SA 4.0), Doc2Dial (CC BY 3.0), OR-ShARC (CC BY-SA 3.0), MTRAG (Apache-2.0):
their train splits fit the weights, their dev splits set the cut-offs; test splits are left for
``footnote eval --dataset``. PolicyQA and ConditionalQA are never read here.

Each corpus document is parsed and chunked by Footnote's own ingest code and cut into the units
the answer step quotes (``agent.units``), so the model learns on what it will score. A
question's candidates are the units of its document that share the most rare words with it, a
few from other documents, and a few at random; a unit is a positive when it holds the answer
(the answer string inside the evidence sentence for SQuAD, the grounding span for Doc2Dial, the
cited passage's unit closest to the reference answer for MTRAG, the rule's unit closest to the
question for OR-ShARC); every other candidate is a negative, and all of an unanswerable
question's are. Every example is also shown with its MiniLM signals hidden, as a question in
another language has them, and once more with its word overlap hidden too, as a question asked
across languages has it: so the model has a path for each.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.answer_model import (  # noqa: E402
    FEATURES,
    QUESTION_FEATURES,
    AnswerModel,
    Candidate,
    Logistic,
    features,
    fit,
    question_features,
)
from agent.corpora import split_of  # noqa: E402
from agent.passages import Passage  # noqa: E402
from agent.terms import TermStats  # noqa: E402
from agent.units import units_of  # noqa: E402
from ingest.chunk import chunk_document  # noqa: E402
from ingest.documents import Document  # noqa: E402
from ingest.languages import detect_lang  # noqa: E402
from ingest.parse import parse_file  # noqa: E402

TRAINABLE = ("squad2", "doc2dial", "or_sharc", "mtrag")  # licences that allow a shipped model
ROOT = Path(__file__).resolve().parents[1]
_WORD = re.compile(r"\w+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "by",
        "with",
        "at",
        "as",
        "from",
        "that",
        "this",
        "it",
        "its",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "may",
        "i",
        "you",
        "my",
        "your",
        "we",
        "our",
        "they",
        "their",
        "he",
        "she",
        "his",
        "her",
        "not",
        "no",
        "yes",
        "if",
        "than",
        "then",
        "there",
    ]
)
MINILM_COLUMNS = ("minilm", "minilm_known", "minilm_gap", "minilm_x_cover")
WORD_COLUMNS = ("cover", "cover_context", "cover_gap", "top_term", "minilm_x_cover", "use_x_cover")


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


@dataclass
class Unit:
    doc: str
    headings: str
    text: str
    kind: str
    lang: str


@dataclass
class Corpus:
    units: dict[str, list[Unit]]  # corpus/FILE.md → its units
    chunks: list[str]  # every chunk's text, for the term statistics


def read_corpus(folder: Path, name: str, cache: Path) -> Corpus:
    """Every quotable unit of every document, as the answer step would see it (cached)."""
    stamp = sum(p.stat().st_mtime_ns for p in (folder / "corpus").glob("*.md"))
    cached = cache / f"{name}-{stamp}.pickle"
    if cached.exists():
        loaded: Corpus = pickle.loads(cached.read_bytes())
        return loaded
    units: dict[str, list[Unit]] = {}
    chunks: list[str] = []
    for path in sorted((folder / "corpus").glob("*.md")):
        parsed = parse_file(path, max_bytes=20 * 1024 * 1024)
        doc = Document(f"{name}/{path.name}", parsed.title, str(path), parsed.sections)
        lang = detect_lang(" ".join(s.text for s in parsed.sections[:5]))
        found: dict[str, Unit] = {}
        for chunk in chunk_document(doc):
            chunks.append(chunk.text)
            passage = Passage.from_payload(chunk.payload())
            for u in units_of(passage, 0):
                if not (u.quotable or u.kind == "question") or u.text in found:
                    continue
                crumbs = passage.breadcrumbs
                if u.label and u.label not in crumbs:
                    crumbs = f"{crumbs} > {u.label}"
                found[u.text] = Unit(f"corpus/{path.name}", crumbs, u.text, u.kind, lang)
        units[f"corpus/{path.name}"] = list(found.values())
    corpus = Corpus(units, chunks)
    cache.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(pickle.dumps(corpus))
    return corpus


def _overlap(a: str, b: str) -> float:
    """Share of ``a``'s words found in ``b``."""
    wa = _WORD.findall(a.lower())
    wb = set(_WORD.findall(b.lower()))
    return sum(w in wb for w in wa) / len(wa) if wa else 0.0


def positives(q: dict, cands: list[Unit], name: str) -> tuple[set[int], set[int]]:
    """(units that answer, units left out as neither) for one answerable question."""
    pos, skip = set(), set()
    evidence = [e for e in (q.get("evidence") or []) if isinstance(e, str)]
    answers = [a for a in q.get("answers") or [] if a]
    if name == "squad2":
        for i, c in enumerate(cands):
            holds = any(a in c.text for a in answers)
            inside = any(_overlap(c.text, e) >= 0.6 or _overlap(e, c.text) >= 0.6 for e in evidence)
            if holds and inside:
                pos.add(i)
            elif holds or inside:
                skip.add(i)
    elif name == "doc2dial":
        for i, c in enumerate(cands):
            best = max((max(_overlap(c.text, e), _overlap(e, c.text)) for e in evidence), default=0)
            if best >= 0.6:
                pos.add(i)
            elif best >= 0.2:
                skip.add(i)
    elif name == "mtrag":
        reference = " ".join(answers)
        inside = [
            i for i, c in enumerate(cands) if any(_overlap(c.text, e) >= 0.8 for e in evidence)
        ]
        ranked = sorted(inside, key=lambda i: -_overlap(cands[i].text, reference))
        pos.update(i for i in ranked[:2] if _overlap(cands[i].text, reference) >= 0.3)
        skip.update(set(inside) - pos)
    elif name == "or_sharc":
        snippet = [
            i for i, c in enumerate(cands) if any(_overlap(c.text, e) >= 0.8 for e in evidence)
        ]
        question = f"{q.get('scenario', '')} {q['question']}"
        ranked = sorted(snippet, key=lambda i: -_overlap(question, cands[i].text))
        pos.update(ranked[:1])
        skip.update(set(snippet) - pos)
    return pos, skip


class Lexical:
    """IDF-weighted word overlap between a question and units, for choosing hard negatives."""

    def __init__(self, units: dict[str, list[Unit]]):
        df: Counter[str] = Counter()
        self.bags: dict[str, list[set[str]]] = {}
        for doc, cands in units.items():
            bags = [set(words(f"{c.headings} {c.text}")) for c in cands]
            self.bags[doc] = bags
            for b in bags:
                df.update(b)
        n = sum(len(b) for b in self.bags.values()) or 1
        self.idf = {w: math.log(n / (1 + f)) for w, f in df.items()}
        self.postings: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for doc, bags in self.bags.items():
            for i, b in enumerate(bags):
                for w in b:
                    self.postings[w].append((doc, i))

    def score(self, question: str, doc: str) -> list[float]:
        q = set(words(question))
        return [sum(self.idf.get(w, 0.0) for w in q & b) for b in self.bags.get(doc, [])]

    def elsewhere(self, question: str, doc: str, k: int) -> list[tuple[str, int]]:
        scores: Counter[tuple[str, int]] = Counter()
        for w in set(words(question)):
            post = self.postings.get(w, [])
            if len(post) > 5000:  # a word most units hold says nothing
                continue
            for key in post:
                if key[0] != doc:
                    scores[key] += self.idf.get(w, 0.0)
        return [key for key, _ in scores.most_common(k)]


def question_text(q: dict, name: str) -> str:
    """The message the asker would send: the situation first where the set gives one."""
    if name in ("or_sharc", "conditionalqa") and q.get("scenario"):
        return f"{q['scenario']} {q['question']}"
    return str(q["question"])


@dataclass
class Group:
    """One question with its candidates and their labels."""

    dataset: str
    qid: str
    question: str
    answerable: bool
    units: list[Unit]
    labels: list[float]


def groups(
    eval_dir: Path, name: str, corpus: Corpus, split: str, limit: int | None, rng: random.Random
) -> list[Group]:
    folder = eval_dir / "answers" / name
    lexical = Lexical(corpus.units)
    rows = [json.loads(line) for line in (folder / "questions.jsonl").open(encoding="utf-8")]
    rows = [r for r in rows if split_of(name, r.get("doc"), r["id"]) == split]
    if name in ("doc2dial", "mtrag"):  # a bare "yes, I do" means nothing without its dialogue
        rows = [r for r in rows if len(r["question"].split()) >= 4]
    rows.sort(key=lambda r: r["id"])
    rng.shuffle(rows)
    out = []
    for q in rows:
        if limit and len(out) >= limit:
            break
        doc = q.get("doc")
        if doc is None or doc not in corpus.units:
            continue
        cands = corpus.units[doc]
        text = question_text(q, name)
        pos, skip = positives(q, cands, name) if q["answerable"] else (set(), set())
        if q["answerable"] and not pos:
            continue
        scores = lexical.score(text, doc)
        ranked = sorted(range(len(cands)), key=lambda i: -scores[i])
        negatives = [i for i in ranked if i not in pos and i not in skip][:8]
        rest = [i for i in range(len(cands)) if i not in pos and i not in skip]
        negatives += rng.sample(rest, min(2, len(rest)))
        chosen = [(cands[i], 1.0) for i in sorted(pos)[:3]]
        chosen += [(cands[i], 0.0) for i in dict.fromkeys(negatives)]
        chosen += [(corpus.units[d][i], 0.0) for d, i in lexical.elsewhere(text, doc, 4)]
        out.append(
            Group(
                name,
                q["id"],
                text,
                bool(q["answerable"]),
                [c for c, _ in chosen],
                [label for _, label in chosen],
            )
        )
    return out


def embed_all(gs: list[Group], cache: Path, tag: str) -> dict[str, dict[str, np.ndarray]]:
    """MiniLM and USE vectors of every question and unit text (cached per run tag)."""
    from ingest.embed import UseEmbedder
    from ingest.minilm import MiniLMEmbedder

    path = cache / f"vectors-{tag}.pickle"
    known: dict[str, dict[str, np.ndarray]] = (
        pickle.loads(path.read_bytes()) if path.exists() else {"minilm": {}, "use": {}}
    )
    texts = list(dict.fromkeys([g.question for g in gs] + [u.text for g in gs for u in g.units]))
    for name, embedder in (
        ("minilm", MiniLMEmbedder(threads=2)),
        ("use", UseEmbedder(threads=2)),
    ):
        todo = [t for t in texts if t not in known[name]]
        t0 = time.time()
        for start in range(0, len(todo), 512):
            part = todo[start : start + 512]
            for t, v in zip(part, embedder.embed(part, kind="query"), strict=True):
                known[name][t] = v.astype(np.float16)
        print(f"{name}: {len(todo)} texts embedded ({time.time() - t0:.0f} s)", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(known))
    return known


def matrix(
    gs: list[Group], vectors: dict[str, dict[str, np.ndarray]], stats: dict[str, TermStats]
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Features, labels and each row's group index."""
    xs, ys, owner = [], [], []
    for k, g in enumerate(gs):
        qm = vectors["minilm"][g.question].astype(np.float32)
        qu = vectors["use"][g.question].astype(np.float32)
        cands = [
            Candidate(
                u.text,
                u.headings,
                u.lang,
                u.kind,
                float(vectors["minilm"][u.text].astype(np.float32) @ qm),
                float(vectors["use"][u.text].astype(np.float32) @ qu),
            )
            for u in g.units
        ]
        xs.append(features(g.question, "en", cands, stats[g.dataset]))
        ys += g.labels
        owner += [k] * len(cands)
    return np.vstack(xs), np.array(ys), owner


def hidden(x: np.ndarray, columns: Iterable[str], cross: bool = False) -> np.ndarray:
    """``x`` as a question in another language sees it: those signals absent."""
    out = x.copy()
    for c in columns:
        out[:, FEATURES.index(c)] = 0.0
    if cross:
        out[:, FEATURES.index("cross")] = 1.0
    return out


def views(x: np.ndarray) -> list[tuple[str, np.ndarray]]:
    return [
        ("as asked", x),
        ("no MiniLM", hidden(x, MINILM_COLUMNS)),
        ("across languages", hidden(x, MINILM_COLUMNS + WORD_COLUMNS, cross=True)),
    ]


def per_question(
    model: Logistic, gs: list[Group], x: np.ndarray, owner: list[int]
) -> tuple[np.ndarray, list[bool]]:
    """Each question's ``question_features`` and whether its best unit is a positive."""
    p = model.probabilities(x)
    rows: dict[int, list[int]] = defaultdict(list)
    for row, k in enumerate(owner):
        rows[k].append(row)
    feats, right = [], []
    for k in range(len(gs)):
        r = rows[k]
        feats.append(question_features(x[r], p[r]))
        right.append(gs[k].labels[int(np.argmax(p[r]))] > 0)
    return np.array(feats), right


def outcomes(gs: list[Group], q: np.ndarray, cut: float) -> dict[str, tuple[float, float | None]]:
    """Per set: (answerable refused, unanswerable refused) at ``cut``."""
    out = {}
    for name in sorted({g.dataset for g in gs}):
        ans = [k for k, g in enumerate(gs) if g.dataset == name and g.answerable]
        un = [k for k, g in enumerate(gs) if g.dataset == name and not g.answerable]
        over = sum(q[k] < cut for k in ans) / max(len(ans), 1)
        out[name] = (over, sum(q[k] < cut for k in un) / len(un) if un else None)
    return out


def cut_off(gs: list[Group], q: np.ndarray, ceiling: float) -> tuple[float, list[str]]:
    """The cut-off on the question model's probability: the most refusals of unanswerable
    questions (mean over the sets that have them) while no set refuses more than ``ceiling``
    of its answerable ones; without such a cut-off, the one with the best mean of both."""
    lines, feasible, fallback = [], [], []
    for cut in np.arange(0.05, 0.951, 0.025):
        o = outcomes(gs, q, float(cut))
        refusal = [r for _, r in o.values() if r is not None]
        worst = max(over for over, _ in o.values())
        mean_ref = sum(refusal) / max(len(refusal), 1)
        both = (sum(1 - over for over, _ in o.values()) / len(o) + mean_ref) / 2
        lines.append(
            f"cut {cut:.3f}: "
            + ", ".join(
                f"{n} over-refusal {a:.2f}" + (f" refusal {r:.2f}" if r is not None else "")
                for n, (a, r) in o.items()
            )
        )
        fallback.append((both, float(round(cut, 3))))
        if worst <= ceiling:
            feasible.append((mean_ref, float(round(cut, 3))))
    choice = max(feasible)[1] if feasible else max(fallback)[1]
    return choice, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--eval-dir", type=Path, default=ROOT.parent / "shared" / "eval")
    ap.add_argument(
        "--out", type=Path, default=ROOT / "agent" / "models" / "answer" / "answer.json"
    )
    ap.add_argument("--cache", type=Path, default=ROOT / ".footnote" / "train-answer")
    ap.add_argument("--sets", default=",".join(TRAINABLE))
    ap.add_argument("--limit", type=int, default=3000, help="questions per set and split")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--ceiling", type=float, default=0.10, help="most over-refusal per dev set")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--smoke", action="store_true", help="a few questions: the pipeline runs")
    args = ap.parse_args()
    names = [n for n in args.sets.split(",") if n]
    bad = [n for n in names if n not in TRAINABLE]
    if bad:
        raise SystemExit(f"not trained on (licence): {bad}; choose from {TRAINABLE}")
    if not (args.eval_dir / "answers").is_dir():
        raise SystemExit(f"no answer sets in {args.eval_dir}/answers: pass --eval-dir")
    limit = 6 if args.smoke else args.limit
    rng = random.Random(args.seed)
    train_g: list[Group] = []
    dev_g: list[Group] = []
    stats: dict[str, TermStats] = {}
    for name in names:
        t0 = time.time()
        corpus = read_corpus(args.eval_dir / "answers" / name, name, args.cache)
        stats[name] = TermStats.from_texts(corpus.chunks)
        train_g += groups(args.eval_dir, name, corpus, "train", limit, rng)
        dev_g += groups(args.eval_dir, name, corpus, "dev", max(limit // 3, 6), rng)
        print(f"{name}: units read ({time.time() - t0:.0f} s)", flush=True)
    tag = "smoke" if args.smoke else "full"
    vectors = embed_all(train_g + dev_g, args.cache, tag)
    x, y, owner = matrix(train_g, vectors, stats)
    xd, yd, owner_d = matrix(dev_g, vectors, stats)
    # every view of every example, each set weighted alike so SQuAD's size does not decide
    per_set = Counter(train_g[k].dataset for k in owner)
    w = np.array([1.0 / per_set[train_g[k].dataset] for k in owner])
    stacked = np.vstack([v for _, v in views(x)])
    labels = np.concatenate([y] * 3)
    reps = np.concatenate([w] * 3)
    # the weighted fit by repetition: rows drawn in proportion to their weight
    draw = np.random.default_rng(args.seed).choice(
        len(stacked), size=len(stacked), p=reps / reps.sum()
    )
    units = Logistic(*fit(stacked[draw], labels[draw], l2=args.l2))
    # the question model: one row per question and view; answerable or not, each set weighted
    # alike and both classes alike
    qx, qy, qw = [], [], []
    for _, xv in views(x):
        f, _ = per_question(units, train_g, xv, owner)
        qx.append(f)
        qy += [float(g.answerable) for g in train_g]
    qy_a = np.array(qy)
    sets = [g.dataset for g in train_g] * 3
    count = Counter(zip(sets, qy, strict=True))
    classes = Counter(qy)
    qw = [1.0 / count[(s_, y_)] / classes[y_] for s_, y_ in zip(sets, qy, strict=True)]
    qw_a = np.array(qw)
    qx_a = np.vstack(qx)
    draw = np.random.default_rng(args.seed).choice(
        len(qx_a), size=4 * len(qx_a), p=qw_a / qw_a.sum()
    )
    question = Logistic(*fit(qx_a[draw], qy_a[draw], l2=args.l2))
    report, chosen = [], 0.5
    for view, xv in views(xd):
        f, right = per_question(units, dev_g, xv, owner_d)
        q = question.probabilities(f)
        if view == "as asked":
            chosen, lines = cut_off(dev_g, q, args.ceiling)
        for name in sorted({g.dataset for g in dev_g}):
            ks = [k for k, g in enumerate(dev_g) if g.dataset == name and g.answerable]
            top = sum(right[k] for k in ks) / max(len(ks), 1)
            over, ref = outcomes(dev_g, q, chosen)[name]
            report.append(
                f"{view:16s} {name:9s} best unit right {top:.2f}, over-refusal {over:.2f}"
                + (f", refusal {ref:.2f}" if ref is not None else "")
            )
    model = AnswerModel(units, question, chosen)
    print("\n".join(lines + report))
    set_by = {
        "units": f"logistic fit (l2 {args.l2}) on the train splits of {', '.join(names)}: "
        f"{len(train_g)} questions, {len(y)} units, three views each, each set weighted alike",
        "question": "logistic fit on the same questions' best units: answerable or not, each "
        "set and class weighted alike",
        "answer_at": f"the cut-off with the most refusals while no dev split refuses over "
        f"{args.ceiling:.2f} of its answerable questions ({len(dev_g)} dev questions)",
        "dev": report,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(model.to_json(set_by), encoding="utf-8")
    print(f"wrote {args.out}: answer_at {chosen}")
    for f_, wt in sorted(zip(FEATURES, units.weights, strict=True), key=lambda t: -abs(t[1])):
        print(f"  unit {f_:16s} {wt:+.3f}")
    for f_, wt in sorted(
        zip(QUESTION_FEATURES, question.weights, strict=True), key=lambda t: -abs(t[1])
    ):
        print(f"  question {f_:16s} {wt:+.3f}")


if __name__ == "__main__":
    main()
