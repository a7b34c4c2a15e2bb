"""A second source, tried only when the rounds over the company documents found nothing.

Off by default. ``CollectionFallback`` searches another index (a second Qdrant collection or Edge
folder, e.g. a public knowledge base); a web-search API would implement the same one method.
Its passages are marked external, and the answer says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agent.passages import Passage
from agent.retrieval import Retriever


class Fallback(Protocol):
    def search(self, query: str, groups: Sequence[str]) -> list[Passage]: ...


class CollectionFallback:
    def __init__(self, retriever: Retriever, label: str = "external", top_k: int = 5):
        self.retriever, self.label, self.top_k = retriever, label, top_k

    def search(self, query: str, groups: Sequence[str]) -> list[Passage]:
        passages = self.retriever.search(query, groups, top_k=self.top_k)
        for p in passages:
            p.external = True
            p.title = f"{p.title} ({self.label})"
        return passages
