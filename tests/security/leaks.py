"""The leak detector of the ACL probes: what counts as text of a document a reader may not see.

A LEAK is a forbidden document's title, path, any run of ``SHINGLE`` words of its text, or one
of its figures (a number with >= 3 digits or with separators: 78,000 / 0.55 / 2.3.1) that shows
up in an output while being in neither the probe's own question(s) nor any document every reader
may read. Text is compared case-folded on word tokens, so wrapping, Markdown, Slack escaping and
the way a renderer splits a sentence into pieces do not hide it. Echoes of the question are
masked before runs are formed, so where two echoes meet ("I searched for “<q>”, “<q> expanded”")
no new text is read. The ACLs and texts come from the index itself (``Corpus.from_index``), so
the detector judges by what the index enforces.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import unquote

from ingest.index import allowed
from tests.conftest import EVERY_GROUP

SHINGLE = 6  # words; every sentence of >= 6 words contains one
CHUNK_BREAK = "\n\n\f\n\n"  # between chunks in ``Doc.text``

_WORD = re.compile(r"\w+")
_FIGURE = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])")
_MARKER = re.compile(r"\[\d{1,3}\]")  # citation markers inserted into a quoted sentence


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def shingles(tokens: Sequence[str | None], n: int = SHINGLE) -> set[tuple[str, ...]]:
    """Every run of ``n`` words; a ``None`` (masked) word breaks a run."""
    out = set()
    for i in range(len(tokens) - n + 1):
        run = tokens[i : i + n]
        if None not in run:
            out.add(tuple(run))  # type: ignore[arg-type]
    return out


def mask(tokens: list[str], asked: set[tuple[str, ...]], n: int = SHINGLE) -> list[str | None]:
    """The words with every echo of the asker's own text (a run of >= ``n`` words they typed)
    masked: an echo next to other text, or two echoes in a row, then forms no run of its own."""
    out: list[str | None] = list(tokens)
    for i in range(len(tokens) - n + 1):
        if tuple(tokens[i : i + n]) in asked:
            out[i : i + n] = [None] * n
    return out


def figures(text: str) -> dict[str, str]:
    """Distinctive numbers, canonical form (thousands commas dropped) → the form as written."""
    out: dict[str, str] = {}
    for m in _FIGURE.finditer(text):
        raw = m.group(0)
        if sum(ch.isdigit() for ch in raw) >= 3 or re.search(r"\d[.,]\d", raw):
            out.setdefault(raw.replace(",", ""), raw)
    return out


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(
        tuple(haystack[i : i + n]) == tuple(needle) for i in range(len(haystack) - n + 1)
    )


def views(text: str) -> list[str]:
    """The ways a string can carry text: as is, HTML-unescaped (Slack mrkdwn), URL-decoded."""
    plain = _MARKER.sub(" ", html.unescape(text))
    out = [plain]
    decoded = unquote(plain)
    if decoded != plain:
        out.append(decoded)
    return out


@dataclass
class Doc:
    doc_id: str
    title: str
    acl: frozenset[str]
    text: str  # every chunk's text, in order
    source: str = ""  # where it was read from (a path or URL)

    @cached_property
    def tokens(self) -> list[str]:
        return words(self.text)

    @cached_property
    def shingles(self) -> set[tuple[str, ...]]:
        """Runs of words within one chunk: a run across two chunks is no text of the document."""
        return set().union(*(shingles(words(chunk)) for chunk in self.text.split(CHUNK_BREAK)))

    @cached_property
    def figures(self) -> dict[str, str]:
        return figures(self.text)

    @cached_property
    def sentences(self) -> list[str]:
        """Whole sentences of the body, one line each: the chunk headers (breadcrumbs) and a PDF's
        running page headers (lines that repeat) left out, wrapped lines joined."""
        chunks = [c.split("\n\n", 1)[-1] for c in self.text.split(CHUNK_BREAK)]
        lines = Counter(line.strip() for c in chunks for line in c.splitlines() if line.strip())
        out = []
        for body in chunks:
            kept = [
                line
                for line in body.splitlines()
                if lines[line.strip()] < 2 and not re.fullmatch(r"\s*Page \d+\s*", line)
            ]
            for s in re.split(r"(?<=[.!?])\s+", " ".join(" ".join(kept).split())):
                s = s.strip(" -–•")
                if SHINGLE <= len(words(s)) <= 40:
                    out.append(s)
        return list(dict.fromkeys(out))

    def readable_by(self, groups: Sequence[str]) -> bool:
        return bool(self.acl & set(allowed(groups)))


@dataclass
class Leak:
    kind: str  # "title", "path", "sentence", "figure"
    doc_id: str
    evidence: str
    where: str = ""

    def __str__(self) -> str:
        return f"{self.kind} of {self.doc_id}: {self.evidence!r} in {self.where or 'output'}"


@dataclass
class _Secrets:
    """What a set of readers must not see: material of the other documents, not in theirs."""

    shingles: dict[tuple[str, ...], str]  # shingle → doc id
    figures: dict[str, tuple[str, str]]  # canonical figure → (doc id, as written)
    titles: dict[str, list[str]]  # doc id → title words
    paths: dict[str, str]  # doc id → its path (case-folded)


@dataclass
class Corpus:
    docs: dict[str, Doc]
    _secrets: dict[frozenset[str], _Secrets] = field(default_factory=dict, repr=False)

    @classmethod
    def from_index(cls, index) -> Corpus:
        docs = {}
        for doc_id in sorted(index.documents()):
            chunks = index.chunks(doc_id, EVERY_GROUP)
            assert chunks, f"{doc_id} is readable by no group in tests/conftest.py:EVERY_GROUP"
            docs[doc_id] = Doc(
                doc_id=doc_id,
                title=chunks[0].get("title") or doc_id,
                acl=frozenset(a for c in chunks for a in c["acl"]),
                text=CHUNK_BREAK.join(c["text"] for c in chunks),
                source=chunks[0].get("url") or chunks[0].get("source") or "",
            )
        return cls(docs)

    def shared(self, readers: Sequence[Sequence[str]]) -> frozenset[str]:
        """The documents EVERY reader may read (in a channel: what may be shown to all)."""
        return frozenset(
            d for d, doc in self.docs.items() if all(doc.readable_by(g) for g in readers)
        )

    def forbidden(self, readers: Sequence[Sequence[str]]) -> list[str]:
        ok = self.shared(readers)
        return [d for d in self.docs if d not in ok]

    def secrets(self, ok: frozenset[str]) -> _Secrets:
        if ok not in self._secrets:
            visible_shingles = set().union(*(self.docs[d].shingles for d in ok))
            visible_figures = set().union(*(self.docs[d].figures for d in ok))
            visible_tokens = [self.docs[d].tokens for d in ok]
            visible_text = "\n".join(self.docs[d].text.casefold() for d in ok)
            sh: dict[tuple[str, ...], str] = {}
            fig: dict[str, tuple[str, str]] = {}
            titles: dict[str, list[str]] = {}
            paths: dict[str, str] = {}
            for d, doc in self.docs.items():
                if d in ok:
                    continue
                for s in doc.shingles - visible_shingles:
                    sh.setdefault(s, d)
                for canon, raw in doc.figures.items():
                    if canon not in visible_figures:
                        fig.setdefault(canon, (d, raw))
                title = words(doc.title)
                if not any(_contains(t, title) for t in visible_tokens):
                    titles[d] = title
                if d.casefold() not in visible_text:
                    paths[d] = d.casefold()
            self._secrets[ok] = _Secrets(sh, fig, titles, paths)
        return self._secrets[ok]

    def distinctive_sentences(self, doc_id: str, readers: Sequence[Sequence[str]]) -> list[str]:
        """Sentences of a document that carry words the readers cannot find anywhere else."""
        secret = self.secrets(self.shared(readers)).shingles
        return [
            s
            for s in self.docs[doc_id].sentences
            if any(secret.get(sh) == doc_id for sh in shingles(words(s)))
        ]

    def distinctive_figures(self, doc_id: str, readers: Sequence[Sequence[str]]) -> list[str]:
        secret = self.secrets(self.shared(readers)).figures
        return [raw for canon, (d, raw) in secret.items() if d == doc_id]

    def find_leaks(
        self,
        outputs: Iterable[tuple[str, str]],
        readers: Sequence[Sequence[str]],
        asked: Sequence[str],
    ) -> list[Leak]:
        """Leaks in ``outputs`` (where, text) for these readers, given what the asker typed."""
        secret = self.secrets(self.shared(readers))
        asked_views = [v for q in asked for v in views(q)]
        asked_tokens = [words(v) for v in asked_views]
        asked_shingles = set().union(*(shingles(t) for t in asked_tokens))
        asked_figures = set().union(*(figures(v) for v in asked_views))
        asked_text = "\n".join(asked_views).casefold()
        leaks: list[Leak] = []
        seen: set[tuple[str, str, str]] = set()

        def add(leak: Leak) -> None:
            key = (leak.kind, leak.doc_id, leak.evidence)
            if key not in seen:
                seen.add(key)
                leaks.append(leak)

        for where, text in outputs:
            for view in views(text):
                tokens = words(view)
                for s in shingles(mask(tokens, asked_shingles)):
                    if s in secret.shingles:
                        add(Leak("sentence", secret.shingles[s], " ".join(s), where))
                for canon, raw in figures(view).items():
                    if canon in secret.figures and canon not in asked_figures:
                        add(Leak("figure", secret.figures[canon][0], raw, where))
                for d, title in secret.titles.items():
                    if _contains(tokens, title) and not any(
                        _contains(t, title) for t in asked_tokens
                    ):
                        add(Leak("title", d, self.docs[d].title, where))
                folded = view.casefold()
                for d, path in secret.paths.items():
                    if path in folded and path not in asked_text:
                        add(Leak("path", d, d, where))
        return leaks


def strings_in(value: object, where: str = "$") -> Iterator[tuple[str, str]]:
    """Every string anywhere in a JSON-like value (keys too), with its path; numbers are not text.

    Nothing is assumed about the layout, so a renderer moving to other blocks stays covered."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield f"{where}.{k}#key", str(k)
            yield from strings_in(v, f"{where}.{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from strings_in(v, f"{where}[{i}]")


STRUCTURE = {"type", "style", "url"}  # keys that name a part rather than hold its text


def joined(parts: Iterable[tuple[str, str]], where: str) -> tuple[str, str]:
    """The text of one payload as one string, so a sentence split over several elements (rich
    text runs, cells) is still seen whole: every string value in order, but not the keys and
    not the part names between the runs ("type": "text")."""
    texts = [
        text
        for w, text in parts
        if not w.endswith("#key") and w.rsplit(".", 1)[-1] not in STRUCTURE
    ]
    return where, "\n".join(texts)
