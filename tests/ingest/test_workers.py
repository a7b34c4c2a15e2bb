"""``--workers N``: documents parsed and embedded in N spawned processes, written by one.

Real worker processes with the real models, a real Qdrant Edge folder, and a worker killed for
real (SIGKILL) in the middle of a sync of the loopback intranet site."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.app import build_deps
from bot.settings import Settings
from ingest.sources.state import SyncState
from ingest.sources.sync import IndexSink, WorkersDied, sync
from ingest.sources.web import WebConnector
from testing.web import LoopbackSite, Page
from tests.conftest import EVERY_GROUP, HANDBOOK

pytestmark = [pytest.mark.models, pytest.mark.slow]

QUESTIONS = [
    "How many vacation days do employees get?",
    "How do I connect to the VPN?",
    "What is the relocation allowance?",
]


def deps_in(data_dir, embedders):
    deps = build_deps(Settings(data_dir=data_dir))
    deps.__dict__["embedders"] = embedders  # this process's models, loaded once per session
    return deps


def contents(deps) -> dict[str, list[dict]]:
    index = deps.index
    return {d: index.chunks(d, EVERY_GROUP) for d in sorted(index.documents())}


def test_two_workers_write_the_index_one_process_writes(tmp_path, embedders):
    folder = tmp_path / "handbook"
    for part in ("hr", "it", "general"):  # markdown, PDF, DOCX, HTML, text, three languages
        shutil.copytree(HANDBOOK / part, folder / part)
    one = deps_in(tmp_path / "one", embedders)
    two = deps_in(tmp_path / "two", embedders)
    two.ingester.pool = two.worker_pool(2)
    try:
        alone = one.ingester.ingest(folder)
        pooled = two.ingester.ingest(folder)
        assert not alone.failed and not pooled.failed
        assert sorted(pooled.added) == sorted(alone.added) and pooled.chunks == alone.chunks > 20
        assert contents(two) == contents(one)  # same chunk ids, text, payloads
        assert two.index.documents() == one.index.documents()
        for q in QUESTIONS:  # and vectors that rank alike
            got = [p.chunk_id for p in two.retriever.search(q, EVERY_GROUP, top_k=5)]
            assert got == [p.chunk_id for p in one.retriever.search(q, EVERY_GROUP, top_k=5)]

        again = two.ingester.ingest(folder)  # the pool decides "unchanged" as one process does
        assert len(again.unchanged) == len(alone.added) and not again.added and not again.chunks
        side = folder / "it" / "vpn-setup.docx.meta.yaml"
        side.write_text(side.read_text().replace('acl: ["*"]', 'acl: ["finance"]'))
        relabelled = two.ingester.ingest(folder)
        assert relabelled.readers_changed == ["handbook/it/vpn-setup.docx"], relabelled
        assert relabelled.chunks == 0  # nothing embedded again
    finally:
        if two.ingester.pool is not None:
            two.ingester.pool.close()
        one.close()
        two.close()


@dataclass
class DyingSite(LoopbackSite):
    """The intranet site; fetching ``kill_at`` SIGKILLs one of the sync's worker processes."""

    kill_at: str = ""
    killed: list[int] = field(default_factory=list)

    def _answer(self, path: str, req: object) -> tuple[int, dict[str, str], str]:
        if path == self.kill_at and not self.killed:
            worker = multiprocessing.active_children()[0]
            os.kill(worker.pid, signal.SIGKILL)  # type: ignore[arg-type]
            worker.join(10)
            self.killed.append(worker.pid)  # type: ignore[arg-type]
        return super()._answer(path, req)


def page(n: int) -> Page:
    return Page(
        f"<html><head><title>Room {n}</title></head><body><h1>Meeting room {n}</h1>"
        f"<p>Meeting room {n} seats {n + 4} people and has a screen.</p></body></html>"
    )


