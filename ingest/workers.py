"""Worker processes that parse, chunk and embed documents for ONE writer (``--workers N``).

Embedding is what a sync or an ingest spends its time on, and it is pure: a document in, its
points out. The index is not: Qdrant Edge lets one process open a folder, and even with a server
one writer keeps each document's update whole and a batch's cursor after its documents. So each
worker process loads the embedders once (when it starts) and turns documents into ``Plan`` s; the
main process applies them in order, writing one while the workers embed the next ones.

A worker that dies (killed, out of memory) takes its documents with it: they come back as
``lost`` plans, which the caller reports as failed and retries (a sync leaves its cursor where
it was). The pool starts afresh on the next call.
"""

from __future__ import annotations

import fcntl
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.errors import BadDocument
from ingest.index import DocState, Hit, HybridQuery, PointData
from ingest.pipeline import Ingester, Plan
from ingest.settings import BM25Settings, EmbeddingSettings, IngestSettings

if TYPE_CHECKING:
    from ingest.backends import CohereAccess
    from ingest.documents import ChunkPayload
    from ingest.sources.connector import SourceDocument

LOST = "lost with its worker process (killed or out of memory?); it is retried next time"
# how often a wait for a plan looks whether a worker died, and how long it then gives the
# executor to say so itself: a death that ``ProcessPoolExecutor`` misses (``WorkerPool._awaited``)
# costs a stalled ingest about this long, not for ever
WATCH_S = 2.0


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker process builds its ``Ingester`` from: settings, never live clients."""

    embedding: EmbeddingSettings
    bm25: BM25Settings
    ingest: IngestSettings
    admin_groups: tuple[str, ...]
    dims: dict[str, int]  # the named vectors of the index the writer holds
    cohere: CohereAccess | None = None
    cache_dir: Path | None = None
    one_pass: bool = True


class NoIndex:
    """A worker's stand-in for the index: it knows which vectors to make and refuses every
    read and write, which belong to the one writer in the main process."""

    def __init__(self, dims: dict[str, int]) -> None:
        self.dims = dims

    def _refuse(self, *args: object) -> Any:
        raise RuntimeError("a worker process never touches the index; the writer does")

    def upsert_document(
        self, doc_id: str, points: Sequence[PointData], stale_ids: Sequence[int]
    ) -> None:
        self._refuse()

    def delete_document(self, doc_id: str) -> None:
        self._refuse()

    def set_readers(self, point_ids: Sequence[int], acl: Sequence[str]) -> None:
        self._refuse()

    def set_payloads(self, updates: Sequence[tuple[int, dict[str, Any]]]) -> None:
        self._refuse()

    def query(self, q: HybridQuery) -> list[Hit]:
        return self._refuse()  # type: ignore[no-any-return]

    def documents(self) -> dict[str, DocState]:
        return self._refuse()  # type: ignore[no-any-return]

    def chunks(self, doc_id: str, groups: Sequence[str]) -> list[ChunkPayload]:
        return self._refuse()  # type: ignore[no-any-return]

    def purge_tombstones(self) -> None:
        self._refuse()

    def optimize(self) -> None:
        self._refuse()


# The worker process's own ingester, built once by ``_start`` when the process starts (a pool
# initializer can hand its work functions nothing else), or why it could not be built.
_ingester: Ingester | None = None
_start_error: Exception | None = None
_barrier: Any = None  # the pool's, for ``WorkerPool.start``


def _start(setup: WorkerSetup, barrier: Any = None) -> None:
    """Build this process's ingester. An error is kept, not raised: raised here it would only
    say "a process in the initializer failed"; kept, every task raises it in the caller."""
    from ingest.backends import build_embedders
    from ingest.sparse import BM25Encoder

    global _ingester, _start_error, _barrier
    _barrier = barrier
    try:
        embedders = build_embedders(setup.embedding, setup.cohere, cache_dir=setup.cache_dir)
        with _one_at_a_time(setup.cache_dir):
            for e in embedders:  # load the models now, once, not inside the first document
                e.embed(["warm up"])
        _ingester = Ingester(
            NoIndex(setup.dims),  # type: ignore[arg-type]  # Index's shape; refuses all but dims
            embedders,
            BM25Encoder.from_settings(setup.bm25),
            setup.ingest,
            list(setup.admin_groups),
            one_pass=setup.one_pass,
        )
    except Exception as exc:
        _start_error = exc


@contextmanager
def _one_at_a_time(cache_dir: Path | None) -> Iterator[None]:
    """Workers load their models in turn: OpenVINO writes its compiled-model cache without a
    lock, and two processes compiling into one cache folder at once fail ("cannot set
    permissions: No such file or directory"). The first writes the cache, the rest read it."""
    if cache_dir is None:
        yield
        return
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / "load.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _meet() -> None:
    """In a worker: wait for every other worker of the pool, each holding one such task, so
    that ``WorkerPool.start`` returns with all of them started."""
    if _barrier is not None:
        _barrier.wait(timeout=600)


def _worker() -> Ingester:
    if _start_error is not None:
        raise _start_error
    if _ingester is None:
        raise RuntimeError("a worker function ran outside a WorkerPool process")
    return _ingester


def plan_file(path: Path, root: Path, doc_id: str, acl: list[str], old: DocState | None) -> Plan:
    """In a worker: read one file of a folder and plan its write."""
    ingester = _worker()
    try:
        doc = ingester.load(path, root, doc_id, acl)
    except BadDocument as exc:
        return Plan(doc_id, "failed", str(exc))
    return ingester.plan(doc, old)


def plan_synced(source: str, sd: SourceDocument, old: DocState | None) -> Plan:
    """In a worker: parse one document a connector fetched and plan its write."""
    from ingest.sources.sync import IndexSink, doc_id

    ingester = _worker()
    try:
        doc = IndexSink(ingester, ingester.admin_groups).document(source, sd)
    except BadDocument as exc:
        return Plan(doc_id(source, sd.key), "failed", str(exc))
    return ingester.plan(doc, old)


Task = tuple[str, Callable[..., Plan], tuple[Any, ...]]  # (doc_id, worker function, its args)


class WorkerPool:
    """``workers`` processes (spawned: no copy of the parent's threads or open index) that each
    load the embedders once and plan documents; started on first use. The embedding threads
    (``FOOTNOTE_EMBEDDING__THREADS``) are shared out among them, not given to each: N workers
    with every thread each would only fight over the same cores."""

    def __init__(self, workers: int, setup: WorkerSetup) -> None:
        if workers < 2:
            raise ValueError("a pool is for two workers or more; one works in-process")
        threads = max(1, setup.embedding.threads // workers)
        self.workers = workers
        self.setup = replace(
            setup, embedding=setup.embedding.model_copy(update={"threads": threads})
        )
        self._executor: ProcessPoolExecutor | None = None

    def start(self) -> None:
        """Start every worker now, models loaded. Otherwise they start on demand, one more
        whenever a task finds none idle (spawn's way), some of them inside the first batch."""
        executor = self._pool()
        for future in [executor.submit(_meet) for _ in range(self.workers)]:
            future.result()

    def plans(self, tasks: Sequence[Task]) -> Iterator[Plan]:
        """Each task's plan in the order given, as soon as it and those before it are ready.
        A few tasks per worker are in flight at once, so memory stays bounded by the window,
        not by the folder."""
        window: deque[tuple[str, Future[Plan] | None]] = deque()
        todo = iter(tasks)
        ahead = self.workers * 4
        while True:
            while len(window) < ahead:
                task = next(todo, None)
                if task is None:
                    break
                window.append((task[0], self._submit(task)))
            if not window:
                return
            doc_id, future = window.popleft()
            yield self._result(doc_id, future)

    def plan_files(
        self,
        root: Path,
        paths: Sequence[Path],
        prefix: str,
        acl: list[str],
        known: Mapping[str, DocState],
    ) -> Iterator[Plan]:
        tasks: list[Task] = []
        for path in paths:
            doc_id = prefix + path.relative_to(root).as_posix()
            tasks.append((doc_id, plan_file, (path, root, doc_id, acl, known.get(doc_id))))
        return self.plans(tasks)

    def plan_synced(
        self, source: str, docs: Sequence[SourceDocument], known: Mapping[str, DocState]
    ) -> Iterator[Plan]:
        from ingest.sources.sync import doc_id

        return self.plans(
            [
                (
                    doc_id(source, sd.key),
                    plan_synced,
                    (source, sd, known.get(doc_id(source, sd.key))),
                )
                for sd in docs
            ]
        )

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            spawn = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(
                self.workers,
                mp_context=spawn,
                initializer=_start,
                initargs=(self.setup, spawn.Barrier(self.workers)),
            )
        return self._executor

    def _submit(self, task: Task) -> Future[Plan] | None:
        try:
            return self._pool().submit(task[1], *task[2])
        except BrokenProcessPool:
            return None

    def _result(self, doc_id: str, future: Future[Plan] | None) -> Plan:
        try:
            if future is not None:
                return self._awaited(future)
        except (BrokenProcessPool, CancelledError, TimeoutError):  # cancelled: by ``_broken``
            pass
        self._broken()
        return Plan(doc_id, "lost", LOST)

    def _awaited(self, future: Future[Plan]) -> Plan:
        """The task's plan, watching the workers while it waits. A worker killed while it sends
        a result dies holding the result queue's lock with part of a message in the pipe: the
        executor then reads for the rest, and the other workers wait for the lock, for ever
        (CPython's ``ProcessPoolExecutor`` notices a death only between messages). So a dead
        worker ends the wait here: the other workers are killed too, and once the executor's
        own copy of the pipe's writing end is closed its reader meets the pipe's end and calls
        the pool broken."""
        while True:
            try:
                return future.result(timeout=WATCH_S)
            except TimeoutError:
                if any(p.exitcode is not None for p in self._workers()):
                    break
        try:
            return future.result(timeout=WATCH_S)  # the executor saw the death after all
        except TimeoutError:
            for process in self._workers():
                process.kill()
            self._executor._result_queue._writer.close()  # type: ignore[union-attr]
            return future.result(timeout=10 * WATCH_S)  # BrokenProcessPool, now

    def _workers(self) -> list[Any]:
        """The executor's worker processes (``ProcessPoolExecutor`` keeps them, unpublished, in
        ``_processes``)."""
        return list((getattr(self._executor, "_processes", None) or {}).values())

    def _broken(self) -> None:
        """A worker died: the executor is unusable; the next task starts a new one."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
