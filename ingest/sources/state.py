"""Durable sync state: the sources, where each one's sync stands, and what version of each
document was written. In the one database of ``ingest/database.py`` (SQLite in the data dir by
default, PostgreSQL when ``FOOTNOTE_DATABASE__URL`` is set), with its own versioned migrations.
"""

from __future__ import annotations

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
        cursor: str,
        written: Mapping[str, tuple[str, str]],
        deleted: Sequence[str],
    ) -> None:
        """After a batch is in the index: its versions (key → (version, doc_id)), its deletions
        and the new cursor, in one transaction."""
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
            self._rows(
                "UPDATE sources SET cursor = ?, cursor_at = ? WHERE name = ?", (cursor, at, name)
            )

    def finish(self, name: str, errors: int, last_error: str | None) -> None:
        """A sync ended (whole, or stopped by ``last_error``)."""
        self._rows(
            "UPDATE sources SET last_sync = ?, errors = ?, last_error = ? WHERE name = ?",
            (now(), errors, last_error, name),
        )