def test_a_worker_killed_mid_sync_fails_its_documents_and_keeps_the_cursor(tmp_path, embedders):
    pages = {f"/rooms/{n}": page(n) for n in range(1, 7)}
    site = DyingSite(pages=pages, kill_at="/rooms/3").start()  # the first page of batch two
    deps = deps_in(tmp_path / "data", embedders)
    state = SyncState.open(deps.settings.database, deps.settings.data_dir)
    pool = deps.ingester.pool = deps.worker_pool(2)
    sink = IndexSink(deps.ingester, deps.settings.admin_groups)
    try:
        state.add_source("intranet", "web", {})
        with pytest.raises(WorkersDied, match="cursor stays"):
            sync("intranet", state, WebConnector(site.sitemap, ("*",), batch_size=2), sink)
        assert site.killed
        record = state.source("intranet")
        assert record is not None
        assert record.cursor == f'{{"after": "{site.url}/rooms/2"}}'  # batch one's, no further
        assert record.errors >= 1 and "worker process" in (record.last_error or "")
        written = set(state.versions("intranet"))
        assert {f"{site.url}/rooms/1", f"{site.url}/rooms/2"} <= written
        assert f"{site.url}/rooms/6" not in written  # the sync stopped with batch two

        report = sync("intranet", state, WebConnector(site.sitemap, ("*",), batch_size=2), sink)
        assert not report.failed
        assert sorted(state.versions("intranet")) == sorted(f"{site.url}{p}" for p in pages)
        assert state.source("intranet").cursor == ""  # type: ignore[union-attr]  # a whole pass
        docs = deps.index.documents()
        assert sorted(d for d in docs if d.startswith("intranet:")) == sorted(
            f"intranet:{site.url.split('://')[1]}{p}" for p in pages
        )
        assert all(docs[d].chunks == 1 for d in docs)
    finally:
        if pool is not None:
            pool.close()
        state.close()
        deps.close()
        site.close()


def test_a_worker_that_cannot_start_says_why_in_the_caller(tmp_path):
    from ingest.errors import ConfigError
    from ingest.settings import BM25Settings, EmbeddingSettings, IngestSettings
    from ingest.workers import WorkerPool, WorkerSetup

    setup = WorkerSetup(
        embedding=EmbeddingSettings(models=["cohere"]),  # and no FOOTNOTE_COHERE__API_KEY
        bm25=BM25Settings(),
        ingest=IngestSettings(),
        admin_groups=("admins",),
        dims={"cohere": 1024},
    )
    (tmp_path / "a.md").write_text("# A\n\nSome text.\n")
    pool = WorkerPool(2, setup)
    try:
        with pytest.raises(ConfigError, match="FOOTNOTE_COHERE__API_KEY"):
            list(pool.plan_files(tmp_path, [tmp_path / "a.md"], "docs/", ["*"], {}))
    finally:
        pool.close()


