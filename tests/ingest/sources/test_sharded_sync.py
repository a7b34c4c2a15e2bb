"""A sync split into shards (``footnote sync --shard i/N``, the pods of an Indexed Job), run
against every connector's loopback fake, with the shards' sync state in SQLite and in the real
PostgreSQL on 127.0.0.1: every document is written once by the shard its key hashes to, and the
cursor moves only when the last shard is done — never after a shard was killed mid-way."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from pydantic import SecretStr

from ingest.errors import ConfigError
from ingest.settings import DatabaseSettings
from ingest.sources.connector import SourceDocument
from ingest.sources.state import SyncState
from ingest.sources.sync import Shard, SyncReport, shard_of, sync
from ingest.sources.web import WebConnector
from testing.web import LoopbackSite, Page
from tests.conftest import ROOT
from tests.ingest.sources.conftest import Killed, MemorySink
from tests.ingest.sources.test_connector_contract import CASES, GoogleDriveCase

NAMES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]


@pytest.fixture(params=CASES, ids=lambda c: c.kind)
def case(request, tmp_path):
    c = request.param(tmp_path) if request.param is GoogleDriveCase else request.param()
    for n in NAMES:
        c.put(n, f"The {n} page, first version.")
    yield c
    c.close()


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> DatabaseSettings:
    if request.param == "sqlite":
        return DatabaseSettings(url=SecretStr(f"sqlite:///{tmp_path / 'state.db'}"))
    return DatabaseSettings(url=SecretStr(request.getfixturevalue("postgres_url")))


@pytest.fixture
def states(database, tmp_path):
    """Opens the shared sync state once per shard, as each pod does."""
    opened: list[SyncState] = []

    def open_one() -> SyncState:
        opened.append(SyncState.open(database, tmp_path / "data"))
        return opened[-1]

    yield open_one
    for st in opened:
        st.close()


class SharedSink(MemorySink):
    """One index every shard writes to (a Qdrant server), counting each key's writes."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.by_shard: dict[str, list[str]] = {}

    def for_shard(self, shard: Shard) -> SharedSink.View:
        return SharedSink.View(self, f"{shard.index}/{shard.count}")

    class View(MemorySink):
        def __init__(self, shared: SharedSink, name: str) -> None:
            super().__init__()
            self.shared, self.name = shared, name

        def write(self, source: str, docs: Sequence[SourceDocument]) -> list[tuple[str, str]]:
            with self.shared.lock:
                self.shared.write(source, docs)
                self.shared.by_shard.setdefault(self.name, []).extend(d.key for d in docs)
            return []

        def delete(self, source: str, keys: Sequence[str]) -> None:
            with self.shared.lock:
                self.shared.delete(source, keys)


def test_shards_write_every_document_once_and_the_last_one_moves_the_cursor(case, states):
    state = states()
    state.add_source("src", case.kind, {})
    sink, reports = SharedSink(), {}
    shards = [Shard(i, 3) for i in range(3)]

    def run(shard: Shard) -> None:
        reports[shard] = sync("src", states(), case.connector(), sink.for_shard(shard), shard)

    threads = [threading.Thread(target=run, args=(s,)) for s in shards]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    keys = sorted(case.key(n) for n in NAMES)
    assert sorted(sink.writes) == keys  # each once, across the shards
    for shard in shards:
        assert all(shard.owns(k) for k in sink.by_shard.get(f"{shard.index}/3", []))
    assert sum(r.cursor_advanced for r in reports.values()) == 1  # the last to finish, alone
    assert sorted(state.versions("src")) == keys
    assert state.source("src").cursor is not None  # type: ignore[union-attr]
    after = MemorySink()  # where the cursor went, an unsharded sync has nothing left to do
    report = sync("src", state, case.connector(), after)
    assert not after.writes and not report.deleted and not report.failed


def test_a_shard_killed_mid_way_leaves_the_cursor_and_the_rerun_repeats_only_its_share(
    case, states
):
    state = states()
    state.add_source("src", case.kind, {})
    zero, one = Shard(0, 2), Shard(1, 2)
    ours = {s: sorted(case.key(n) for n in NAMES if s.owns(case.key(n))) for s in (zero, one)}
    assert ours[zero] and ours[one]  # the names spread over both shards

    first = sync("src", states(), case.connector(), MemorySink(), zero)
    assert sorted(first.written) == ours[zero] and not first.cursor_advanced
    assert state.source("src").cursor is None  # type: ignore[union-attr]  # shard 1 not done
    with pytest.raises(Killed):  # dies after writing its first batch, before recording it
        sync("src", states(), case.connector(), MemorySink(die_after=1), one)
    assert state.source("src").cursor is None  # type: ignore[union-attr]
    assert sorted(state.versions("src")) == ours[zero]

    again = MemorySink()  # the Job retries both pods
    assert not sync("src", states(), case.connector(), again, zero).cursor_advanced
    assert again.writes == []  # shard 0 recorded all it wrote: nothing to repeat
    rerun = MemorySink()
    report = sync("src", states(), case.connector(), rerun, one)
    assert sorted(rerun.writes) == ours[one] and report.cursor_advanced
    assert sorted(state.versions("src")) == sorted(ours[zero] + ours[one])
    moved = state.source("src").cursor  # type: ignore[union-attr]
    assert moved is not None

    case.put("charlie", "The charlie page, second version: the office moved.")
    owner, other = (zero, one) if zero.owns(case.key("charlie")) else (one, zero)
    edited, idle = MemorySink(), MemorySink()
    later: list[SyncReport] = [
        sync("src", states(), case.connector(), idle, other),
        sync("src", states(), case.connector(), edited, owner),
    ]
    assert edited.writes == [case.key("charlie")] and idle.writes == []
    assert [r.cursor_advanced for r in later] == [False, True]


