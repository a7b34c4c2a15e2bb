"""How rare a word is in the indexed corpus, and which words of a question carry its meaning.

The offline reasoner weighs question terms by IDF: "pet" in "pet insurance" matters more than
"policy", and a term the corpus never uses at all is a strong sign the documents are silent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Set
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from agent import spelling
from agent.phrasing import pattern
from agent.spelling import Speller
from ingest import languages
from ingest.languages import CJK_CHARS, tokenize

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
# Question words by the script their forms are written in, each set built on first use: the
# Chinese and Ukrainian forms need jieba's dictionary and simplemma's (~1 s to load together),
# which an English question should not pay for.
_SCRIPT_LANGS = {"latin": ("en", "de"), "cyrillic": ("uk", "ru"), "cjk": ("zh", "ja")}
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_CJK = re.compile(f"[{CJK_CHARS}]")
# what joins a part of a message to what leads it: the asker's situation (``OfflineReasoner.plan``)
# or the question a follow-up follows (``agent.followups``)
SITUATED = " — "


def _script(term: str) -> str:
    return "cjk" if _CJK.search(term) else "cyrillic" if _CYRILLIC.search(term) else "latin"


def question_word_forms(lang: str) -> set[str]:
    """A language's question words as written and as ``tokenize`` turns them into terms."""
    words = _QUESTION_WORDS if lang == "en" else _OTHER_QUESTION_WORDS[lang]
    return {t for w in words.split() for t in (w, *tokenize(w, lang))}


@cache
def _question_words(script: str) -> frozenset[str]:
    return frozenset(t for lang in _SCRIPT_LANGS[script] for t in question_word_forms(lang))


# Chinese asks "how many" with 几 or 多 and a measure word ("几间", "几个", "多久"), "which" with
# 哪 ("哪天", "哪位"): the segmenter keeps them as one word, a question word all the same
_CJK_ASKING = re.compile(
    r"^(?:[几哪][个间天次位名件张种条家台本年月周号点项]|哪[里儿些]?|多(?:少|久|长|大|高|远))"
)


def is_question_word(term: str) -> bool:
    """A word that shapes a question rather than naming its topic, in any language we know."""
    script = _script(term)
    return term in _question_words(script) or (
        script == "cjk" and len(term) <= 3 and bool(_CJK_ASKING.fullmatch(term))
    )


# What turns a text into terms and words: a change to any of them makes saved statistics stale.
_TOKENIZING_SOURCES = (__file__, languages.__file__, spelling.__file__)


def _code_digest() -> hashlib._Hash:
    """A hash begun with the code that turns texts into terms."""
    digest = hashlib.sha256()
    for source in _TOKENIZING_SOURCES:
        digest.update(Path(source).read_bytes())
    return digest


@dataclass
class TermStats:
    df: Counter[str]
    n_docs: int
    speller: Speller | None = None  # typos corrected against the corpus's own words

    @classmethod
    def from_texts(cls, texts: Iterable[str], known: frozenset[str] = frozenset()) -> TermStats:
        """``known``: common words of the language, which the speller leaves alone."""
        df: Counter[str] = Counter()
        texts = list(texts)
        for text in texts:
            df.update(set(tokenize(text)))
        return cls(df, len(texts), Speller.from_texts(texts, known))

    @classmethod
    def cached(cls, texts: Iterable[str], known: frozenset[str], path: Path | None) -> TermStats:
        """``from_texts``, kept in ``path`` for the next process with the same texts: tokenizing a
        corpus (and loading jieba's and simplemma's dictionaries to do it) is most of the first
        answer's time. The key covers the texts and the code that turns them into terms."""
        texts = list(texts)
        if path is None:
            return cls.from_texts(texts, known)
        digest = _code_digest()
        for text in sorted(texts):
            digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
        key = digest.hexdigest()
        return cls._load(path, key, known) or cls._build(texts, known, path, key)

    @classmethod
    def cached_for(
        cls, version: str, read: Callable[[], Iterable[str]], known: frozenset[str], path: Path
    ) -> TermStats:
        """``cached``, keyed by the index's ``version`` instead of its texts, so a start over an
        unchanged index reads none of them: hashing every chunk's text cost ~15 ms per thousand
        chunks on each process's first question. ``read`` runs only when the version moved."""
        digest = _code_digest()
        digest.update(b"index version\0" + version.encode())
        key = digest.hexdigest()
        return cls._load(path, key, known) or cls._build(list(read()), known, path, key)

    @classmethod
    def _load(cls, path: Path, key: str, known: frozenset[str]) -> TermStats | None:
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved.get("key") == key:
                return cls(
                    Counter(saved["df"]),
                    saved["n_docs"],
                    Speller(Counter(saved["words"]), known),
                )
        except (OSError, ValueError, KeyError, TypeError):
            pass  # absent, unreadable or from another version: built again by the caller
        return None

    @classmethod
    def _build(cls, texts: list[str], known: frozenset[str], path: Path, key: str) -> TermStats:
        stats = cls.from_texts(texts, known)
        words = stats.speller.counts if stats.speller else {}
        body = {"key": key, "n_docs": stats.n_docs, "df": stats.df, "words": words}
        with contextlib.suppress(OSError):  # a read-only data folder only costs the next start
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.part")
            tmp.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, path)
        return stats

    def idf(self, term: str) -> float:
        d = self.df.get(term, 0)
        return math.log(1 + (self.n_docs - d + 0.5) / (d + 0.5))

    def key_terms(
        self, question: str, lang: str | None = None, situation: float | None = None
    ) -> dict[str, float]:
        """Question terms with their IDF weight, question words removed. With ``situation``, a
        part led by what came before it — the asker's situation ("I am 29, I live in Leeds and
        I keep bees — do I qualify?") or the question a follow-up follows — weighs the words
        only the lead holds together at most ``situation`` times the part's own: the lead says
        which case the asker is in, the part what is asked, and a long story outweighed it. A
        part that points back at the lead ("… — does the company pay for any of that?") is
        about it, and weighs it whole."""
        terms = [
            t
            for t in tokenize(question, lang)
            if not is_question_word(t) and len(t) > 1 or t.isdigit()
        ]
        # jieba's search mode gives a word and its parts ("办公室", "办公", "公室"): one concept,
        # weighed once, as the whole word, or it would outweigh the rest of the question
        whole = [t for t in dict.fromkeys(terms) if _CJK.search(t)]
        parts = {t for t in whole if any(t != w and t in w for w in whole)}
        weights = {t: self.idf(t) for t in dict.fromkeys(terms) if t not in parts}
        _, sep, asked = question.rpartition(SITUATED)
        if not sep or situation is None:
            return weights
        own = set(tokenize(asked, lang)) & weights.keys()
        if not own or pattern("anaphora").search(asked):
            # "— yes, I am" asks nothing of its own, and "— does the company pay for any of
            # that?" asks about the story itself: there the lead is the question
            return weights
        lead_total = sum(w for t, w in weights.items() if t not in own)
        own_total = sum(weights[t] for t in own)
        share = min(1.0, situation * own_total / lead_total) if lead_total else 1.0
        return {t: w if t in own else w * share for t, w in weights.items()}

    def unseen(self, terms: Iterable[str]) -> list[str]:
        """Terms no indexed chunk contains (digits excepted: numbers are often phrased differently)."""
        return [t for t in terms if self.df.get(t, 0) == 0 and not re.fullmatch(r"[\d.]+", t)]


def coverage(weights: dict[str, float], tokens: Set[str]) -> float:
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in tokens) / total if total else 0.0
