"""XQuAD as answer sets: questions in Chinese and Russian over the English paragraphs (the company
handbook in English, asked in another language), over their own language's, and in English, each
with a set whose documents are silent; how far apart a question's cosines sit across languages; and
where the multilingual embedder puts them against MiniLM.

The six public answer sets are English. XQuAD (``../shared/eval/xquad``, CC BY-SA 4.0) has the
same 1,190 questions and 240 paragraphs in each language, so a question's cosine with a paragraph
can be read in English and across languages on the same pair. ``--out DIR`` writes, in the form of
``answers/`` (README there), one set per pair of question and document language
(``xquad_zh_en``: Chinese questions, English paragraphs; …) and ``xquad_zh_en_silent``: the dev and
test articles' questions over the train articles alone, which cannot answer them. Articles are
split 60 / 20 / 20 by ``split_of``, the same for every language. Then, for instance,

    python benchmarks/xquad_answers.py --out /tmp/xq
    footnote eval --dataset xquad_zh_en --eval-dir /tmp/xq --split dev --limit 200
    python benchmarks/xquad_answers.py --shift        # the cross-language loss, train articles
    python benchmarks/xquad_answers.py --scale        # USE's cosines on MiniLM's scale, the same

``--shift`` embeds each train question in English and in Chinese and Russian with the multilingual
embedder (USE) and prints, over the paragraphs that answer it, the median cosine a question loses
across languages: what ``Calibration.cross_lingual_shift`` reads back. ``--scale`` takes each
train question's sentence that holds its answer and another article's, in each language, and prints
where USE puts them in Chinese and Russian and MiniLM in English: the line through the medians is
what ``Calibration.use_on_minilm_slope`` and ``use_on_minilm_offset`` read back (the line through
the percentiles, printed beside it, for comparison).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

import numpy as np

from agent.corpora import default_eval_dir, split_of

PAIRS = (("zh", "en"), ("ru", "en"), ("zh", "zh"), ("ru", "ru"), ("en", "en"))


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def _found_in(xquad: Path, lang: str) -> dict[str, str]:
    """Each question's id → the id of the paragraph that answers it."""
    lines = (xquad / lang / "qrels_test.tsv").read_text().splitlines()[1:]
    return dict(line.split("\t")[:2] for line in lines)


def _article_file(title: str) -> str:
    return "corpus/" + re.sub(r"[^A-Za-z0-9._-]", "_", title) + ".md"


def _split(doc: str) -> str:
    return split_of("xquad", doc, "")


def write_sets(xquad: Path, out: Path) -> list[str]:
    """Every pair's set and the silent sets under ``out/answers``; their names."""
    names = []
    for q_lang, d_lang in PAIRS:
        paragraphs = _read(xquad / d_lang / "corpus.jsonl")
        answers = {r["_id"]: r["answers"] for r in _read(xquad / d_lang / "queries.jsonl")}
        found_in = _found_in(xquad, q_lang)
        articles: dict[str, list[dict]] = {}
        for p in paragraphs:
            articles.setdefault(p["title"], []).append(p)
        doc_of = {p["_id"]: _article_file(p["title"]) for p in paragraphs}
        text_of = {p["_id"]: p["text"] for p in paragraphs}
        questions = [
            {
                "id": r["_id"],
                "question": r["text"],
                "answerable": True,
                "answers": answers[r["_id"]],
                "doc": doc_of[found_in[r["_id"]]],
                "evidence": [text_of[found_in[r["_id"]]]],
                "split": _split(doc_of[found_in[r["_id"]]]),
            }
            for r in _read(xquad / q_lang / "queries.jsonl")
        ]
        silent = [
            {**q, "id": f"{q['id']}-silent", "answerable": False}
            for q in questions
            if q["split"] != "train"
        ]
        train = {t for t in articles if _split(_article_file(t)) == "train"}
        sets = {
            f"xquad_{q_lang}_{d_lang}": (questions, set(articles)),
            f"xquad_{q_lang}_{d_lang}_silent": (silent, train),
        }
        for name, (asked, kept) in sets.items():
            folder = out / "answers" / name
            shutil.rmtree(folder, ignore_errors=True)
            (folder / "corpus").mkdir(parents=True)
            for title in kept:
                body = "\n\n".join(p["text"] for p in articles[title])
                text = f"# {title.replace('_', ' ')}\n\n{body}\n"
                (folder / _article_file(title)).write_text(text, encoding="utf-8")
            with (folder / "questions.jsonl").open("w", encoding="utf-8") as f:
                for q in asked:
                    f.write(json.dumps(q, ensure_ascii=False) + "\n")
            names.append(name)
    return names


