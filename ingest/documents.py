"""What flows through ingestion: a parsed Document made of Sections, cut into Chunks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict


@dataclass
class Section:
    """A run of text under one heading path (and, for PDFs, on one page)."""

    path: list[str]  # heading titles from the top, e.g. ["Leave", "Carry-over"]
    text: str
    page: int | None = None
    anchor: str = ""  # heading slug or "page=N"


@dataclass
class Document:
    doc_id: str
    title: str
    source: str  # URL, or the path relative to the ingested root
    sections: list[Section]
    updated: str = ""  # ISO date
    owner: str = ""
    acl: list[str] = field(default_factory=list)
    lang: str = "en"
    content_hash: str = ""
    url: str | None = None
    audience: list[str] = field(default_factory=list)  # who it is written for; [] = everyone
    body_hash: str = ""  # content_hash without who may read it (``DocState.body_hash``)
    no_rule: bool = False  # no access rule and no --acl default: only admins read it


class ChunkPayload(TypedDict):
    """One index point's payload: all the index keeps of a chunk, and all search gives back."""

    doc_id: str
    chunk_id: str
    parent_id: str  # the section it was cut from, for small-to-big
    seq: int  # its place in the document
    title: str
    breadcrumbs: str
    text: str
    source: str
    url: str | None
    anchor: str  # heading slug, or "page=N"
    page: int | None
    updated: str
    owner: str
    acl: list[str]
    lang: str
    content_hash: str
    audience: list[str]
    doc_chunks: NotRequired[int | None]  # the document's chunk count, set when it is written
    body_hash: NotRequired[str]  # absent on points written before it was recorded


@dataclass
class Chunk:
    """One indexed unit. ``payload()`` is exactly what the index stores."""

    doc_id: str
    chunk_id: str
    parent_id: str
    seq: int
    title: str
    breadcrumbs: str
    text: str  # starts with the breadcrumbs, so it makes sense alone
    source: str
    anchor: str
    page: int | None
    updated: str
    owner: str
    acl: list[str]
    lang: str
    content_hash: str
    url: str | None = None
    audience: list[str] = field(default_factory=list)
    body_hash: str = ""

    @property
    def body(self) -> str:
        """The text without its breadcrumbs."""
        return self.text.removeprefix(self.breadcrumbs).lstrip("\n")

    def payload(self) -> ChunkPayload:
        return {
            "doc_id": self.doc_id,
            "chunk_id": self.chunk_id,
            "parent_id": self.parent_id,
            "seq": self.seq,
            "title": self.title,
            "breadcrumbs": self.breadcrumbs,
            "text": self.text,
            "source": self.source,
            "url": self.url,
            "anchor": self.anchor,
            "page": self.page,
            "updated": self.updated,
            "owner": self.owner,
            "acl": self.acl,
            "lang": self.lang,
            "content_hash": self.content_hash,
            "audience": self.audience,
            "body_hash": self.body_hash,
        }
