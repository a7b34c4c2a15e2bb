"""A passage made up for a test: a document's title, date and text, as the index returns it."""

from __future__ import annotations

from agent.passages import Passage


def passage(doc: str, title: str, updated: str, body: str, crumbs: str = "") -> Passage:
    breadcrumbs = crumbs or title
    return Passage(
        doc_id=doc,
        chunk_id=f"{doc}#0",
        parent_id=doc,
        title=title,
        breadcrumbs=breadcrumbs,
        text=f"{breadcrumbs}\n\n{body}",
        source=doc,
        link="",
        anchor="",
        page=None,
        updated=updated,
        owner="",
        lang="en",
        score=1.0,
    )