def shift(xquad: Path) -> None:
    """The median cosine a train question loses, asked in Chinese or Russian instead of English,
    with the English paragraph that answers it."""
    from ingest.embed import UseEmbedder

    use = UseEmbedder()
    corpus = _read(xquad / "en" / "corpus.jsonl")
    paragraphs = {p["_id"]: p["text"] for p in corpus}
    titles = {p["_id"]: p["title"] for p in corpus}
    found_in = _found_in(xquad, "en")
    english = {r["_id"]: r["text"] for r in _read(xquad / "en" / "queries.jsonl")}
    ids = [i for i in english if _split(_article_file(titles[found_in[i]])) == "train"]
    docs = use.embed([paragraphs[found_in[i]] for i in ids])
    en = (use.embed([english[i] for i in ids], kind="query") * docs).sum(1)
    losses = []
    for lang in ("zh", "ru"):
        asked = {r["_id"]: r["text"] for r in _read(xquad / lang / "queries.jsonl")}
        other = (use.embed([asked[i] for i in ids], kind="query") * docs).sum(1)
        loss = en - other
        losses.append(loss)
        print(f"{lang} → en: {len(ids)} train questions, median loss {np.median(loss):.3f}")
    print(f"both: median loss {np.median(np.concatenate(losses)):.3f}")


def _answering(xquad: Path, lang: str, ids: list[str]) -> dict[str, str]:
    """Each question's sentence holding its answer, in ``lang``'s paragraph."""
    from ingest.sentences import sentence_spans

    paragraphs = {p["_id"]: p["text"] for p in _read(xquad / lang / "corpus.jsonl")}
    found_in = _found_in(xquad, lang)
    answers = {r["_id"]: r["answers"] for r in _read(xquad / lang / "queries.jsonl")}
    out = {}
    for i in ids:
        text = paragraphs[found_in[i]]
        spans = [text[a:b] for a, b in sentence_spans(text)]
        found = next((s for s in spans if any(a in s for a in answers[i])), None)
        if found:
            out[i] = found
    return out


def scale(xquad: Path, seed: int = 7) -> None:
    """Where the multilingual embedder puts a question's answering sentence and an unrelated one
    in Chinese and Russian, against where MiniLM puts the same question's in English: the line
    through the two medians reads a cosine of the one on the other's scale."""
    import random

    from ingest.embed import UseEmbedder
    from ingest.minilm import MiniLMEmbedder

    titles = {p["_id"]: p["title"] for p in _read(xquad / "en" / "corpus.jsonl")}
    found_in = _found_in(xquad, "en")
    article = {i: titles[d] for i, d in found_in.items()}
    ids = [i for i in found_in if _split(_article_file(article[i])) == "train"]
    sentences = {lang: _answering(xquad, lang, ids) for lang in ("en", "zh", "ru")}
    ids = [i for i in ids if all(i in sentences[lang] for lang in sentences)]
    rng = random.Random(seed)
    other = {i: rng.choice([j for j in ids if article[j] != article[i]]) for i in ids}

    def cosines(embedder: object, lang: str) -> np.ndarray:
        asked = {r["_id"]: r["text"] for r in _read(xquad / lang / "queries.jsonl")}
        q = embedder.embed([asked[i] for i in ids], kind="query")  # type: ignore[attr-defined]
        a = embedder.embed([sentences[lang][i] for i in ids])  # type: ignore[attr-defined]
        u = embedder.embed([sentences[lang][other[i]] for i in ids])  # type: ignore[attr-defined]
        return np.concatenate([(q * u).sum(1), (q * a).sum(1)])

    def medians(c: np.ndarray) -> tuple[float, float]:
        return float(np.median(c[: len(ids)])), float(np.median(c[len(ids) :]))

    qs = np.arange(5, 96, 5)
    mini = cosines(MiniLMEmbedder(), "en")
    m_u, m_a = medians(mini)

    print(f"MiniLM, English: {len(ids)} train questions, unrelated {m_u:.3f}, answering {m_a:.3f}")
    use = UseEmbedder()
    pooled = []
    for lang in ("zh", "ru"):
        c = cosines(use, lang)
        u_u, u_a = medians(c)
        pooled.append((u_u, u_a))
        slope = (m_a - m_u) / (u_a - u_u)
        qq = np.polyfit(np.percentile(c, qs), np.percentile(mini, qs), 1)
        print(
            f"USE, {lang}: unrelated {u_u:.3f}, answering {u_a:.3f}: slope {slope:.3f},"
            f" offset {m_u - slope * u_u:.3f}; quantiles: slope {qq[0]:.3f}, offset {qq[1]:.3f}"
        )
    u_u, u_a = np.mean(pooled, axis=0)
    slope = (m_a - m_u) / (u_a - u_u)
    print(f"both: slope {slope:.3f}, offset {m_u - slope * u_u:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xquad", type=Path, default=default_eval_dir() / "xquad")
    parser.add_argument("--out", type=Path, help="write the answer sets here")
    parser.add_argument("--shift", action="store_true", help="print the cross-language loss")
    parser.add_argument("--scale", action="store_true", help="print USE's scale against MiniLM's")
    args = parser.parse_args()
    if not (args.xquad / "en" / "queries.jsonl").is_file():
        raise SystemExit(f"no XQuAD at {args.xquad}: pass --xquad (../shared/eval/xquad)")
    if args.out:
        print("wrote", ", ".join(write_sets(args.xquad, args.out)))
    if args.shift:
        shift(args.xquad)
    if args.scale:
        scale(args.xquad)
    if not (args.out or args.shift or args.scale):
        parser.error("pass --out DIR, --shift or --scale")


if __name__ == "__main__":
    main()
