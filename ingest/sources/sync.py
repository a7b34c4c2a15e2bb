"""One sync loop for every connector: write a batch into the index, then advance the cursor.

The order is what makes a sync resumable: a batch's documents and deletions reach the index
first, and only then does one transaction record their versions and the batch's cursor. A kill
in between repeats that batch at the next sync, and the index skips what it already holds.

Two ways to spread the work. ``IndexSink`` with a ``WorkerPool`` (``--workers N``) parses and
embeds a batch in N processes and writes it here, in one process; a worker that dies loses its
documents, which are recorded as failed with the cursor left where it was (``WorkersDied``).
A ``Shard`` (``--shard i/N``, one per pod of an Indexed Job, Qdrant server only) lists the same
changes as the others but writes only the documents whose key hashes to it, records their
versions as it goes, and leaves the cursor to the last shard to finish (``SyncState.shard_done``).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Protocol
from urllib.parse import urlsplit

from ingest.audience import document_audience
from ingest.documents import Document
from ingest.errors import BadDocument, ConfigError, FootnoteError
from ingest.languages import detect_lang
from ingest.parse import MEDIA_TYPES, parse_bytes
from ingest.pipeline import READER_VERSION, Ingester, IngestReport, PlanPool
from ingest.sources.confluence import ConfluenceConnector
from ingest.sources.connector import (
    Batch,
    Connector,
    ConnectorEnv,
    SourceDocument,
    index_acl,
)
from ingest.sources.gdrive import GoogleDriveConnector
from ingest.sources.sharepoint import SharePointConnector
from ingest.sources.state import SyncState
from ingest.sources.web import WebConnector

# kind → builds a connector from the config ``footnote sources add`` stored, and the settings
CONNECTORS: dict[str, Callable[[Mapping[str, Any], ConnectorEnv], Connector]] = {
    "web": WebConnector.from_config,
    "confluence": ConfluenceConnector.from_config,
    "sharepoint": SharePointConnector.from_config,
    "gdrive": GoogleDriveConnector.from_config,
}


def open_connector(kind: str, config: Mapping[str, Any], env: ConnectorEnv) -> Connector:
    if kind not in CONNECTORS:
        raise ConfigError(f"unknown source kind {kind!r}; known: {', '.join(sorted(CONNECTORS))}")
    return CONNECTORS[kind](config, env)


class Sink(Protocol):
    """Where a sync writes. ``IndexSink`` is the index ``footnote ingest`` writes."""

    def write(self, source: str, docs: Sequence[SourceDocument]) -> list[tuple[str, str]]:
        """Write documents (each in one index update); return the (key, reason) of each that
        could not be read. The rest are in the index when this returns."""
        ...

    def delete(self, source: str, keys: Sequence[str]) -> None: ...

    def finish(self) -> None:
        """The sync is done: make what was written searchable at full speed."""
        ...


class WorkersDied(FootnoteError):
    """A worker process died with documents of a batch unwritten. The rest of the batch is
    written; the lost documents are failed and the cursor stays, so the next sync retries them."""

    def __init__(self, failed: list[tuple[str, str]], lost: list[tuple[str, str]]) -> None:
        self.failed, self.lost = failed, lost
        shown = ", ".join(k for k, _ in lost[:3]) + (" …" if len(lost) > 3 else "")
        super().__init__(
            f"{len(lost)} documents ({shown}) were lost with a worker process that died "
            "(killed, or out of memory: fewer --workers or more memory); the cursor stays where "
            "it was and the next sync writes them"
        )


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count``: the documents whose key hashes to it. The hash is stable
    across processes and machines (not Python's ``hash``), so every pod agrees."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not m or not 0 <= int(m[1]) < int(m[2]):
            raise ConfigError(
                f"--shard takes INDEX/COUNT with 0 <= INDEX < COUNT, e.g. 0/4, got {text!r}"
            )
        return cls(int(m[1]), int(m[2]))

    def owns(self, key: str) -> bool:
        return shard_of(key, self.count) == self.index

    def part(self, batch: Batch) -> Batch:
        """This shard's share of a batch; the cursor is the batch's own."""
        return Batch(
            cursor=batch.cursor,
            documents=[d for d in batch.documents if self.owns(d.key)],
            deleted=[k for k in batch.deleted if self.owns(k)],
            unchanged=[k for k in batch.unchanged if self.owns(k)],
            failed=[(k, why) for k, why in batch.failed if self.owns(k)],
        )


def shard_of(key: str, count: int) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") % count


def doc_id(source: str, key: str) -> str:
    """A synced document's id in the index: the source's name, a colon, its key without a
    scheme. The colon keeps it apart from ``footnote ingest``'s ``<folder>/<path>`` ids, so
    ingesting a folder that shares a source's name never deletes what the source synced."""
    return f"{source}:{key.split('://', 1)[-1]}"


