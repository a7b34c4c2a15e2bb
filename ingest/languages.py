"""Language detection and the word tokens BM25 counts.

Chinese is segmented by jieba, English and Russian are stemmed by Snowball, Ukrainian (which
Snowball lacks) is lemmatised by simplemma. Version strings are folded first, so that
``v2.3.1``, ``2.3.1`` and ``2_3_1`` all become the token ``2.3.1``.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

import Stemmer

_VERSION = re.compile(r"(?<![\w.])[vV]?(\d+)[._](\d+)(?:[._](\d+))?(?:[._](\d+))?(?!\w)")
# Chinese and Japanese: kana, Han (CJK unified ideographs and extensions A, compatibility). The
# one definition of "CJK" in the code base (the chunker counts these characters one token each).
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CJK = re.compile(f"[{CJK_CHARS}]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_KATAKANA_RUN = re.compile(r"[\u30a0-\u30ffー]{2,}")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_UK_ONLY = re.compile(r"[іїєґІЇЄҐ]")
_RU_ONLY = re.compile(r"[ыэъёЫЭЪЁ]")
_WORD = re.compile(r"\d+(?:\.\d+)+|[^\W_]+", re.UNICODE)

STOPWORDS = {
    "en": set(
        [
            "a",
            "an",
            "and",
            "are",
            "as",
            "at",
            "be",
            "but",
            "by",
            "can",
            "could",
            "did",
            "do",
            "does",
            "for",
            "from",
            "had",
            "has",
            "have",
            "how",
            "i",
            "if",
            "in",
            "into",
            "is",
            "it",
            "its",
            "me",
            "my",
            "of",
            "on",
            "or",
            "our",
            "should",
            "so",
            "than",
            "that",
            "the",
            "their",
            "them",
            "then",
            "there",
            "these",
            "they",
            "this",
            "to",
            "was",
            "we",
            "were",
            "what",
            "when",
            "where",
            "which",
            "who",
            "whom",
            "why",
            "will",
            "with",
            "would",
            "you",
            "your",
            "about",
            "after",
            "any",
            "all",
            "also",
            "am",
            "been",
            "being",
            "both",
            "each",
            "few",
            "more",
            "most",
            "no",
            "nor",
            "not",
            "only",
            "other",
            "over",
            "same",
            "some",
            "such",
            "too",
            "very",
            "just",
            "own",
            "up",
            "down",
            "out",
            "off",
            "again",
            "further",
            "once",
            "here",
        ]
    ),
    "ru": set(
        [
            "и",
            "в",
            "во",
            "не",
            "что",
            "он",
            "на",
            "я",
            "с",
            "со",
            "как",
            "а",
            "то",
            "все",
            "она",
            "так",
            "его",
            "но",
            "да",
            "ты",
            "к",
            "у",
            "же",
            "вы",
            "за",
            "бы",
            "по",
            "только",
            "ее",
            "мне",
            "было",
            "вот",
            "от",
            "меня",
            "еще",
            "нет",
            "о",
            "из",
            "ему",
            "теперь",
            "когда",
            "даже",
            "ну",
            "ли",
            "если",
            "уже",
            "или",
            "ни",
            "быть",
            "был",
            "него",
            "до",
            "вас",
            "нибудь",
            "опять",
            "уж",
            "вам",
            "ведь",
            "там",
            "потом",
            "себя",
            "ничего",
            "ей",
            "может",
            "они",
            "тут",
            "где",
            "есть",
            "надо",
            "ней",
            "для",
            "мы",
            "тебя",
            "их",
            "чем",
            "была",
            "сам",
            "чтоб",
            "без",
            "будто",
            "чего",
            "раз",
            "тоже",
            "себе",
            "под",
            "будет",
            "ж",
            "тогда",
            "кто",
            "этот",
            "того",
            "потому",
            "этого",
            "какой",
            "совсем",
            "ним",
            "здесь",
            "этом",
            "один",
            "почти",
            "мой",
            "тем",
            "чтобы",
            "нее",
            "сейчас",
            "были",
            "куда",
            "зачем",
            "всех",
            "никогда",
            "можно",
            "при",
            "наконец",
            "два",
            "об",
            "другой",
            "хоть",
            "после",
            "над",
            "больше",
            "тот",
            "через",
            "эти",
            "нас",
            "про",
            "всего",
            "них",
            "какая",
            "много",
            "разве",
            "три",
            "эту",
            "моя",
            "впрочем",
            "хорошо",
            "свою",
            "этой",
            "перед",
            "иногда",
            "лучше",
            "чуть",
            "том",
            "нельзя",
            "такой",
            "им",
            "более",
            "всегда",
            "конечно",
            "всю",
            "между",
        ]
    ),
    "uk": set(
        [
            "і",
            "й",
            "та",
            "в",
            "у",
            "на",
            "з",
            "із",
            "зі",
            "до",
            "від",
            "за",
            "по",
            "про",
            "для",
            "що",
            "як",
            "це",
            "я",
            "ти",
            "він",
            "вона",
            "ми",
            "ви",
            "вони",
            "мене",
            "мені",
            "його",
            "її",
            "їх",
            "нас",
            "вас",
            "бо",
            "але",
            "або",
            "чи",
            "не",
            "ні",
            "так",
            "же",
            "ж",
            "ще",
            "вже",
            "є",
            "був",
            "була",
            "було",
            "були",
            "буде",
            "можна",
            "треба",
            "який",
            "яка",
            "яке",
            "які",
            "де",
            "коли",
            "тут",
            "там",
            "цей",
            "ця",
            "ці",
            "той",
            "та",
            "те",
        ]
    ),
    "zh": set(
        [
            "的",
            "了",
            "和",
            "是",
            "在",
            "我",
            "有",
            "也",
            "就",
            "不",
            "人",
            "都",
            "一",
            "一个",
            "上",
            "很",
            "到",
            "说",
            "要",
            "去",
            "你",
            "会",
            "着",
            "没有",
            "看",
            "好",
            "自己",
            "这",
            "那",
            "吗",
            "呢",
            "吧",
            "啊",
            "与",
            "及",
            "或",
            "为",
            "对",
            "被",
            "把",
            "从",
            "而",
            "其",
            "之",
            "以",
            "等",
            "中",
        ]
    ),
}


# Function words of other Latin-script languages USE covers; the few that are also English words
# (den, pour, son, dove) are rare in English text. A text with at least two of one language's and
# more of them than English ones is not English: it gets the cross-lingual weights (MiniLM is
# English-only) and its passages are graded as other-language ones.
_LATIN_FUNCTION_WORDS = {
    lang: frozenset(words.split())
    for lang, words in {
        "de": "der das und ist nicht ich wie wir kann können muss mein meine meinen ein eine "
        "einen mit für auf zu den dem des sind wird werden bei oder auch nach wo wann warum "
        "welche welcher welches viele wieviel habe haben gibt es sie er mich mir uns",
        "fr": "le la les des est et une un du pour pas que qui dans sur avec je nous vous "
        "comment quel quelle quels quelles combien où mon ma mes ce cette sont puis peux",
        "es": "el los las es y una del por para qué cómo cuántos cuántas cuánto dónde mi mis "
        "se con puedo tengo hay cuál cuándo está son",
        "it": "il lo gli della di che è per non quanti quante quanto dove mio mia sono posso "
        "ho qual quando",
        "pt": "os é da dos das um uma não quantos quantas quanto onde meu minha posso tenho "
        "qual quando são está",
        "nl": "het een en niet ik hoe wat wij kan mijn voor met op zijn hebben hoeveel waar "
        "wanneer welke",
    }.items()
}


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
    counts = {lang: sum(w in fw for w in words) for lang, fw in _LATIN_FUNCTION_WORDS.items()}
    best = max(counts, key=lambda lang: counts[lang])
    return best if counts[best] >= 2 and counts[best] > english else "en"


def fold_versions(text: str) -> str:
    """``v2.3.1`` / ``2_3_1`` / ``V2.3.1`` → ``2.3.1`` so every spelling meets in the index."""
    return _VERSION.sub(lambda m: ".".join(g for g in m.groups() if g is not None), text)


@lru_cache(maxsize=4)
def _stemmer(lang: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer({"ru": "russian"}.get(lang, "english"))


@lru_cache(maxsize=1)
def _jieba():
    """jieba, imported at the first Chinese or Japanese text: its import alone is ~60 ms that an
    English question need not pay (its dictionary loads later still, at the first cut)."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


@lru_cache(maxsize=200_000)
def _uk_lemma(word: str) -> str:
    import simplemma  # at the first Ukrainian word, as jieba above

    return simplemma.lemmatize(word, lang="uk")


def _words(text: str, lang: str) -> list[str]:
    return _WORD.findall(text.lower())


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
        words = _words(text, lang)
    en, ru = _stemmer("en"), _stemmer("ru")
    for w in words:
        if _CJK.search(w):
            if w not in STOPWORDS["zh"]:
                tokens.append(w)
        elif _CYRILLIC.search(w):
            if lang == "uk" or _UK_ONLY.search(w):
                if w not in STOPWORDS["uk"]:
                    tokens.append(_uk_lemma(w))
            elif w not in STOPWORDS["ru"]:
                tokens.append(ru.stemWord(w))
        elif w not in STOPWORDS["en"]:
            tokens.append(w if w[0].isdigit() else en.stemWord(w))
    return tokens
