"""What search hands to the answer step: a ``Passage`` (one chunk, its link, its scores).

Its own module so that search, rerankers and reasoners all speak of passages without importing
each other: a reasoner judges passages and never needs the retriever that found them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ingest.index import Hit


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
    extra: dict = field(default_factory=dict)  # reranker / grader scores

    @property
    def body(self) -> str:
        """The text without its breadcrumb header."""
        head = self.breadcrumbs + "\n\n"
        return self.text[len(head) :] if self.text.startswith(head) else self.text

    @classmethod
    def from_hit(cls, hit: Hit) -> Passage:
        p = hit.payload
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
            score=hit.score,
            url=p.get("url"),
            audience=tuple(p.get("audience") or ()),
        )


def link_for(payload: dict) -> str:
    """The source's own URL when it has one, else the local path with a page or heading anchor."""
    base = payload.get("url") or payload.get("source", "")
    if payload.get("page"):
        return f"{base}#page={payload['page']}"
    anchor = payload.get("anchor") or ""
    return f"{base}#{anchor}" if anchor and not anchor.startswith("page=") else base
