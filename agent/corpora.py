"""The six public answer sets of ``../shared/eval/answers`` (see its README): split, turns, scores.

Every set is split **by document** into train / dev / test (``split_of``; the set's own ``split``
field is ignored), so a document whose questions tune the answer step never scores it. The whole
corpus is ingested whatever the split: the other documents are realistic distractors.

A question becomes one turn of an ordinary user (no groups; every document is readable by all):

- SQuAD 2.0: the question.
- PolicyQA: "<site> privacy policy: " then the question. Its questions never name the company
  ("Does the company share my data?"), and among 40 policies every one would answer: an
  employee asks about their own company's, which the site's name stands for here.
- ConditionalQA: the ``scenario`` then the question, as one message.
- OR-ShARC: the ``scenario``, the question, then the ``followups`` already asked and answered
  ("Are you under 19? Yes."), all in the one message — not as history, since the user spoke
  first and the follow-ups came from an agent this assistant never was.
- Doc2Dial, MTRAG: ``history_full`` as the turn's earlier messages (agent → assistant), the
  ``question`` as the new message.

Scoring, per corpus (``score`` for one item, ``CorpusReport.metrics`` for the set):

- refused = the answer's status is "unknown"; answered = "answered" or "partial".
- over-refusal: share of answerable items refused. refusal: share of unanswerable items refused.
- citation: share of answered answerable items that cite the item's ``doc`` or an
  ``extra_evidence`` doc (corpus file ``corpus/X.md`` is the indexed doc id ``corpus/X.md``: the
  ingested root is the ``corpus`` folder). Items with no ``doc`` (some MTRAG turns) are left out.
- key facts, only where answers are extractive spans (SQuAD 2.0, PolicyQA, and ConditionalQA
  span answers that occur in the document; in a set of another name, the answers that occur in
  the document): share of answerable items whose answer text holds any
  answer string (case and whitespace aside); a refusal holds none.
- evidence quoted: a citation's quote overlaps an evidence string (one contains the other after
  whitespace and case normalisation, or token F1 >= 0.5).
- answered correctly: answerable — answered, cites the right doc (when it has one) and holds a key
  fact (items with span answers) or quotes the evidence (the others); unanswerable — refused.
- p50 / p95 ms per turn (the answer call only; history is given, not asked).

``--limit N`` takes a stratified sample (``sample``): answerable and unanswerable items keep their
share, chosen by a fixed hash of each id, so the same N gives the same items on every run and a
larger N holds a smaller one's items.

Nothing here loads a model: the training script imports ``split_of`` and ``load_corpus``.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.errors import ConfigError

if TYPE_CHECKING:
    from agent.turns import Answer

DATASETS = ("squad2", "conditionalqa", "policyqa", "doc2dial", "mtrag", "or_sharc")
SPLITS = ("train", "dev", "test")
SPAN_DATASETS = ("squad2", "policyqa")  # every answer is a span of the document
REFUSED = "unknown"
ANSWERED = ("answered", "partial")
SAMPLE_SEED = "footnote-eval-1"
EVIDENCE_F1 = 0.5  # token F1 at which a quote counts as the evidence


def split_of(dataset: str, doc: str | None, qid: str) -> str:
    """train / dev / test (60 / 20 / 20) by document, so one document's questions share a split;
    a question with no document is placed by its id."""
    key = doc if doc else f"id:{qid}"
    bucket = int(hashlib.sha256(f"{dataset}:{key}".encode()).hexdigest(), 16) % 10
    return "train" if bucket < 6 else "dev" if bucket < 8 else "test"


def default_eval_dir() -> Path:
    """``../shared/eval`` beside the checkout, as ``footnote bench`` reads it."""
    return Path(__file__).resolve().parents[2] / "shared" / "eval"


@dataclass(frozen=True)
class CorpusQuestion:
    dataset: str
    id: str
    question: str
    answerable: bool
    answers: tuple[str, ...]
    doc: str | None  # "corpus/X.md", the indexed doc id too
    evidence: tuple[str, ...]  # verbatim from doc, and from the extra docs
    split: str  # split_of, not the set's own field
    extra_docs: tuple[str, ...] = ()  # MTRAG: other documents a cited passage came from
    history: tuple[tuple[str, str], ...] = ()  # (user | assistant, text), oldest first
    scenario: str = ""
    followups: tuple[tuple[str, str], ...] = ()  # OR-ShARC: (follow-up question, answer)
    answer_type: str = ""  # meta.answer_type where the set has one
    title: str = ""  # the document's title where the set gives it (PolicyQA: the site)
    key_facts: tuple[str, ...] = ()  # answers that are spans of the document (see the docstring)

    @property
    def targets(self) -> tuple[str, ...]:
        """The documents a right citation comes from (none: citation not scored)."""
        return ((self.doc,) if self.doc else ()) + self.extra_docs

    @property
    def message(self) -> str:
        """The new message of the turn (see the module docstring for each set)."""
        question = self.question.strip()
        if self.dataset == "policyqa" and self.title:
            question = f"{self.title} privacy policy: {question}"
        parts = [self.scenario.strip(), question]
        parts += [f"{q.strip()} {a.strip()}." for q, a in self.followups]
        return " ".join(p for p in parts if p)


def corpus_dir(eval_dir: Path, name: str) -> Path:
    return answers_dir(eval_dir, name) / "corpus"


def answers_dir(eval_dir: Path, name: str) -> Path:
    """The set's folder, or a ConfigError that says where it goes. Besides the six public sets,
    any folder of ``answers/`` in their form is a set (``benchmarks/xquad_answers.py`` writes
    XQuAD's questions in other languages so)."""
    folder = Path(eval_dir) / "answers" / name
    if name not in DATASETS and not (folder / "questions.jsonl").is_file():
        raise ConfigError(f"unknown dataset {name!r}; one of {', '.join(DATASETS)}, or all")
    if not (folder / "questions.jsonl").is_file() or not (folder / "corpus").is_dir():
        raise ConfigError(
            f"no answer set {name} at {folder} (it needs questions.jsonl and corpus/*.md, see "
            "../shared/eval/answers/README.md); pass --eval-dir DIR, the folder that holds answers/"
        )
    return folder


def load_corpus(eval_dir: Path, name: str) -> list[CorpusQuestion]:
    """Every question of the set, in file order, with its split by document."""
    folder = answers_dir(eval_dir, name)
    texts: dict[str, str] = {}

    def doc_text(doc: str) -> str:
        if doc not in texts:
            texts[doc] = normalise((folder / doc).read_text(encoding="utf-8"))
        return texts[doc]

    out = []
    with open(folder / "questions.jsonl", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(_question(name, json.loads(line), doc_text))
            except (KeyError, TypeError, ValueError) as exc:
                raise ConfigError(
                    f"{folder / 'questions.jsonl'} line {n} does not follow the schema of "
                    f"answers/README.md ({exc!r}); re-run its converter"
                ) from exc
    return out


def _question(name: str, r: dict[str, Any], doc_text: Callable[[str], str]) -> CorpusQuestion:
    meta = r.get("meta") or {}
    answer_type = str(meta.get("answer_type") or "")
    answers = tuple(str(a) for a in r.get("answers") or [])
    doc = r.get("doc") or None
    extra = r.get("extra_evidence") or []
    key_facts: tuple[str, ...] = ()
    if r["answerable"] and doc:
        if name in SPAN_DATASETS:
            key_facts = answers
        elif (name == "conditionalqa" and answer_type == "span") or name not in DATASETS:
            key_facts = tuple(a for a in answers if normalise(a) in doc_text(doc))
    return CorpusQuestion(
        dataset=name,
        id=str(r["id"]),
        question=str(r["question"]),
        answerable=bool(r["answerable"]),
        answers=answers,
        doc=doc,
        evidence=tuple(str(e) for e in r.get("evidence") or [])
        + tuple(str(e) for x in extra for e in x.get("evidence") or []),
        # a set of another name may say its split (by document, as its converter chose it)
        split=str(r["split"])
        if name not in DATASETS and r.get("split") in SPLITS
        else split_of(name, doc, str(r["id"])),
        extra_docs=tuple(dict.fromkeys(x["doc"] for x in extra if x.get("doc") != doc)),
        history=tuple(
            ("user" if h["role"] == "user" else "assistant", str(h["text"]))
            for h in r.get("history_full") or []
        ),
        scenario=str(r.get("scenario") or ""),
        followups=tuple((str(f["question"]), str(f["answer"])) for f in r.get("followups") or []),
        answer_type=answer_type,
        title=str(r.get("title") or ""),
        key_facts=key_facts,
    )


def sample(questions: Sequence[CorpusQuestion], limit: int | None) -> list[CorpusQuestion]:
    """At most ``limit`` questions, answerable and unanswerable in their shares, each part
    picked by a fixed hash of its id; file order kept."""
    if limit is None or limit >= len(questions):
        return list(questions)
    ans = [q for q in questions if q.answerable]
    unans = [q for q in questions if not q.answerable]
    n_ans = round(limit * len(ans) / len(questions)) if questions else 0
    n_un = limit - n_ans
    if n_un > len(unans):
        n_ans, n_un = limit - len(unans), len(unans)

    def first(part: list[CorpusQuestion], n: int) -> list[CorpusQuestion]:
        return sorted(part, key=_rank)[:n]

    keep = {id(q) for q in first(ans, n_ans) + first(unans, n_un)}
    return [q for q in questions if id(q) in keep]


def _rank(q: CorpusQuestion) -> str:
    return hashlib.sha256(f"{SAMPLE_SEED}:{q.dataset}:{q.id}".encode()).hexdigest()


def corpus_key(files: Sequence[Path], settings: Any) -> str:
    """12 hex digits over the corpus files (names and bytes) and whatever of the settings shapes
    the index: a scratch index is reused while this holds."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode())
    for path in sorted(files):
        digest.update(path.name.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:12]


# -- scoring ------------------------------------------------------------------------------------
def normalise(text: str) -> str:
    """NFC, every whitespace run (NBSP too) one space, lower case: how evidence is compared."""
    return " ".join(unicodedata.normalize("NFC", text).split()).lower()


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", normalise(text))


def token_f1(a: str, b: str) -> float:
    ta, tb = _tokens(a), _tokens(b)
    common = sum((Counter(ta) & Counter(tb)).values())
    if not common:
        return 0.0
    precision, recall = common / len(ta), common / len(tb)
    return 2 * precision * recall / (precision + recall)


def quotes_evidence(quote: str, evidence: Sequence[str]) -> bool:
    """The quote and an evidence string overlap: one holds the other, or token F1 >= 0.5."""
    q = normalise(quote).rstrip("…").strip()
    if not q:
        return False
    for e in evidence:
        e_n = normalise(e)
        if e_n and (q in e_n or e_n in q or token_f1(q, e_n) >= EVIDENCE_F1):
            return True
    return False


@dataclass
class Outcome:
    """One item, scored (None: the rule does not apply to it)."""

    id: str
    answerable: bool
    status: str
    ms: float
    cited: bool | None  # cites a target doc (answered answerable items with a target)
    key_fact: bool | None  # holds an answer string (answerable items with span answers)
    evidence_quoted: bool | None  # a quote overlaps the evidence (answered answerable items)
    correct: bool
    answer: str = ""
    cited_docs: list[str] = field(default_factory=list)
    question: str = ""  # the turn's message, for a list of failures

    def failure(self) -> str:
        """One line on why the item is wrong (what failed of the rules that apply)."""
        why = [
            name
            for name, ok in (
                ("not cited", self.cited),
                ("no key fact", self.key_fact),
                ("evidence not quoted", self.evidence_quoted),
            )
            if ok is False
        ]
        if self.refused and self.answerable:
            why = ["refused"]
        elif not self.answerable and not self.refused:
            why = ["answered an unanswerable question"]
        return f"{self.id} {self.status} {self.question[:160]!r}: {', '.join(why) or self.status}"

    @property
    def refused(self) -> bool:
        return self.status == REFUSED


def score(q: CorpusQuestion, answer: Answer, seconds: float) -> Outcome:
    answered = answer.status in ANSWERED
    docs = [c.doc_id for c in answer.citations]
    cited = key_fact = quoted = None
    if q.answerable:
        if answered and q.targets:
            cited = any(d in q.targets for d in docs)
        if q.key_facts:
            text = normalise(answer.text)
            key_fact = answered and any(normalise(a) in text for a in q.key_facts)
        if answered:
            quoted = any(quotes_evidence(c.quote, q.evidence) for c in answer.citations)
        correct = (
            answered and cited is not False and (bool(key_fact) if q.key_facts else bool(quoted))
        )
    else:
        correct = answer.status == REFUSED
    return Outcome(
        id=q.id,
        answerable=q.answerable,
        status=answer.status,
        ms=seconds * 1000,
        cited=cited,
        key_fact=key_fact,
        evidence_quoted=quoted,
        correct=correct,
        answer=answer.text[:500],
        cited_docs=list(dict.fromkeys(docs)),
        question=q.message,
    )


def _share(xs: Sequence[bool | None]) -> float | None:
    kept = [x for x in xs if x is not None]
    return statistics.fmean(1.0 if x else 0.0 for x in kept) if kept else None


def percentile(ms: Sequence[float], p: float) -> float | None:
    """The nearest-rank percentile, as ``footnote eval`` takes p50 / p95."""
    xs = sorted(ms)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else None


@dataclass
class CorpusReport:
    name: str
    split: str
    outcomes: list[Outcome] = field(default_factory=list)
    ingest: dict[str, Any] = field(default_factory=dict)  # chunks, seconds, reused

    @property
    def metrics(self) -> dict[str, float | int | None]:
        ans = [o for o in self.outcomes if o.answerable]
        unans = [o for o in self.outcomes if not o.answerable]
        ms = [o.ms for o in self.outcomes]
        return {
            "questions": len(self.outcomes),
            "answerable": len(ans),
            "unanswerable": len(unans),
            "answered_correctly": _share([o.correct for o in self.outcomes]),
            "refusal": _share([o.refused for o in unans]),
            "over_refusal": _share([o.refused for o in ans]),
            "citation": _share([o.cited for o in ans]),
            "key_facts": _share([o.key_fact for o in ans]),
            "evidence_quoted": _share([o.evidence_quoted for o in ans]),
            "p50_ms": percentile(ms, 0.5),
            "p95_ms": percentile(ms, 0.95),
        }

    def as_json(self) -> dict[str, Any]:
        return {
            "dataset": self.name,
            "split": self.split,
            "metrics": self.metrics,
            "ingest": self.ingest,
            "items": [
                {k: v for k, v in vars(o).items()} | {"refused": o.refused} for o in self.outcomes
            ],
        }
