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

from agent.spelling import Speller
from ingest.languages import tokenize

# Words that shape a question but say nothing about its topic (stemmed forms appear too).
_QUESTION_WORDS = (
    "what whats which who whom whose when where why how many much long often tell know explain "
    "describe please can could would should may might must need want get got give find show "
    "list say said anyon anyone someon someone thing info inform information detail details "
    "mean us our we company policy rule rules current currently still now "
    "allow allowed possible okay ok do does did is are was were be "
    # words that shape what is asked (the extreme, the order) rather than its topic
    "newest latest oldest earliest highest lowest cheapest biggest largest smallest most least "
    "maximum minimum max min first last current recent "
    # light verbs in every tense: "the parent who gave birth get" is about birth, not giving
    "gave given gets getting gotten take takes took taken taking make makes made making go goes "
    "went gone going come comes came put puts keep keeps kept has have had having "
    "myself yourself yourselves ourselves themselves himself herself itself"
)
_OTHER_QUESTION_WORDS = {
    "uk": "що який яка яке які якої якому скільки коли де куди як чому чи можна треба потрібно мені "
    "нам наш наша наші мій моя мої я ми ви вони це цей ця ці той та ті котрій котрої котрий "
    "о про для до від по на у в з із робити відбувається",
    "ru": "что какой какая какое какие какого скольк сколько когда где куда как почему ли можно "
    "нужно мне нам наш наша наши мой моя мои я мы вы они это этот эта эти тот та те о про для до "
    "от по на у в с из делать происходит",
    "zh": "什么 怎么 怎样 哪 哪里 哪些 哪天 哪几天 哪个 多少 几 几天 吗 呢 是否 如何 为什么 谁 何时 请问 "
    "可以 能 需要 我们 公司 规定 从 到 放到 是 有 的 了 我 你 他 她 要 会 在 和 与 一共 今年 明年 去年",
    "ja": "何 いくら どこ いつ だれ 誰 どの どれ どう なぜ 教えて ください です ます",
    "de": "was welche welcher welches wer wie wann wo warum wieviel viel viele muss müssen kann "
    "können darf dürfen ich wir mein meine unser unsere ist sind gibt es bis über",
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
    speller: Speller | None = None  # typos corrected against the corpus's own words

    @classmethod
    def from_texts(cls, texts: Iterable[str], known: frozenset[str] = frozenset()) -> TermStats:
        """``known``: common words of the language, which the speller leaves alone."""
        df: Counter = Counter()
        texts = list(texts)
        for text in texts:
            df.update(set(tokenize(text)))
        return cls(df, len(texts), Speller.from_texts(texts, known))

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
