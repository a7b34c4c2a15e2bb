"""Sync state on both backends, and a sink that keeps what a sync wrote in memory."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from pydantic import SecretStr

from ingest.settings import DatabaseSettings
from ingest.sources.connector import SourceDocument
from ingest.sources.state import SyncState


@pytest.fixture(params=["sqlite", "postgres"])
def state(request, tmp_path):
    """The sync state in SQLite (the default) and in the real PostgreSQL on 127.0.0.1."""
    if request.param == "sqlite":
        st = SyncState.open(DatabaseSettings(), tmp_path / "data")
    else:
        url = request.getfixturevalue("postgres_url")
        st = SyncState.open(DatabaseSettings(url=SecretStr(url)), tmp_path / "data")
    yield st
    st.close()


class Killed(BaseException):
    """The process died: raised past every ``except Exception``, as SIGKILL would stop it."""


class MemorySink:
    """Holds what a sync wrote, by key. ``die_after`` writes, it dies after writing a batch and
    before the sync records it, the moment that makes resuming interesting."""

    def __init__(self, die_after: int | None = None) -> None:
        self.docs: dict[str, SourceDocument] = {}
        self.writes: list[str] = []
        self.die_after = die_after

    def write(self, source: str, docs: Sequence[SourceDocument]) -> list[tuple[str, str]]:
        for d in docs:
            self.docs[d.key] = d
            self.writes.append(d.key)
        if self.die_after is not None and docs:
            self.die_after -= 1
            if self.die_after == 0:
                raise Killed
        return []

    def delete(self, source: str, keys: Sequence[str]) -> None:
        for k in keys:
            del self.docs[k]

    def finish(self) -> None:
        pass


def ask(question: str, user: str, capsys) -> dict:
    """``footnote ask --json`` as ``user``, in this process (a connector test's index)."""
    from bot.cli import main as cli_main

    capsys.readouterr()
    assert cli_main(["ask", question, "--user", user, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def sees(question: str, fact: str, user: str, capsys) -> bool:
    """Whether ``user``'s answer, or any passage cited to them, carries ``fact``."""
    answer = ask(question, user, capsys)
    return fact in answer["text"] or any(fact in c["quote"] for c in answer["citations"])
