"""Durable sync state: the sources, where each one's sync stands, and what version of each
document was written. In the one database of ``ingest/database.py`` (SQLite in the data dir by
default, PostgreSQL when ``FOOTNOTE_DATABASE__URL`` is set), with its own versioned migrations.

A sharded sync (``footnote sync --shard i/N``, the pods of an Indexed Job) moves a source's cursor
only once every shard has written its share: each shard records when it started listing from the
source's cursor and, once written, where its listing ended; the last one to finish moves the
cursor, in the transaction that records it. A shard killed mid-way never finishes, so the cursor
stays; the versions its documents were recorded with as it went make the rerun skip them.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ingest.database import SQLITE_FILE, Database, Migrations, now
from ingest.errors import ConfigError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SQLITE_FILE", "SourceRecord", "SyncState", "now"]

MIGRATIONS: list[tuple[int, list[str]]] = [
    (
        1,
        [
            """CREATE TABLE sources (
                name TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                config TEXT NOT NULL,
                cursor TEXT,
                cursor_at TEXT,
                last_sync TEXT,
                last_error TEXT,
                errors INTEGER NOT NULL DEFAULT 0,
                created TEXT NOT NULL
            )""",
            """CREATE TABLE source_documents (
                source TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
                key TEXT NOT NULL,
                version TEXT NOT NULL,
                doc_id TEXT NOT NULL,
                synced_at TEXT NOT NULL,
                PRIMARY KEY (source, key)
            )""",
        ],
    ),
]
MIGRATIONS.append(
    (
        2,
        [
            # One row per shard of a sharded sync, keyed by the cursor they all listed from.
            # ``base`` and ``cursor`` hold cursors as JSON, so "no cursor yet" (null) differs from
            # an empty one; ``cursor`` is null until the shard has written all it listed.
            """CREATE TABLE sync_shards (
                source TEXT NOT NULL REFERENCES sources(name) ON DELETE CASCADE,
                shards INTEGER NOT NULL,
                shard INTEGER NOT NULL,
                base TEXT NOT NULL,
                started TEXT NOT NULL,
                cursor TEXT,
                PRIMARY KEY (source, shards, shard, base)
            )""",
        ],
    )
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


@dataclass(frozen=True)
class SourceRecord:
    name: str
    kind: str
    config: dict[str, Any]
    cursor: str | None
    cursor_at: str | None  # when the cursor last advanced
    last_sync: str | None  # when the last sync finished, whole or not
    last_error: str | None
    errors: int  # documents that failed in the last sync
    documents: int


class SyncState(Database):
    MIGRATIONS: ClassVar[Migrations] = MIGRATIONS
    VERSION_TABLE: ClassVar[str] = "schema_version"
    WHAT: ClassVar[str] = "the sync state"

    # --- sources ---------------------------------------------------------------------------

    def add_source(self, name: str, kind: str, config: Mapping[str, Any]) -> None:
        if self.source(name):
            raise ConfigError(f"a source named {name!r} exists already; pick another --name")
        self._rows(
            "INSERT INTO sources (name, kind, config, created) VALUES (?, ?, ?, ?)",
            (name, kind, json.dumps(dict(config), sort_keys=True), now()),
        )

    def sources(self) -> list[SourceRecord]:
        rows = self._rows(
            "SELECT s.name, s.kind, s.config, s.cursor, s.cursor_at, s.last_sync, s.last_error,"
            " s.errors, (SELECT COUNT(*) FROM source_documents d WHERE d.source = s.name)"
            " FROM sources s ORDER BY s.name"
        )
        return [
            SourceRecord(r[0], r[1], json.loads(r[2]), r[3], r[4], r[5], r[6], int(r[7]), int(r[8]))
            for r in rows
        ]

    def source(self, name: str) -> SourceRecord | None:
        return next((s for s in self.sources() if s.name == name), None)

    def versions(self, name: str) -> dict[str, str]:
        """key → the version last written, for every document the source has in the index."""
        rows = self._rows("SELECT key, version FROM source_documents WHERE source = ?", (name,))
        return {str(k): str(v) for k, v in rows}

    def record(
        self,
        name: str,
        cursor: str | None,
        written: Mapping[str, tuple[str, str]],
        deleted: Sequence[str],
    ) -> None:
        """After a batch is in the index: its versions (key → (version, doc_id)), its deletions
        and the new cursor, in one transaction. ``cursor`` None: the cursor stays (a shard's
        batch, or one a worker died in)."""
        at = now()
        with self._transaction():
            for key, (version, doc_id) in written.items():
                self._rows(
                    "INSERT INTO source_documents (source, key, version, doc_id, synced_at)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (source, key) DO UPDATE SET"
                    " version = excluded.version, doc_id = excluded.doc_id,"
                    " synced_at = excluded.synced_at",
                    (name, key, version, doc_id, at),
                )
            for key in deleted:
                self._rows("DELETE FROM source_documents WHERE source = ? AND key = ?", (name, key))
            if cursor is not None:
                self._rows(
                    "UPDATE sources SET cursor = ?, cursor_at = ? WHERE name = ?",
                    (cursor, at, name),
                )

    # --- sharded syncs ---------------------------------------------------------------------

    def shard_started(self, name: str, shard: int, shards: int, base: str | None) -> None:
        """Shard ``shard`` of ``shards`` lists the changes since ``base`` (a rerun of a killed
        shard starts its row over)."""
        started = dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")
        self._rows(
            "INSERT INTO sync_shards (source, shards, shard, base, started, cursor)"
            " VALUES (?, ?, ?, ?, ?, NULL) ON CONFLICT (source, shards, shard, base) DO UPDATE"
            " SET started = excluded.started, cursor = NULL",
            (name, shards, shard, json.dumps(base), started),
        )

    def shard_done(
        self, name: str, shard: int, shards: int, base: str | None, cursor: str | None
    ) -> bool:
        """Shard ``shard`` has written everything it listed, up to ``cursor``. When it is the
        last of the ``shards`` listing from ``base`` to finish, the source's cursor moves and
        True comes back.

        The cursor moved to is the one of the shard that started listing first: each shard's
        listing covers the changes up to the moment it was made, so the earliest one's end is
        covered by all (two listings of an unchanged source end at the same cursor anyway)."""
        with self._transaction():
            if self._pg:  # the last two shards to finish take turns here (SQLite: BEGIN IMMEDIATE)
                self._rows("SELECT cursor FROM sources WHERE name = ? FOR UPDATE", (name,))
            key = (name, shards, json.dumps(base))
            self._rows(
                "UPDATE sync_shards SET cursor = ?"
                " WHERE source = ? AND shards = ? AND base = ? AND shard = ?",
                (json.dumps(cursor), *key, shard),
            )
            rows = self._rows(
                "SELECT shard, started, cursor FROM sync_shards"
                " WHERE source = ? AND shards = ? AND base = ? AND cursor IS NOT NULL",
                key,
            )
            current = self._rows("SELECT cursor FROM sources WHERE name = ?", (name,))
            if {int(r[0]) for r in rows} != set(range(shards)) or current[0][0] != base:
                return False  # others still writing (or a run from an older cursor)
            first = min(rows, key=lambda r: (str(r[1]), int(r[0])))
            moved = json.loads(first[2])
            if moved is not None:
                self._rows(
                    "UPDATE sources SET cursor = ?, cursor_at = ? WHERE name = ?",
                    (moved, now(), name),
                )
            self._rows("DELETE FROM sync_shards WHERE source = ?", (name,))
            return True

    def finish(self, name: str, errors: int, last_error: str | None) -> None:
        """A sync ended (whole, or stopped by ``last_error``)."""
        self._rows(
            "UPDATE sources SET last_sync = ?, errors = ?, last_error = ? WHERE name = ?",
            (now(), errors, last_error, name),
        )
