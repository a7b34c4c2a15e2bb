"""Made up for a test: a passage as the index returns it, an assistant over documents, and a
turn asked of it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from agent.passages import Passage
from agent.turns import Answer, Message, Turn


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


@contextmanager
def assistant_over(
    files: Mapping[str, str], tmp_path_factory: Any, embedders: Any
) -> Iterator[Any]:
    """The real assistant (index, offline reasoner) over ``files`` (name: text), ingested into
    a data dir of its own; the session's embedders."""
    from agent.assistant import build_assistant
    from bot.app import build_deps
    from bot.settings import Settings

    docs = tmp_path_factory.mktemp("docs")
    for name, text in files.items():
        (docs / name).write_text(text, encoding="utf-8")
    deps = build_deps(Settings(data_dir=tmp_path_factory.mktemp("footnote")))
    deps.__dict__["embedders"] = embedders
    report = deps.ingester.ingest(docs)
    assert not report.failed, report.failed
    try:
        yield build_assistant(deps)
    finally:
        deps.close()


def ask(
    assistant: Any,
    text: str,
    groups: tuple[str, ...] = ("staff",),
    history: tuple[Message, ...] = (),
) -> Answer:
    """One question of a made-up asker in ``groups``, after ``history``, answered by
    ``assistant``."""
    turn = Turn(user_id="u1", text=text, groups=groups, history=history)
    return asyncio.run(assistant.answer(turn))
