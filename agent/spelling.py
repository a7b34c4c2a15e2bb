"""Typos in questions, corrected against the words the documents use.

"whats the hotell limit in amsterdm" finds nothing by its words: "hotell" and "amsterdm" occur in
no document. A word the corpus never uses, one edit away from words it does use (a letter
missing, extra, swapped or wrong), is read as the most frequent of them. Words the corpus knows,
short words, numbers and identifiers are left alone. Lookup is by deletions (the SymSpell idea):
every corpus word is indexed under itself and each string one deletion shorter, so a misspelling
meets its candidates through a shared key without comparing it to every word.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

_WORD = re.compile(r"[^\W\d_]{4,}")
_LATIN = re.compile(r"[a-z]+")
MIN_LENGTH = 4


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEAR = {
    ch: {
        _ROWS[r][c]
        for r in range(max(0, row - 1), min(3, row + 2))
        for c in range(max(0, col - 1), min(len(_ROWS[r]), col + 2))
    }
    for row, keys in enumerate(_ROWS)
    for col, ch in enumerate(keys)
}


def _near(a: str, b: str) -> bool:
    """Keys next to each other on a keyboard (a slip of the finger); other scripts: any letter."""
    return a not in _NEAR or b in _NEAR[a]


def _edit_distance_at_most_one(a: str, b: str) -> bool:
    """One insertion, deletion, neighbour swap, or substitution of a neighbouring key (or none)."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return _near(a[diff[0]], b[diff[0]])
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]


class Speller:
    """Corrects Latin-script words only, and only words that are neither in the documents nor in
    ``known`` (a list of common words of the language): "hand" is no typo of "band"."""

    def __init__(self, counts: Counter[str], known: frozenset[str] = frozenset()):
        self.counts, self.known = counts, known
        self._built: dict[str, list[str]] | None = None

    @property
    def _index(self) -> dict[str, list[str]]:
        """Built at the first word to correct: most questions have none, and the index costs a
        few hundred milliseconds over a handbook (every word under each of its deletions)."""
        if self._built is None:
            index: dict[str, list[str]] = defaultdict(list)
            for word in self.counts:
                index[word].append(word)
                for key in _deletes(word):
                    index[key].append(word)
            self._built = index
        return self._built

    @classmethod
    def from_texts(cls, texts: Iterable[str], known: frozenset[str] = frozenset()) -> Speller:
        counts: Counter[str] = Counter()
        for text in texts:
            counts.update(w.lower() for w in _WORD.findall(text))
        return cls(counts, known)

    def word(self, word: str) -> str:
        """The corpus word ``word`` was meant to be, or ``word`` itself."""
        lower = word.lower()
        if len(lower) < MIN_LENGTH or lower in self.counts or not _LATIN.fullmatch(lower):
            return word
        if lower in self.known or lower.rstrip("s") in self.known:
            return word
        candidates = {c for key in ({lower} | _deletes(lower)) for c in self._index.get(key, ())}
        close = [c for c in candidates if _edit_distance_at_most_one(lower, c)]
        if not close:
            return word
        best = max(close, key=lambda c: (self.counts[c], c))
        return best if word.islower() else best.capitalize() if word[0].isupper() else best

    def correct(self, text: str) -> str:
        """``text`` with its misspelt words replaced (case kept where it can be)."""
        return _WORD.sub(lambda m: self.word(m.group(0)), text)
