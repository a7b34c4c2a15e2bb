"""Language detection and the word tokens BM25 counts.

Chinese is segmented by jieba, English and Russian are stemmed by Snowball, Ukrainian (which
Snowball lacks) is lemmatised by simplemma. Version strings are folded first, so that
``v2.3.1``, ``2.3.1`` and ``2_3_1`` all become the token ``2.3.1``.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from types import ModuleType

import Stemmer

from ingest.stopwords import LATIN_FUNCTION_WORDS, STOPWORDS

_VERSION = re.compile(r"(?<![\w.])[vV]?(\d+)[._](\d+)(?:[._](\d+))?(?:[._](\d+))?(?!\w)")
# Chinese and Japanese: kana, Han (CJK unified ideographs and extensions A, compatibility). The
# one definition of "CJK" in the code base (the chunker counts these characters one token each).
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
KANA_CHARS = "\u3040-\u30ff"  # hiragana and katakana
CJK = re.compile(f"[{CJK_CHARS}]")
_CJK = CJK
_HAN = re.compile(f"[{CJK_CHARS.removeprefix(KANA_CHARS)}]")
_KANA = re.compile(f"[{KANA_CHARS}]")
_KATAKANA_RUN = re.compile(r"[\u30a0-\u30ffー]{2,}")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_UK_ONLY = re.compile(r"[іїєґІЇЄҐ]")
_RU_ONLY = re.compile(r"[ыэъёЫЭЪЁ]")
_WORD = re.compile(r"\d+(?:\.\d+)+|[^\W_]+", re.UNICODE)


def detect_lang(text: str) -> str:
    """A guess by script, then for Latin script by function words: good enough to pick a
    tokenizer, a dense-vector weight and whether a passage is in the asker's language."""
    sample = text[:4000]
    cjk = len(_CJK.findall(sample))
    cyr = len(_CYRILLIC.findall(sample))
    latin = sum(ch.isascii() and ch.isalpha() for ch in sample)
    if cjk and cjk * 2 >= latin * 0.5:
        return "ja" if _KANA.search(sample) else "zh"  # Chinese is never written with kana
    if cyr > latin:
        uk, ru = len(_UK_ONLY.findall(sample)), len(_RU_ONLY.findall(sample))
        return "uk" if uk >= ru and uk > 0 else "ru"
    words = _WORD.findall(sample.lower())
    english = sum(w in STOPWORDS["en"] for w in words)
    counts = {lang: sum(w in fw for w in words) for lang, fw in LATIN_FUNCTION_WORDS.items()}
    best = max(counts, key=lambda lang: counts[lang])
    return best if counts[best] >= 2 and counts[best] > english else "en"


def fold_versions(text: str) -> str:
    """``v2.3.1`` / ``2_3_1`` / ``V2.3.1`` → ``2.3.1`` so every spelling meets in the index."""
    return _VERSION.sub(lambda m: ".".join(g for g in m.groups() if g is not None), text)


@lru_cache(maxsize=4)
def _stemmer(lang: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer({"ru": "russian"}.get(lang, "english"))


@lru_cache(maxsize=1)
def _jieba() -> ModuleType:
    """jieba, imported at the first Chinese or Japanese text: its import alone is ~60 ms that an
    English question need not pay (its dictionary loads later still, at the first cut)."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    module: ModuleType = jieba  # untyped: no stubs
    return module


@lru_cache(maxsize=200_000)
def _uk_lemma(word: str) -> str:
    import simplemma  # at the first Ukrainian word, as jieba above

    return simplemma.lemmatize(word, lang="uk")


def tokenize(text: str, lang: str | None = None) -> list[str]:
    """Lower-cased, stemmed (or segmented) content words; mixed-script text is handled per word."""
    text = fold_versions(text)
    lang = lang or detect_lang(text)
    tokens: list[str] = []
    if _KANA.search(text):
        # Japanese: katakana runs are words (mostly nouns: ロンドン, ホテル); hiragana runs are
        # mostly particles and endings and are dropped; Han runs go to jieba like Chinese.
        words = _KATAKANA_RUN.findall(text)
        rest = _KANA.sub(" ", text)
        pieces = [p.strip().lower() for p in _jieba().lcut_for_search(rest)]
        words += [w for p in pieces if p for w in _WORD.findall(p)]
    elif _HAN.search(text):
        # jieba segments Han runs and passes other scripts through as words.
        pieces = [p.strip().lower() for p in _jieba().lcut_for_search(text)]
        words = [w for p in pieces if p for w in _WORD.findall(p)]
    else:
        # the case is kept for the Ukrainian lemmatizer, which tells a name by its capital:
        # "Київ" is Kyiv, "київ" a form of "кий" (a cue)
        words = _WORD.findall(text)
    en, ru = _stemmer("en"), _stemmer("ru")
    for cased in words:
        w = cased.lower()
        if _CJK.search(w):
            if w not in STOPWORDS["zh"]:
                tokens.append(w)
        elif _CYRILLIC.search(w):
            if lang == "uk" or _UK_ONLY.search(w):
                if w not in STOPWORDS["uk"]:
                    tokens.append(_uk_lemma(cased).lower())
            elif w not in STOPWORDS["ru"]:
                tokens.append(ru.stemWord(w))
        elif w not in STOPWORDS["en"]:
            tokens.append(w if w[0].isdigit() else en.stemWord(w))
    return tokens
