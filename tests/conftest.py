"""Shared fixtures: the real embedders, loaded ONCE per session, and the sample handbook ingested
with them once; a guard that lets tests open sockets to loopback only (no test may reach a real
service); and the two tiers.

Tests that load a model are marked ``models``: by hand (``pytestmark = pytest.mark.models``), or
by asking for ``embedders`` (or a fixture built on it, such as ``handbook_deps``), which marks
them here. ``make test-fast`` runs ``-m "not models"``; ``make test`` runs all. A test that loads
a model without the mark fails with a message saying to add it, so the fast tier stays fast.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The chart tests render Helm in-process: helm_python loads Go's runtime, whose asynchronous
# preemption signals crash the whole test process (SIGSEGV) once the embedders' native thread
# pools are up, depending on test order. Go reads GODEBUG from the environment the process
# started with, so setting it here is too late: `make test` sets GODEBUG=asyncpreemptoff=1.

ROOT = Path(__file__).resolve().parent.parent
HANDBOOK = ROOT / "examples" / "handbook"


EVERY_GROUP = [
    "*",
    "admins",
    "hr",
    "engineering",
    "finance",
    "sales",
    "support",
    "managers",
    "contractors",
]


def all_chunks(index) -> list[dict]:
    """Every live chunk of the index, whatever its access list (for checking what readers saw)."""
    return [c for d in index.documents() for c in index.chunks(d, EVERY_GROUP)]


def _loopback(address: object) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX paths and the like
        return True
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def no_remote_network(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guard(address: object) -> None:
        if not _loopback(address):
            raise RuntimeError(f"a test tried to reach {address!r}; use a loopback fake")

    def connect(self: socket.socket, address: object) -> None:
        guard(address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: object) -> int:
        guard(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


MODEL_FIXTURES = {"embedders"}  # what loads models; every fixture that uses one is found too


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.models)


@pytest.fixture(autouse=True)
def models_only_when_marked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """A test without the ``models`` mark may not load one: the fast tier would slow down."""
    if request.node.get_closest_marker("models"):
        return
    from ingest import embed, minilm

    def refuse(*args, **kwargs):
        raise RuntimeError(
            f"{request.node.nodeid} loads an embedding model: mark it @pytest.mark.models "
            "or take the session's `embedders` fixture"
        )

    monkeypatch.setattr(minilm.MiniLMEmbedder, "_load", refuse)
    monkeypatch.setattr(embed, "_use_model", refuse)


class CachedEmbedder:
    """A real embedder whose vectors are remembered by text, so two backends embed the corpus once."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.cache: dict[tuple[str, str], list] = {}

    def embed(self, texts, kind="document"):
        import numpy as np

        todo = [t for t in dict.fromkeys(texts) if (kind, t) not in self.cache]
        if todo:
            for t, v in zip(todo, self.inner.embed(todo, kind=kind), strict=True):
                self.cache[(kind, t)] = v
        return (
            np.stack([self.cache[(kind, t)] for t in texts])
            if texts
            else self.inner.embed([], kind)
        )


class CachedGroupedEmbedder(CachedEmbedder):
    """A real one-pass embedder (chunk and sentences together), as ingest uses it."""

    def embed_grouped(self, groups):
        return self.inner.embed_grouped(groups)


@pytest.fixture(scope="session")
def embedders(tmp_path_factory):
    """The configured embedders, each model loaded once for the whole session."""
    from ingest.backends import build_embedders
    from ingest.embed import GroupedEmbedder
    from ingest.settings import EmbeddingSettings

    cache = tmp_path_factory.mktemp("models")
    return [
        (CachedGroupedEmbedder if isinstance(e, GroupedEmbedder) else CachedEmbedder)(e)
        for e in build_embedders(EmbeddingSettings(), cache_dir=cache)
    ]


@pytest.fixture(scope="session")
def handbook_deps(tmp_path_factory, embedders):
    """Deps over the handbook in a Qdrant Edge folder, ingested once for the whole session."""
    from bot.app import build_deps
    from bot.settings import Settings

    deps = build_deps(Settings(data_dir=tmp_path_factory.mktemp("footnote")))
    deps.__dict__["embedders"] = embedders
    report = deps.ingester.ingest(HANDBOOK)
    assert not report.failed, report.failed
    yield deps
    deps.close()


POSTGRES = "postgresql://postgres@127.0.0.1:5432"


@pytest.fixture
def postgres_url():
    """A fresh database on the PostgreSQL every machine runs on 127.0.0.1:5432, dropped after."""
    import uuid

    import psycopg

    name = f"footnote_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield f"{POSTGRES}/{name}"
    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
