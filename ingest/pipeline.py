"""Ingest a folder: skip what is unchanged, replace what changed, delete what is gone.

Each document is written with ONE index update (its new chunks plus tombstones for chunk ids it no
longer uses), so a crash leaves it fully old or fully new. When only who may read it changed, its
new access list goes onto all its points in ONE update too (``Index.set_readers``), before the
rest of the relabelling: a crash never leaves part of it readable under the old rule. Bad files
are reported and skipped; the rest of the batch is indexed. Embedding is batched across
documents for speed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ingest.access import is_document, normalise_acl, own_rule, sidecar_meta
from ingest.audience import document_audience
from ingest.chunk import chunk_document
from ingest.documents import Chunk, Document
from ingest.embed import Embedder, GroupedEmbedder
from ingest.errors import BadDocument
from ingest.index import SENTENCES, DocState, Index, PointData
from ingest.languages import detect_lang
from ingest.parse import SUFFIXES, parse_bytes, read_file
from ingest.sentences import sentences
from ingest.settings import IngestSettings
from ingest.sparse import BM25Encoder, record_in

if TYPE_CHECKING:
    from ingest.sources.connector import SourceDocument

# Changes whenever files are read or cut differently (parsing, sentences, chunk payload), so an
# upgrade re-reads every file on the next ingest instead of keeping chunks made the old way.
READER_VERSION = (
    "2026-12f: whole paragraphs, table rows, PDF schedules as list items, log records kept "
    "whole, one sentence splitter, one CJK range, audience, Ukrainian names lemmatized by case, "
    "audiences an open set, titles never a running header nor cut short"
)


@dataclass
class IngestReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    # only who may read them changed: their points re-labelled, nothing embedded again
    readers_changed: list[str] = field(default_factory=list)
    # no access rule of their own and no --acl default: only admins can read them
    admins_only: list[str] = field(default_factory=list)
    chunks: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's CPU time, all threads: throughput on a shared machine

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0

    @property
    def chunks_per_cpu_s(self) -> float:
        return self.chunks / self.cpu_seconds if self.cpu_seconds else 0.0


@dataclass
class Plan:
    """One document decided, chunked and embedded away from the index (in a worker process),
    for the one writer to apply. ``status``: added, updated, unchanged, readers changed, failed
    (``reason`` says why), empty (no text), or lost (the worker died before answering)."""

    doc_id: str
    status: str
    reason: str = ""
    points: list[PointData] = field(default_factory=list)
    stale: list[int] = field(default_factory=list)  # chunk ids the new version no longer uses
    relabel: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    readers: list[str] = field(default_factory=list)  # the access list a relabel gives
    no_rule: bool = False  # the document's ``no_rule``: the writer reports it


class PlanPool(Protocol):
    """Processes that plan documents for this one to write (``ingest.workers.WorkerPool``).
    A seam, so that the pipeline and the sync need not import the workers that run them."""

    def plan_files(
        self,
        root: Path,
        paths: Sequence[Path],
        prefix: str,
        acl: list[str],
        known: Mapping[str, DocState],
    ) -> Iterator[Plan]: ...

    def plan_synced(
        self, source: str, docs: Sequence[SourceDocument], known: Mapping[str, DocState]
    ) -> Iterator[Plan]: ...


def point_id(doc_id: str, seq: int) -> int:
    """Stable per (document, position): a new version overwrites the old one in place."""
    return (
        int.from_bytes(hashlib.blake2b(f"{doc_id}#{seq}".encode(), digest_size=8).digest(), "big")
        >> 1
    )


@dataclass
class Ingester:
    index: Index
    embedders: Sequence[Embedder]
    sparse: BM25Encoder
    settings: IngestSettings
    admin_groups: Sequence[str]  # read every document, including those with no access rule
    batch_chunks: int = 64
    # a chunk's vector and its sentences' in one pass where the embedder can (False: the
    # two-pass way, the baseline `footnote bench ingest` measures against)
    one_pass: bool = True
    # parse, chunk and embed in these processes, this one only writing (None: all here); used
    # by ``ingest`` and by a sync's ``IndexSink``, the caller closes it
    pool: PlanPool | None = None
    # chunks written by this ingester so far, every run together: what a progress bar counts
    chunks_written: int = 0
    # seconds per stage (parse, sentences, each encoder, sparse, index write, optimize), added
    # up when given a dict: `footnote bench ingest` shows where an ingest's time goes
    stages: dict[str, float] | None = None

    @contextmanager
    def _stage(self, name: str) -> Iterator[None]:
        if self.stages is None:
            yield
            return
        started = time.perf_counter()
        try:
            yield
        finally:
            self.stages[name] = self.stages.get(name, 0.0) + time.perf_counter() - started

    def ingest(
        self,
        root: Path,
        default_acl: Sequence[str] | None = None,
        on_file: Callable[[str, str], None] = lambda path, status: None,
        files: Sequence[Path] | None = None,
    ) -> IngestReport:
        """Index a folder. ``default_acl`` is for files with no access rule of their own
        (``footnote ingest --acl``); None takes ``FOOTNOTE_INGEST__DEFAULT_ACL``."""
        started, cpu = time.perf_counter(), time.process_time()
        record_in(self.index, self.sparse)
        if default_acl is None:
            default_acl = self.settings.default_acl
        root = root.resolve()
        report = IngestReport()
        prefix = root.name + "/"
        known = {d: s for d, s in self.index.documents().items() if d.startswith(prefix)}
        paths = list(files) if files is not None else self.scan(root)
        paths = self._skip_links(paths, root, prefix, known, report, on_file)
        seen: set[str] = set()
        if self.pool is not None:
            seen = {prefix + path.relative_to(root).as_posix() for path in paths}
            for plan in self.pool.plan_files(root, paths, prefix, list(default_acl), known):
                self.apply(plan, report, on_file)
            paths = []  # written: what follows only deletes
        pending: list[tuple[Document, list[Chunk], str]] = []
        for doc_id, doc, chunks in self._read_ahead(paths, root, prefix, list(default_acl), known):
            seen.add(doc_id)
            if isinstance(doc, BadDocument):
                report.failed.append((doc_id, str(doc)))
                on_file(doc_id, "failed")
                continue
            old = known.get(doc_id)
            if old and old.content_hash == doc.content_hash:
                report.unchanged.append(doc_id)
                report.admins_only += [doc_id] if doc.no_rule else []
                on_file(doc_id, "unchanged")
                continue
            if not chunks:
                report.failed.append((doc_id, "no text to index"))
                on_file(doc_id, "failed")
                continue
            if doc.no_rule:
                report.admins_only.append(doc_id)
            if self._relabel(doc, chunks, old, report, on_file):
                continue
            pending.append((doc, chunks, "updated" if old else "added"))
            if sum(len(c) for _, c, _ in pending) >= self.batch_chunks:
                self._write(pending, known, report, on_file)
                pending = []
        self._write(pending, known, report, on_file)
        if files is None:
            for doc_id in sorted(set(known) - seen):
                self.index.delete_document(doc_id)
                report.deleted.append(doc_id)
                on_file(doc_id, "deleted")
        self.index.purge_tombstones()
        if report.added or report.updated or report.deleted or report.readers_changed:
            with self._stage("index optimize"):
                self.index.optimize()  # merge segments and build HNSW: a fresh Edge folder is scanned, not indexed
        report.seconds = time.perf_counter() - started
        report.cpu_seconds = time.process_time() - cpu
        return report

    def _read_ahead(
        self,
        paths: Sequence[Path],
        root: Path,
        prefix: str,
        default_acl: list[str],
        known: dict[str, DocState],
    ) -> Iterator[tuple[str, Document | BadDocument, list[Chunk]]]:
        """Each path's document id, its document (or why it is not one) and its chunks (none
        when it is unchanged), in order, read on a thread of its own a few documents ahead of
        the caller, who embeds and writes them: parsing (a PDF's layout analysis above all) and
        chunking run while the encoders do, instead of between their batches. A fault other
        than a bad document is raised here, in the caller."""
        ahead: queue.Queue[Any] = queue.Queue(maxsize=16)
        stop = threading.Event()

        def put(item: Any) -> None:
            while not stop.is_set():  # the caller stopped reading: drop it
                with contextlib.suppress(queue.Full):
                    ahead.put(item, timeout=0.1)
                    return

        def read() -> None:
            try:
                for path in paths:
                    if stop.is_set():
                        return
                    doc_id = prefix + path.relative_to(root).as_posix()
                    try:
                        with self._stage("parse"):
                            doc = self.load(path, root, doc_id, default_acl)
                    except BadDocument as exc:
                        put((doc_id, exc, []))
                        continue
                    old, chunks = known.get(doc_id), []
                    if not (old and old.content_hash == doc.content_hash):
                        with self._stage("chunk"):
                            chunks = chunk_document(
                                doc,
                                max_tokens=self.settings.chunk_tokens,
                                overlap=self.settings.chunk_overlap,
                            )
                    put((doc_id, doc, chunks))
            except BaseException as exc:  # a disk fault, a bug: the caller raises it
                put(exc)
            finally:
                put(_READ)

        # A daemon: it only reads files, and a caller that stops early must not wait for it.
        threading.Thread(target=read, name="read-ahead", daemon=True).start()
        try:
            while (item := ahead.get()) is not _READ:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()

    def add_documents(
        self,
        docs: Iterable[Document],
        on_file: Callable[[str, str], None] = lambda path, status: None,
        optimize: bool = True,
    ) -> IngestReport:
        """Index documents that come from elsewhere than a folder (exports, benchmarks, a sync),
        same path as files. ``optimize=False`` leaves building search structures to the caller,
        for a sync that writes many batches and optimizes once at its end."""
        started, cpu = time.perf_counter(), time.process_time()
        record_in(self.index, self.sparse)
        report = IngestReport()
        known = self.index.documents()
        pending: list[tuple[Document, list[Chunk], str]] = []
        for doc in docs:
            old = known.get(doc.doc_id)
            if old and old.content_hash == doc.content_hash:
                report.unchanged.append(doc.doc_id)
                continue
            chunks = chunk_document(
                doc,
                max_tokens=self.settings.chunk_tokens,
                overlap=self.settings.chunk_overlap,
            )
            if chunks and not self._relabel(doc, chunks, old, report, on_file):
                pending.append((doc, chunks, "updated" if old else "added"))
            if sum(len(c) for _, c, _ in pending) >= self.batch_chunks:
                self._write(pending, known, report, on_file)
                pending = []
        self._write(pending, known, report, on_file)
        self.index.purge_tombstones()
        if optimize and (
            report.added or report.updated or report.deleted or report.readers_changed
        ):
            self.index.optimize()  # merge segments and build HNSW: a fresh Edge folder is scanned, not indexed
        report.seconds = time.perf_counter() - started
        report.cpu_seconds = time.process_time() - cpu
        return report

    def _skip_links(
        self,
        paths: list[Path],
        root: Path,
        prefix: str,
        known: dict[str, DocState],
        report: IngestReport,
        on_file: Callable[[str, str], None],
    ) -> list[Path]:
        """Every path reached through a symbolic link, skipped and said so; what the index held
        under its name is deleted. Not only links out of the folder: one to a file elsewhere in
        it would publish that file under the access rule of the link's own folder."""
        kept = []
        for path in paths:
            link = through_link(path, root)
            if link is None:
                kept.append(path)
                continue
            doc_id = prefix + path.relative_to(root).as_posix()
            try:
                target = str(link.readlink())
            except OSError:
                target = "?"
            report.failed.append(
                (
                    doc_id,
                    f"a symbolic link ({link.relative_to(root).as_posix()} -> {target}): not "
                    "followed, so a link cannot publish a file from elsewhere under this "
                    "folder's access rule; copy the file into the folder instead",
                )
            )
            on_file(doc_id, "failed")
            if known.pop(doc_id, None) is not None:  # published through it by an earlier run
                self.index.delete_document(doc_id)
                report.deleted.append(doc_id)
        return kept

    def scan(self, root: Path) -> list[Path]:
        """The documents under ``root``, and the symbolic links there that look like one or lead
        to a folder (never followed: ``ingest`` reports them as skipped)."""
        return sorted(
            p
            for p in root.rglob("*")
            if is_document(p)
            and (
                p.suffix.lower() in SUFFIXES
                and (p.is_file() or p.is_symlink())
                or (p.is_symlink() and p.is_dir())
            )
            and not any(part.startswith(".") for part in p.relative_to(root).parts)
        )

    def load(self, path: Path, root: Path, doc_id: str, default_acl: list[str]) -> Document:
        if path.suffix.lower() not in SUFFIXES:
            raise BadDocument(f"unsupported file type: {path.suffix or 'no extension'}")
        # read once: what is parsed is what is hashed
        data = read_file(path, int(self.settings.max_file_mb * 1024 * 1024))
        parsed = parse_bytes(data, path.suffix.lower(), path.stem, self.settings)
        side = sidecar_meta(path, self.settings)
        meta = {**side, **parsed.meta}
        rule = own_rule(path, root, parsed.meta, side, self.settings)
        default = normalise_acl(default_acl)
        acl = rule if rule is not None else (default or list(self.admin_groups))
        text = "\n".join(s.text for s in parsed.sections)
        if not text.strip():
            raise BadDocument("no text to index")
        body = hashlib.sha256(data)  # what is embedded: everything but who may read it
        body.update(
            json.dumps(
                {k: v for k, v in meta.items() if k != "acl"}, sort_keys=True, default=str
            ).encode()
        )
        body.update(READER_VERSION.encode())
        digest = hashlib.sha256(data)
        digest.update(json.dumps({**meta, "acl": acl}, sort_keys=True, default=str).encode())
        digest.update(READER_VERSION.encode())
        title = str(meta.get("title") or parsed.title)
        return Document(
            doc_id=doc_id,
            title=title,
            source=str(path),
            sections=parsed.sections,
            updated=str(
                meta.get("updated") or time.strftime("%Y-%m-%d", time.gmtime(path.stat().st_mtime))
            ),
            owner=str(meta.get("owner", "")),
            acl=acl,
            lang=str(meta.get("lang") or detect_lang(text)),
            content_hash=digest.hexdigest(),
            body_hash=body.hexdigest(),
            url=meta.get("url"),
            audience=sorted(document_audience(title, parsed.sections, meta, acl)),
            no_rule=rule is None and not default,
        )

    def embed_chunks(self, chunks: Sequence[Chunk]) -> list[PointData]:
        texts = [c.text for c in chunks]
        with self._stage("sentences"):
            said = [sentences(c.body) for c in chunks]
        per_chunk = [group or [c.text] for c, group in zip(chunks, said, strict=True)]
        dense: dict[str, list[list[float]]] = {}

        def encode(e: Embedder) -> None:
            with self._stage(f"encoder {e.name}"):
                self._embed_with(e, chunks, texts, said, per_chunk, dense)

        with self._stage("encoders, all at once"):
            if len(self.embedders) < 2:
                for e in self.embedders:
                    encode(e)
            else:
                # Each model on a thread of its own, at the same time: both spend their time in
                # native code that lets go of the GIL (OpenVINO, BLAS), so on two cores MiniLM
                # and USE overlap instead of taking turns.
                with ThreadPoolExecutor(len(self.embedders), thread_name_prefix="encode") as pool:
                    for done in [pool.submit(encode, e) for e in self.embedders]:
                        done.result()
        points = []
        with self._stage("sparse and payload"):
            for i, c in enumerate(chunks):
                payload = c.payload()
                payload["doc_chunks"] = None
                points.append(
                    PointData(
                        id=point_id(c.doc_id, c.seq),
                        dense={name: v[i] for name, v in dense.items()},
                        sparse=self.sparse.encode_document(c.text, c.lang),
                        payload=payload,
                    )
                )
        return points

    def _embed_with(
        self,
        e: Embedder,
        chunks: Sequence[Chunk],
        texts: list[str],
        said: list[list[str]],
        per_chunk: list[list[str]],
        dense: dict[str, list[list[float]]],
    ) -> None:
        """``e``'s vectors of ``chunks`` (and of their sentences, where the index keeps them)."""
        keeps_sentences = e.name + SENTENCES in self.index.dims
        if keeps_sentences and self.one_pass and isinstance(e, GroupedEmbedder):
            # one pass: the chunk's vector pooled from its breadcrumbs' and sentences'
            whole, parts = e.embed_grouped(
                [
                    [c.breadcrumbs, *group] if group else [c.text]
                    for c, group in zip(chunks, said, strict=True)
                ]
            )
            dense[e.name] = whole.tolist()
            dense[e.name + SENTENCES] = [
                (p[1:] if group else p).tolist() for p, group in zip(parts, said, strict=True)
            ]
            return
        dense[e.name] = e.embed(texts, kind="document").tolist()
        if keeps_sentences:
            flat = iter(e.embed([s for group in per_chunk for s in group]).tolist())
            dense[e.name + SENTENCES] = [[next(flat) for _ in group] for group in per_chunk]

    def plan(self, doc: Document, old: DocState | None) -> Plan:
        """What writing ``doc`` over ``old`` takes, embedded and ready; touches no index, so a
        worker process can make it for the writer (``apply``). The same steps, in the same
        order, as ``ingest`` and ``add_documents`` take in this process."""
        plan = self._plan(doc, old)
        plan.no_rule = doc.no_rule
        return plan

    def _plan(self, doc: Document, old: DocState | None) -> Plan:
        if old and old.content_hash == doc.content_hash:
            return Plan(doc.doc_id, "unchanged")
        chunks = chunk_document(
            doc, max_tokens=self.settings.chunk_tokens, overlap=self.settings.chunk_overlap
        )
        if not chunks:
            return Plan(doc.doc_id, "empty", "no text to index")
        updates = self._relabelling(doc, chunks, old)
        if updates is not None:
            return Plan(doc.doc_id, "readers changed", relabel=updates, readers=list(doc.acl))
        points = self.embed_chunks(chunks)
        for p in points:
            p.payload["doc_chunks"] = len(chunks)
        return Plan(
            doc.doc_id,
            "updated" if old else "added",
            points=points,
            stale=stale_ids(doc.doc_id, len(chunks), old),
        )

    def apply(self, plan: Plan, report: IngestReport, on_file: Callable[[str, str], None]) -> None:
        """The writer's half of ``plan``: one index update per document, as ``_write`` does."""
        status = plan.status
        if plan.no_rule and status not in ("failed", "empty", "lost"):
            report.admins_only.append(plan.doc_id)
        if status in ("failed", "empty", "lost"):
            report.failed.append((plan.doc_id, plan.reason))
            status = "failed"
        elif status == "unchanged":
            report.unchanged.append(plan.doc_id)
        elif status == "readers changed":
            self._set_readers(plan.relabel, plan.readers)
            report.readers_changed.append(plan.doc_id)
        else:
            self.index.upsert_document(plan.doc_id, plan.points, plan.stale)
            (report.updated if status == "updated" else report.added).append(plan.doc_id)
            report.chunks += len(plan.points)
            self.chunks_written += len(plan.points)
        on_file(plan.doc_id, status)

    def _relabelling(
        self, doc: Document, chunks: list[Chunk], old: DocState | None
    ) -> list[tuple[int, dict[str, Any]]] | None:
        """When only who may read ``doc`` changed: what else changes with them on each point it
        has (the access list goes on all of them at once, ``_set_readers``), the first chunk
        (which holds the document's state) last, so a crash in between leaves the document
        looking changed and the next run does it again. None: write it whole."""
        if old is None or not old.body_hash or old.body_hash != doc.body_hash:
            return None
        if len(chunks) != old.chunks:  # chunked differently since (settings): write it whole
            return None
        return [
            (
                point_id(doc.doc_id, c.seq),
                {"audience": c.audience, "content_hash": c.content_hash},
            )
            for c in sorted(chunks, key=lambda c: c.seq, reverse=True)
        ]

    def _relabel(
        self,
        doc: Document,
        chunks: list[Chunk],
        old: DocState | None,
        report: IngestReport,
        on_file: Callable[[str, str], None],
    ) -> bool:
        """When only who may read ``doc`` changed, write its new readers onto the points it has
        (no parsing into vectors, no embedding) and say so; False when it must be written whole."""
        updates = self._relabelling(doc, chunks, old)
        if updates is None:
            return False
        self._set_readers(updates, doc.acl)
        report.readers_changed.append(doc.doc_id)
        on_file(doc.doc_id, "readers changed")
        return True

    def _set_readers(self, updates: list[tuple[int, dict[str, Any]]], acl: Sequence[str]) -> None:
        """The new access list first, on every point in one update: narrowed or widened, the
        document is never readable under two rules at once, whatever point a crash stops at.
        Written point by point instead (as Qdrant Edge did), a kill left chunks under ``*``
        next to chunks under ``hr``."""
        self.index.set_readers([point for point, _ in updates], acl)
        self.index.set_payloads(updates)

    def _write(
        self,
        pending: list[tuple[Document, list[Chunk], str]],
        known: dict[str, DocState],
        report: IngestReport,
        on_file: Callable[[str, str], None],
    ) -> None:
        if not pending:
            return
        all_chunks = [c for _, chunks, _ in pending for c in chunks]
        points = self.embed_chunks(all_chunks)
        at = 0
        for doc, chunks, status in pending:
            doc_points = points[at : at + len(chunks)]
            at += len(chunks)
            for p in doc_points:
                p.payload["doc_chunks"] = len(chunks)
            stale = stale_ids(doc.doc_id, len(chunks), known.get(doc.doc_id))
            with self._stage("index write"):
                self.index.upsert_document(doc.doc_id, doc_points, stale)
            (report.updated if status == "updated" else report.added).append(doc.doc_id)
            report.chunks += len(chunks)
            self.chunks_written += len(chunks)
            on_file(doc.doc_id, status)


_READ = object()  # the read-ahead thread's last item: every path was read


def through_link(path: Path, root: Path) -> Path | None:
    """The first symbolic link on the way from ``root`` to ``path`` (``path`` itself included),
    or None when it is reached through real folders only."""
    here = root
    for part in path.relative_to(root).parts:
        here = here / part
        if here.is_symlink():
            return here
    return None


def stale_ids(doc_id: str, chunks: int, old: DocState | None) -> list[int]:
    """The ids of the chunks an older, longer version had past the new version's last."""
    return [point_id(doc_id, s) for s in range(chunks, old.chunks)] if old else []
