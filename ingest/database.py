"""One SQL database for every durable record Footnote keeps: SQLite in the data dir by default,
PostgreSQL when ``FOOTNOTE_DATABASE__URL`` says ``postgresql://…`` — plain SQL both understand.

Each record kind is a subclass, with its own tables and versioned migrations, in the layer that
uses it (sync state in ``ingest/sources/state.py``, turns and feedback in
``bot/reports/feedback.py``, SCIM users and groups in ``bot/identity/scim.py``); only the engine
and the migration runner live here: ``MIGRATIONS`` lists every change in order and ``VERSION_TABLE``
records the last one applied, so opening upgrades the schema in place (under an advisory lock on
PostgreSQL, where two processes may start at once). Add a migration; never edit a shipped one.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self

from ingest.errors import ConfigError
from ingest.settings import DatabaseSettings

SQLITE_FILE = "state.db"
_PG_LOCK = 0x666F6F74  # the advisory lock migrations take on PostgreSQL

Migrations = Sequence[tuple[int, list[str]]]


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


# SQLite's primary result codes for a folder that cannot take a write, and what each says of it.
_DISK_FAULTS = {
    8: "is read-only",  # SQLITE_READONLY
    10: "gave an I/O error",  # SQLITE_IOERR
    13: "is full",  # SQLITE_FULL
    14: "is read-only or missing",  # SQLITE_CANTOPEN: the file cannot be made there
}


def disk_fault(exc: sqlite3.Error, folder: Path) -> str | None:
    """What a SQLite error says of ``folder`` and how to fix it, when it is the disk's fault."""
    reason = _DISK_FAULTS.get(getattr(exc, "sqlite_errorcode", -1) & 0xFF)
    if reason is None:
        return None
    return (
        f"the folder {folder} {reason} ({exc}): free space there or make it writable, or set "
        "FOOTNOTE_DATA_DIR to a folder that is"
    )


class _Connection(Protocol):
    def execute(self, sql: str, params: Sequence[object] = ()) -> Any: ...
    def close(self) -> None: ...


class Database:
    """One connection; every write is one transaction, so a kill leaves the records as they were."""

    MIGRATIONS: ClassVar[Migrations] = ()
    VERSION_TABLE: ClassVar[str] = "schema_version"
    WHAT: ClassVar[str] = "the database"  # named in errors

    def __init__(self, conn: _Connection, postgres: bool) -> None:
        self._conn, self._pg = conn, postgres
        self.migrate()

    @classmethod
    def open(cls, settings: DatabaseSettings, data_dir: Path, connect_timeout: int = 10) -> Self:
        url = settings.url.get_secret_value() if settings.url else ""
        if not url:
            data_dir.mkdir(parents=True, exist_ok=True)
            return cls.sqlite(data_dir / SQLITE_FILE)
        if url.startswith("sqlite:///"):
            return cls.sqlite(Path(url.removeprefix("sqlite:///")))
        if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
            return cls.postgres(
                url.replace("postgresql+psycopg://", "postgresql://", 1), connect_timeout
            )
        raise ConfigError(
            "FOOTNOTE_DATABASE__URL must be postgresql://user:password@host:5432/db or "
            f"sqlite:///path/to/state.db (or unset: {SQLITE_FILE} in FOOTNOTE_DATA_DIR)"
        )

    @classmethod
    def sqlite(cls, path: Path) -> Self:
        try:
            return cls._sqlite(path)
        except sqlite3.OperationalError as exc:
            fault = disk_fault(exc, path.parent)
            if fault is None:
                raise
            raise ConfigError(f"{cls.WHAT} cannot be opened at {path}: {fault}") from exc

    @classmethod
    def _sqlite(cls, path: Path) -> Self:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=5)
        conn.execute("PRAGMA foreign_keys = ON")
        # Switching a new file to WAL needs it to itself and does not wait for the busy timeout:
        # two processes opening it at once retry here rather than fail.
        deadline = time.monotonic() + 5
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        return cls(conn, postgres=False)

    @classmethod
    def postgres(cls, url: str, connect_timeout: int = 10) -> Self:
        import psycopg  # only here: PostgreSQL costs its import only where it is used

        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=connect_timeout)
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

    def _count(self, sql: str, params: Sequence[object] = ()) -> int:
        """Run a DELETE or UPDATE; how many rows it touched."""
        cur = self._conn.execute(sql.replace("?", "%s") if self._pg else sql, params)
        return max(0, int(cur.rowcount))

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        # SQLite: take the write lock at BEGIN. A deferred transaction that reads, then writes
        # after another connection wrote, fails at once with "database is locked" (WAL cannot
        # upgrade a stale snapshot), whatever the busy timeout; two processes opening a new
        # database (both migrating) did exactly that. IMMEDIATE waits its turn instead.
        self._rows("BEGIN" if self._pg else "BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._rows("ROLLBACK")
            raise
        self._rows("COMMIT")

    def migrate(self, migrations: Migrations | None = None) -> None:
        """Apply, in one transaction, every migration the database has not seen yet."""
        migrations = self.MIGRATIONS if migrations is None else migrations
        table = self.VERSION_TABLE
        self._rows(f"CREATE TABLE IF NOT EXISTS {table} (version INTEGER NOT NULL)")
        latest = migrations[-1][0]
        with self._transaction():
            if self._pg:
                self._rows("SELECT pg_advisory_xact_lock(?)", (_PG_LOCK,))
            current = self._rows(f"SELECT MAX(version) FROM {table}")[0][0] or 0
            if current > latest:
                raise ConfigError(
                    f"{self.WHAT} is at schema {current}, newer than this Footnote knows "
                    f"({latest}): upgrade Footnote"
                )
            for version, statements in migrations:
                if version > current:
                    for sql in statements:
                        self._rows(sql)
                    self._rows(f"INSERT INTO {table} (version) VALUES (?)", (version,))

    def schema_version(self) -> int:
        return int(self._rows(f"SELECT MAX(version) FROM {self.VERSION_TABLE}")[0][0])
