"""What search hands to the answer step: a ``Passage`` (one chunk, its link, its scores).

Its own module so that search, rerankers and reasoners all speak of passages without importing
each other: a reasoner judges passages and never needs the retriever that found them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ingest.documents import ChunkPayload
from ingest.index import Hit


@dataclass
class Scores:
    """How each signal rated a passage, beside the fused ``Passage.score``; empty or None where
    that signal did not run (no sentence vectors, no reranker, not graded yet)."""

    cosine: dict[str, float] = field(default_factory=dict)  # embedder name → cosine with the query
    # embedder name → the cosine of each sentence of the body, in order (``agent.units``)
    sentence_cosines: dict[str, list[float]] = field(default_factory=dict)
    rerank: float | None = None
    grade: float = 0.0  # the reasoner's 0..1 grade for the question it was found for


@dataclass(frozen=True)
class ToolRecord:
    """What a tool returned, for a passage that stands for a tool result rather than a document."""

    tool: str  # "query_crm"
    record: dict[str, Any]  # the tool's JSON reply
    today: date  # the day its ages (days since an order) were counted on


@dataclass
class Passage:
    doc_id: str
    chunk_id: str
    parent_id: str
    title: str
    breadcrumbs: str
    text: str
    source: str
    link: str
    anchor: str
    page: int | None
    updated: str
    owner: str
    lang: str
    score: float
    url: str | None = None
    audience: tuple[str, ...] = ()  # who its text is written for; () = everyone
    scores: Scores = field(default_factory=Scores)
    external: bool = False  # from the fallback source, not the company documents
    tool: ToolRecord | None = None  # set when the passage is a tool's result

    @property
    def body(self) -> str:
        """The text without its breadcrumb header."""
        head = self.breadcrumbs + "\n\n"
        return self.text[len(head) :] if self.text.startswith(head) else self.text

    @classmethod
    def from_hit(cls, hit: Hit) -> Passage:
        return cls.from_payload(hit.payload, hit.score)

    @classmethod
    def from_payload(cls, p: ChunkPayload, score: float = 0.0) -> Passage:
        return cls(
            doc_id=p["doc_id"],
            chunk_id=p["chunk_id"],
            parent_id=p.get("parent_id", ""),
            title=p.get("title", ""),
            breadcrumbs=p.get("breadcrumbs", ""),
            text=p.get("text", ""),
            source=p.get("source", ""),
            link=link_for(p),
            anchor=p.get("anchor", ""),
            page=p.get("page"),
            updated=p.get("updated", ""),
            owner=p.get("owner", ""),
            lang=p.get("lang", "en"),
            score=score,
            url=p.get("url"),
            audience=tuple(p.get("audience") or ()),
        )


def link_for(payload: ChunkPayload) -> str:
    """The source's own URL when it has one, else the local path with a page or heading anchor."""
    base = payload.get("url") or payload.get("source", "")
    if payload.get("page"):
        return f"{base}#page={payload['page']}"
    anchor = payload.get("anchor") or ""
    return f"{base}#{anchor}" if anchor and not anchor.startswith("page=") else base


def one_of_each(passages: list[Passage]) -> list[Passage]:
    """One passage for each set of copies (the same title, headings, text and audience in several
    documents: a page saved twice, a policy uploaded to two sources), at the rank of the best.

    The copies' fused scores differ only by how their vectors were rounded, which shifts with the
    batch a text was embedded in; left to that, which copy an answer cites changes between runs.
    The one kept is the newest, then the first by document id: a choice the next run makes alike.
    """
    groups: dict[tuple[str, str, str, tuple[str, ...]], list[Passage]] = {}
    for p in passages:  # in rank order, so each set of copies stands where its best ranked
        groups.setdefault((p.title, p.breadcrumbs, p.text, p.audience), []).append(p)
    out = []
    for copies in groups.values():
        newest = max(p.updated for p in copies)
        out.append(
            min((p for p in copies if p.updated == newest), key=lambda p: (p.doc_id, p.chunk_id))
        )
    return out