@dataclass
class IndexSink:
    """Parses what a connector fetched with the folder ingest's parsers and writes it through
    the same ``Ingester``, so synced pages and ingested files are chunked, embedded and
    filtered alike."""

    ingester: Ingester
    admin_groups: Sequence[str]
    statuses: dict[str, str] = field(default_factory=dict)  # doc_id → added / updated / deleted …
    # told of each document written or deleted, e.g. a progress bar
    on_file: Callable[[str, str], None] = lambda doc_id, status: None

    def write(self, source: str, docs: Sequence[SourceDocument]) -> list[tuple[str, str]]:
        if self.ingester.pool is not None:  # --workers N: parse and embed there, write here
            return self._write_pooled(source, docs, self.ingester.pool)
        failed, ready = [], []
        for sd in docs:
            try:
                ready.append(self.document(source, sd))
            except BadDocument as exc:
                failed.append((sd.key, str(exc)))
        self.ingester.add_documents(ready, on_file=self._done, optimize=False)
        return failed

    def _done(self, doc_id: str, status: str) -> None:
        self.statuses[doc_id] = status
        self.on_file(doc_id, status)

    def _write_pooled(
        self, source: str, docs: Sequence[SourceDocument], pool: PlanPool
    ) -> list[tuple[str, str]]:
        """As ``write``, the workers planning each document and this process applying the plans
        in order. A document with no text is skipped, as ``add_documents`` skips it."""
        from ingest.sparse import record_in

        index = self.ingester.index
        record_in(index, self.ingester.sparse)
        failed, lost, report = [], [], IngestReport()
        for sd, plan in zip(docs, pool.plan_synced(source, docs, index.documents()), strict=True):
            if plan.status == "failed":
                failed.append((sd.key, plan.reason))
            elif plan.status == "lost":
                lost.append((sd.key, plan.reason))
            elif plan.status != "empty":
                self.ingester.apply(plan, report, self._done)
        index.purge_tombstones()
        if lost:
            raise WorkersDied(failed, lost)
        return failed

    def delete(self, source: str, keys: Sequence[str]) -> None:
        for key in keys:
            self.ingester.index.delete_document(doc_id(source, key))
            self._done(doc_id(source, key), "deleted")

    def finish(self) -> None:
        """Once per sync, not per batch: building the search structures costs more as the
        index grows, and a kill before it loses nothing (the points are written)."""
        if any(s != "unchanged" for s in self.statuses.values()):
            self.ingester.index.optimize()
        self.statuses.clear()

    def document(self, source: str, sd: SourceDocument) -> Document:
        data = sd.content.encode() if isinstance(sd.content, str) else sd.content
        suffix = MEDIA_TYPES.get(sd.media_type)
        if suffix is None:
            raise BadDocument(f"unsupported media type {sd.media_type}")
        stem = PurePosixPath(urlsplit(sd.url).path).stem or urlsplit(sd.url).netloc
        parsed = parse_bytes(data, suffix, stem, self.ingester.settings)
        acl = index_acl(sd.principals, self.admin_groups)
        title = sd.title or parsed.title
        text = "\n".join(s.text for s in parsed.sections)
        body = hashlib.sha256(data)  # what is embedded: everything but who may read it
        body.update(json.dumps([title, sd.url, sd.owner]).encode())
        body.update(READER_VERSION.encode())
        digest = hashlib.sha256(data)
        digest.update(json.dumps([title, sd.url, sd.owner, acl]).encode())
        digest.update(READER_VERSION.encode())
        return Document(
            doc_id=doc_id(source, sd.key),
            title=title,
            source=sd.url,
            sections=parsed.sections,
            updated=sd.updated or time.strftime("%Y-%m-%d", time.gmtime()),
            owner=sd.owner,
            acl=acl,
            lang=detect_lang(text),
            content_hash=digest.hexdigest(),
            body_hash=body.hexdigest(),
            url=sd.url,
            audience=sorted(document_audience(title, parsed.sections, {}, acl)),
        )


@dataclass
class SyncReport:
    written: list[str] = field(default_factory=list)  # keys written (new or changed)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    batches: int = 0
    seconds: float = 0.0
    # a shard's sync: whether it was the last of its run to finish and so moved the cursor
    cursor_advanced: bool = False


def sync(
    name: str,
    state: SyncState,
    connector: Connector,
    sink: Sink,
    shard: Shard | None = None,
) -> SyncReport:
    """Bring source ``name`` up to date (with ``shard``: its share of it). A source that cannot
    be listed stops the sync with its error recorded (``footnote sources list`` shows it) and
    re-raised."""
    record = state.source(name)
    if record is None:
        raise ConfigError(f"no source named {name!r}; see footnote sources list")
    started = time.perf_counter()
    report = SyncReport()
    known = state.versions(name)
    cursor = record.cursor
    if shard is not None:
        state.shard_started(name, shard.index, shard.count, record.cursor)
    try:
        for listed in connector.changes(record.cursor, dict(known)):
            batch = listed if shard is None else shard.part(listed)
            lost: list[tuple[str, str]] = []
            try:
                failed = dict(sink.write(name, batch.documents) + batch.failed)
            except WorkersDied as exc:
                failed, lost = dict(exc.failed + batch.failed), exc.lost
            gone = [k for k in batch.deleted if k in known]
            sink.delete(name, gone)
            unwritten = set(failed) | {k for k, _ in lost}
            written = {
                d.key: (d.version, doc_id(name, d.key))
                for d in batch.documents
                if d.key not in unwritten
            }
            # a shard's cursor moves when every shard is done; a lost document keeps it here
            keep = shard is not None or bool(lost)
            state.record(name, None if keep else batch.cursor, written, gone)
            known.update({k: v for k, (v, _) in written.items()})
            for k in gone:
                known.pop(k, None)
            report.written += list(written)
            report.unchanged += batch.unchanged
            report.deleted += gone
            report.failed += list(failed.items()) + lost
            report.batches += 1
            if lost:
                raise WorkersDied(list(failed.items()), lost)
            cursor = batch.cursor
        if shard is not None:
            report.cursor_advanced = state.shard_done(
                name, shard.index, shard.count, record.cursor, cursor
            )
    except Exception as exc:
        state.finish(name, len(report.failed), str(exc))
        raise
    finally:
        sink.finish()
    first = report.failed[0] if report.failed else None
    state.finish(name, len(report.failed), f"{first[0]}: {first[1]}" if first else None)
    report.seconds = time.perf_counter() - started
    return report