def test_footnote_ingest_and_sync_with_two_workers_answer_as_with_one(
    tmp_path, monkeypatch, capsys
):
    import json

    from bot.cli import main as cli_main

    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    folder = tmp_path / "it"
    shutil.copytree(HANDBOOK / "it", folder)
    assert cli_main(["ingest", str(folder), "--workers", "2"]) == 0
    assert "added 2 · updated 0" in capsys.readouterr().out
    site = LoopbackSite(pages={f"/rooms/{n}": page(n) for n in range(1, 4)}).start()
    try:
        assert cli_main(["sources", "add", "web", "--sitemap", site.sitemap, "--acl", "*"]) == 0
        assert cli_main(["sync", "--workers", "2"]) == 0
        assert "written 3 · unchanged 0" in capsys.readouterr().out
        assert cli_main(["sync", "--workers", "2"]) == 0
        assert "written 0 · unchanged 3" in capsys.readouterr().out
    finally:
        site.close()
    assert cli_main(["search", "How many people does meeting room 2 seat?", "--user", "bob"]) == 0
    assert "seats 6 people" in capsys.readouterr().out
    assert cli_main(["ask", "How do I connect to the VPN?", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert any("vpn-setup" in c["link"] or "VPN" in c["title"] for c in answer["citations"])


def test_start_brings_up_every_worker_with_its_models(tmp_path, embedders):
    deps = deps_in(tmp_path / "data", embedders)
    pool = deps.worker_pool(2)
    assert pool is not None
    try:
        pool.start()
        workers = multiprocessing.active_children()
        assert len(workers) == 2  # not one, the second spawned inside the first batch
        for w in workers:  # each has loaded both models (MiniLM + USE: ~350 MB)
            status = (Path("/proc") / str(w.pid) / "status").read_text()
            rss = next(line for line in status.splitlines() if line.startswith("VmRSS"))
            assert int(rss.split()[1]) > 200_000, rss
    finally:
        pool.close()
        deps.close()


def test_a_worker_killed_mid_ingest_fails_its_files_and_the_next_ingest_writes_them(
    tmp_path, embedders
):
    folder = tmp_path / "handbook"  # 13 files: more in flight than the workers finish at once
    for part in ("hr", "finance", "general"):
        shutil.copytree(HANDBOOK / part, folder / part)
    deps = deps_in(tmp_path / "data", embedders)
    pool = deps.ingester.pool = deps.worker_pool(2)
    killed: list[int] = []

    def on_file(doc_id: str, status: str) -> None:
        if not killed:  # the first file is written: kill a worker while the rest are planned
            worker = multiprocessing.active_children()[0]
            os.kill(worker.pid, signal.SIGKILL)  # type: ignore[arg-type]
            killed.append(worker.pid)  # type: ignore[arg-type]

    try:
        first = deps.ingester.ingest(folder, on_file=on_file)
        assert killed and first.failed
        assert all("worker process" in why for _, why in first.failed), first.failed
        assert len(first.added) + len(first.failed) == len(deps.ingester.scan(folder))
        second = deps.ingester.ingest(folder)  # a new pool starts; the lost files are written
        assert sorted(second.added) == sorted(d for d, _ in first.failed) and not second.failed
        assert sorted(second.unchanged) == sorted(first.added)
    finally:
        if pool is not None:
            pool.close()
        deps.close()


def _dies_halfway_through_sending() -> None:
    """In a worker: die as SIGKILL would catch one sending its result, holding the result
    queue's lock with the first bytes of a message in the pipe."""
    import struct
    import sys

    frame = sys._getframe()
    while frame.f_code.co_name != "_process_worker":  # concurrent.futures' worker loop
        frame = frame.f_back  # type: ignore[assignment]
    results = frame.f_locals["result_queue"]
    results._wlock.acquire()
    os.write(results._writer.fileno(), struct.pack("!i", 4096) + b"\x80")
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_killed_halfway_through_sending_loses_its_documents_not_the_ingest():
    """The executor would wait for the rest of the dead worker's message, and the other worker
    for the lock it died holding, for ever: the pool sees the death, and the documents come
    back lost. No models: the workers' setup fails, and these tasks need none."""
    import threading

    from ingest.settings import BM25Settings, EmbeddingSettings, IngestSettings
    from ingest.workers import LOST, WorkerPool, WorkerSetup

    setup = WorkerSetup(
        embedding=EmbeddingSettings(models=["cohere"]),  # no key: each worker starts, unarmed
        bm25=BM25Settings(),
        ingest=IngestSettings(),
        admin_groups=("admins",),
        dims={"cohere": 1024},
    )
    pool = WorkerPool(2, setup)
    plans: list = []
    tasks = [("a", _dies_halfway_through_sending, ()), ("b", os.getpid, ())]
    waiting = threading.Thread(target=lambda: plans.extend(pool.plans(tasks)), daemon=True)
    try:
        waiting.start()
        waiting.join(60)
        assert not waiting.is_alive(), "the pool waits for a dead worker's message"
        assert plans[0].doc_id == "a" and plans[0].status == "lost", plans
        assert LOST in plans[0].reason
    finally:
        if not waiting.is_alive():
            pool.close()
