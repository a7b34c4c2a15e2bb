"""One sync loop for every connector: write a batch into the index, then advance the cursor.

The order is what makes a sync resumable: a batch's documents and deletions reach the index
first, and only then does one transaction record their versions and the batch's cursor. A kill
in between repeats that batch at the next sync, and the index skips what it already holds.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from ingest.audience import document_audience
from ingest.documents import Document
from ingest.errors import BadDocument, ConfigError
from ingest.languages import detect_lang
from ingest.parse import MEDIA_TYPES, parse_bytes
from ingest.sources.confluence import ConfluenceConnector
from ingest.sources.connector import Connector, ConnectorEnv, SourceDocument, index_acl
from ingest.sources.gdrive import GoogleDriveConnector
from ingest.sources.sharepoint import SharePointConnector
from ingest.sources.state import SyncState
from ingest.sources.web import WebConnector

if TYPE_CHECKING:
    from ingest.pipeline import Ingester

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

    def write(self, source: str, docs: Sequence[SourceDocument]) -> list[tuple[str, str]]:
        failed, ready = [], []
        for sd in docs:
            try:
                ready.append(self.document(source, sd))
            except BadDocument as exc:
                failed.append((sd.key, str(exc)))
        self.ingester.add_documents(ready, on_file=self.statuses.__setitem__, optimize=False)
        return failed

    def delete(self, source: str, keys: Sequence[str]) -> None:
        for key in keys:
            self.ingester.index.delete_document(doc_id(source, key))
            self.statuses[doc_id(source, key)] = "deleted"

    def finish(self) -> None:
        """Once per sync, not per batch: building the search structures costs more as the
        index grows, and a kill before it loses nothing (the points are written)."""
        if any(s != "unchanged" for s in self.statuses.values()):
            self.ingester.index.optimize()
        self.statuses.clear()

    def document(self, source: str, sd: SourceDocument) -> Document:
        from ingest.pipeline import READER_VERSION

        data = sd.content.encode() if isinstance(sd.content, str) else sd.content
        suffix = MEDIA_TYPES.get(sd.media_type)
        if suffix is None:
            raise BadDocument(f"unsupported media type {sd.media_type}")
        stem = PurePosixPath(urlsplit(sd.url).path).stem or urlsplit(sd.url).netloc
        parsed = parse_bytes(data, suffix, stem)
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


def sync(
    name: str,
    state: SyncState,
    connector: Connector,
    sink: Sink,
) -> SyncReport:
    """Bring source ``name`` up to date. A source that cannot be listed stops the sync with its
    error recorded (``footnote sources list`` shows it) and re-raised."""
    record = state.source(name)
    if record is None:
        raise ConfigError(f"no source named {name!r}; see footnote sources list")
    started = time.perf_counter()
    report = SyncReport()
    known = state.versions(name)
    try:
        for batch in connector.changes(record.cursor, dict(known)):
            failed = dict(sink.write(name, batch.documents) + batch.failed)
            gone = [k for k in batch.deleted if k in known]
            sink.delete(name, gone)
            written = {
                d.key: (d.version, doc_id(name, d.key))
                for d in batch.documents
                if d.key not in failed
            }
            state.record(name, batch.cursor, written, gone)
            known.update({k: v for k, (v, _) in written.items()})
            for k in gone:
                known.pop(k, None)
            report.written += list(written)
            report.unchanged += batch.unchanged
            report.deleted += gone
            report.failed += list(failed.items())
            report.batches += 1
    except Exception as exc:
        state.finish(name, len(report.failed), str(exc))
        raise
    finally:
        sink.finish()
    first = report.failed[0] if report.failed else None
    state.finish(name, len(report.failed), f"{first[0]}: {first[1]}" if first else None)
    report.seconds = time.perf_counter() - started
    return report
