"""Durable sync state: the sources, where each one's sync stands, and what version of each
document was written. SQLite in the data dir by default, PostgreSQL when
``FOOTNOTE_DATABASE__URL`` says ``postgresql://…`` — one schema, plain SQL both understand.

The schema is versioned: ``MIGRATIONS`` lists every change in order and ``schema_version``
records the last one applied, so opening the state upgrades it in place (under an advisory lock
on PostgreSQL, where two syncs may start at once). Add a migration; never edit a shipped one.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ingest.errors import ConfigError
from ingest.settings import DatabaseSettings

SQLITE_FILE = "state.db"

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
_PG_LOCK = 0x666F6F74  # the advisory lock migrations take on PostgreSQL


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


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


class _Connection(Protocol):
    def execute(self, sql: str, params: Sequence[object] = ()) -> Any: ...
    def close(self) -> None: ...


class SyncState:
    """One connection; every write is one transaction, so a kill leaves the state as it was."""

    def __init__(self, conn: _Connection, postgres: bool) -> None:
        self._conn, self._pg = conn, postgres
        self.migrate()

    @classmethod
    def open(cls, settings: DatabaseSettings, data_dir: Path) -> SyncState:
        url = settings.url.get_secret_value() if settings.url else ""
        if not url:
            data_dir.mkdir(parents=True, exist_ok=True)
            return cls.sqlite(data_dir / SQLITE_FILE)
        if url.startswith("sqlite:///"):
            return cls.sqlite(Path(url.removeprefix("sqlite:///")))
        if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
            return cls.postgres(url.replace("postgresql+psycopg://", "postgresql://", 1))
        raise ConfigError(
            "FOOTNOTE_DATABASE__URL must be postgresql://user:password@host:5432/db or "
            f"sqlite:///path/to/state.db (or unset: {SQLITE_FILE} in FOOTNOTE_DATA_DIR)"
        )

    @classmethod
    def sqlite(cls, path: Path) -> SyncState:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        return cls(conn, postgres=False)

    @classmethod
    def postgres(cls, url: str) -> SyncState:
        import psycopg  # only here: PostgreSQL costs its import only where it is used

        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise ConfigError(
                f"cannot reach the database in FOOTNOTE_DATABASE__URL: {exc}".strip()
            ) from exc
        return cls(conn, postgres=True)

    def close(self) -> None:
        self._conn.close()

    # --- plumbing --------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        cur = self._conn.execute(sql.replace("?", "%s") if self._pg else sql, params)
        return list(cur.fetchall()) if cur.description else []

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._rows("BEGIN")
        try:
            yield
        except BaseException:
            self._rows("ROLLBACK")
            raise
        self._rows("COMMIT")

    def migrate(self, migrations: Sequence[tuple[int, list[str]]] = MIGRATIONS) -> None:
        """Apply, in one transaction, every migration the state has not seen yet."""
        self._rows("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        latest = migrations[-1][0]
        with self._transaction():
            if self._pg:
                self._rows("SELECT pg_advisory_xact_lock(?)", (_PG_LOCK,))
            current = self._rows("SELECT MAX(version) FROM schema_version")[0][0] or 0
            if current > latest:
                raise ConfigError(
                    f"the sync state is at schema {current}, newer than this Footnote knows "
                    f"({latest}): upgrade Footnote"
                )
            for version, statements in migrations:
                if version > current:
                    for sql in statements:
                        self._rows(sql)
                    self._rows("INSERT INTO schema_version (version) VALUES (?)", (version,))

    def schema_version(self) -> int:
        return int(self._rows("SELECT MAX(version) FROM schema_version")[0][0])

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
