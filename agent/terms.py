"""How rare a word is in the indexed corpus, and which words of a question carry its meaning.

The offline reasoner weighs question terms by IDF: "pet" in "pet insurance" matters more than
"policy", and a term the corpus never uses at all is a strong sign the documents are silent.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ingest.languages import tokenize

# Words that shape a question but say nothing about its topic (stemmed forms appear too).
_QUESTION_WORDS = (
    "what whats which who whom whose when where why how many much long often tell know explain "
    "describe please can could would should may might must need want get got give find show "
    "list say said anyon anyone someon someone thing info inform information detail details "
    "mean us our we company policy rule rules current currently still now "
    "allow allowed possible okay ok do does did is are was were be"
)
_OTHER_QUESTION_WORDS = {
    "uk": "що який яка яке які скільки коли де як чому чи можна треба потрібно мені нам наш наша наші",
    "ru": "что какой какая какое какие сколько когда где как почему ли можно нужно мне нам наш наша наши",
    "zh": "什么 怎么 怎样 哪 哪里 哪些 多少 几 吗 呢 是否 如何 为什么 谁 何时 请问 可以 能 需要 我们 公司 规定",
}
QUESTION_WORDS = {t for w in _QUESTION_WORDS.split() for t in (w, *tokenize(w, "en"))} | {
    t
    for lang, words in _OTHER_QUESTION_WORDS.items()
    for w in words.split()
    for t in (w, *tokenize(w, lang))
}


@dataclass
class TermStats:
    df: Counter
    n_docs: int

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> TermStats:
        df: Counter = Counter()
        n = 0
        for text in texts:
            df.update(set(tokenize(text)))
            n += 1
        return cls(df, n)

    def idf(self, term: str) -> float:
        d = self.df.get(term, 0)
        return math.log(1 + (self.n_docs - d + 0.5) / (d + 0.5))

    def key_terms(self, question: str, lang: str | None = None) -> dict[str, float]:
        """Question terms with their IDF weight, question words removed."""
        terms = [
            t
            for t in tokenize(question, lang)
            if t not in QUESTION_WORDS and len(t) > 1 or t.isdigit()
        ]
        return {t: self.idf(t) for t in dict.fromkeys(terms)}

    def unseen(self, terms: Iterable[str]) -> list[str]:
        """Terms no indexed chunk contains (digits excepted: numbers are often phrased differently)."""
        return [t for t in terms if self.df.get(t, 0) == 0 and not re.fullmatch(r"[\d.]+", t)]


def coverage(weights: dict[str, float], tokens: set[str]) -> float:
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in tokens) / total if total else 0.0