def test_the_shard_of_a_key_is_the_same_in_every_process():
    keys = [f"https://intranet.example/page/{n}" for n in range(50)]
    code = (
        "import sys; from ingest.sources.sync import shard_of; "
        "print(','.join(str(shard_of(k, 4)) for k in sys.argv[1:]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *keys], capture_output=True, encoding="utf-8", check=True
    ).stdout.strip()
    assert out == ",".join(str(shard_of(k, 4)) for k in keys)
    assert len(set(out.split(","))) == 4  # and they spread


@pytest.mark.parametrize("bad", ["2/2", "1", "-1/3", "a/b", "0/0"])
def test_a_shard_is_index_slash_count(bad):
    with pytest.raises(ConfigError, match="INDEX/COUNT"):
        Shard.parse(bad)
    assert Shard.parse(" 1/3 ") == Shard(1, 3)


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({}, "FOOTNOTE_QDRANT__URL"),  # Qdrant Edge: one process per folder
        ({"FOOTNOTE_QDRANT__URL": "http://127.0.0.1:9"}, "FOOTNOTE_DATABASE__URL"),  # own SQLite
    ],
)
def test_footnote_sync_refuses_shards_it_cannot_coordinate(
    tmp_path, monkeypatch, capsys, env, says
):
    from bot.cli import main as cli_main

    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert cli_main(["sync", "--shard", "1/2"]) == 2
    assert says in capsys.readouterr().err


@dataclass
class StallingSite(LoopbackSite):
    """The intranet site; a GET of ``stall_at`` hangs until released, so a shard can be killed
    at a known point: after writing its share of the first batches."""

    stall_at: str = ""
    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def _answer(self, path: str, req: object) -> tuple[int, dict[str, str], str]:
        if path == self.stall_at and not self.release.is_set():
            self.reached.set()
            self.release.wait()  # the test releases it, in its finally too
        return super()._answer(path, req)


SHARD_PROCESS = """
import sys
from pathlib import Path
from pydantic import SecretStr
from ingest.settings import DatabaseSettings
from ingest.sources.state import SyncState
from ingest.sources.sync import Shard, sync
from ingest.sources.web import WebConnector
from tests.ingest.sources.conftest import MemorySink

url, data, sitemap, shard = sys.argv[1:]
state = SyncState.open(DatabaseSettings(url=SecretStr(url)), Path(data))
sync("src", state, WebConnector(sitemap, ("group:hr",), batch_size=2), MemorySink(), Shard.parse(shard))
"""


def laid_out(url: str, owners: Sequence[int], shards: int) -> list[str]:
    """Page paths that list in this order with the ``i``-th owned by shard ``owners[i]``: which
    shard a key hashes to depends on the site's port, so the test picks the paths for the port it
    got rather than hoping the port spreads them."""
    paths = []
    for i, owner in enumerate(owners):
        n = next(n for n in range(1000) if shard_of(f"{url}/p/{i}-{n}", shards) == owner)
        paths.append(f"/p/{i}-{n}")
    return paths


def test_a_shard_process_killed_with_sigkill_moves_no_cursor_and_its_rerun_finishes(
    tmp_path, postgres_url
):
    site = StallingSite().start()
    # batches of two: shard 1 owns one page of each, so it has written two pages when it stalls
    # on the sixth (in batch three of four) and has two left
    paths = laid_out(site.url, [1, 0, 0, 1, 1, 0, 0, 1], 2)
    pages = {
        p: Page(f"<html><title>P{i}</title><p>Page {i} text.</p></html>")
        for i, p in enumerate(paths)
    }
    site.pages.update(pages)
    site.stall_at = paths[5]
    state = SyncState.open(DatabaseSettings(url=SecretStr(postgres_url)), tmp_path / "data")
    try:
        state.add_source("src", "web", {})
        key = {p: f"{site.url}{p}" for p in pages}
        one = Shard(1, 2)
        theirs = sorted(k for k in key.values() if one.owns(k))
        early = sorted(key[p] for p in paths[:4] if one.owns(key[p]))
        assert len(early) == 2 and len(theirs) == 4  # it has written some, not all, when killed
        shard = subprocess.Popen(
            [
                sys.executable,
                "-c",
                SHARD_PROCESS,
                postgres_url,
                str(tmp_path / "d1"),
                site.sitemap,
                "1/2",
            ],
            cwd=ROOT,
        )
        assert site.reached.wait(60), "the shard never got to the page it stalls on"
        shard.send_signal(signal.SIGKILL)
        assert shard.wait(10) == -signal.SIGKILL
        site.release.set()
        assert state.source("src").cursor is None  # type: ignore[union-attr]
        assert sorted(state.versions("src")) == early  # recorded as it went

        zero = sync(
            "src",
            state,
            WebConnector(site.sitemap, ("group:hr",), batch_size=2),
            MemorySink(),
            Shard(0, 2),
        )
        assert not zero.cursor_advanced  # shard 1 has not finished
        rerun = MemorySink()
        report = sync(
            "src", state, WebConnector(site.sitemap, ("group:hr",), batch_size=2), rerun, one
        )
        assert sorted(rerun.writes) == sorted(set(theirs) - set(early))  # only what it had not
        assert report.cursor_advanced and state.source("src").cursor == ""  # type: ignore[union-attr]
        assert sorted(state.versions("src")) == sorted(key.values())
    finally:
        site.release.set()
        state.close()
        site.close()
