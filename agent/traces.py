"""Every turn's x-ray, kept durably and bounded: a SQLite table locally, a Redis stream in the bot."""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Collection
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent.turns import Answer, Turn

if TYPE_CHECKING:
    from redis import Redis


log = logging.getLogger(__name__)

# One turn's ids, decisions and timings, as JSON.
TraceRecord = dict[str, Any]


class TraceStore(Protocol):
    def save(self, turn: Turn, answer: Answer, ms: float | None = None) -> None: ...

    def recent(self, limit: int = 20) -> list[TraceRecord]: ...

    def find(self, turn_id: str) -> TraceRecord | None:
        """One turn's trace, while the store still keeps it."""
        ...

    def forget(self, users: Collection[str], turn_ids: Collection[str] = ()) -> int:
        """Delete the traces of these people's turns (by asker or turn id): how many."""
        ...


def _theirs(record: TraceRecord, users: Collection[str], turn_ids: Collection[str]) -> bool:
    return record.get("user") in users or record.get("turn_id") in turn_ids


def _record(turn: Turn, answer: Answer, ms: float | None) -> TraceRecord:
    # Ids, decisions and timings only: the question is kept, document text and secrets are not
    # (a check step's dropped sentences quote documents; the admin page shows them only to
    # readers of those documents).
    return {
        "turn_id": turn.turn_id,
        "user": turn.user_id,
        "at": time.time(),
        "ms": ms,  # the whole turn, wall clock (steps may overlap, so their sum is not it)
        "question": turn.text,
        "status": answer.status,
        "summary": answer.trace_summary(),
        "steps": [asdict(s) for s in answer.trace],
    }


class SqliteTraceStore:
    """Traces in a SQLite file. A trace is a record, never a dependency of the answer: on a full
    or read-only disk ``save`` logs one line and the turn goes on."""

    def __init__(self, path: Path, keep: int = 5000):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        self.keep = keep
        self._created = False
        with contextlib.suppress(sqlite3.Error):  # a full disk: save says so, once per turn
            self._create()

    def _create(self) -> None:
        if not self._created:
            with self._db:
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS traces"
                    " (n INTEGER PRIMARY KEY AUTOINCREMENT, data TEXT)"
                )
            self._created = True

    def save(self, turn: Turn, answer: Answer, ms: float | None = None) -> None:
        try:
            with self._lock:
                self._create()
                with self._db:
                    self._db.execute(
                        "INSERT INTO traces (data) VALUES (?)",
                        (json.dumps(_record(turn, answer, ms)),),
                    )
                    self._db.execute(
                        "DELETE FROM traces WHERE n <= (SELECT MAX(n) FROM traces) - ?",
                        (self.keep,),
                    )
        except (sqlite3.Error, OSError) as exc:
            log.warning(
                "trace of turn %s not kept: %s (%s): free space there, or make it writable",
                turn.turn_id,
                exc,
                self.path,
            )

    def recent(self, limit: int = 20) -> list[TraceRecord]:
        rows = self._db.execute(
            "SELECT data FROM traces ORDER BY n DESC LIMIT ?", (limit,)
        ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def find(self, turn_id: str) -> TraceRecord | None:
        with self._lock:
            row = self._db.execute(
                "SELECT data FROM traces WHERE json_extract(data, '$.turn_id') = ?"
                " ORDER BY n DESC LIMIT 1",
                (turn_id,),
            ).fetchone()
        return json.loads(row[0]) if row else None

    def forget(self, users: Collection[str], turn_ids: Collection[str] = ()) -> int:
        users, turn_ids = set(users), set(turn_ids)
        with self._lock, self._db:
            rows = self._db.execute("SELECT n, data FROM traces").fetchall()
            gone = [(n,) for n, data in rows if _theirs(json.loads(data), users, turn_ids)]
            self._db.executemany("DELETE FROM traces WHERE n = ?", gone)
        return len(gone)

    def close(self) -> None:
        self._db.close()


class RedisTraceStore:
    def __init__(self, client: Redis, key: str = "footnote:traces", maxlen: int = 5000):
        self.client, self.key, self.maxlen = client, key, maxlen

    def save(self, turn: Turn, answer: Answer, ms: float | None = None) -> None:
        with contextlib.suppress(Exception):  # traces must never cost the user their answer
            self.client.xadd(
                self.key,
                {"data": json.dumps(_record(turn, answer, ms))},
                maxlen=self.maxlen,
                approximate=True,
            )

    def recent(self, limit: int = 20) -> list[TraceRecord]:
        return [
            json.loads(fields[b"data"] if b"data" in fields else fields["data"])
            for _, fields in self.client.xrevrange(self.key, count=limit) or []
            if fields
        ]

    def find(self, turn_id: str, page: int = 500) -> TraceRecord | None:
        """Newest first, a page at a time: the stream is bounded (``maxlen``), so this is too."""
        end = "+"
        while True:
            entries = self.client.xrevrange(self.key, max=end, count=page) or []
            for _entry_id, fields in entries:
                raw = fields.get(b"data", fields.get("data")) if fields else None
                if raw is None:
                    continue
                record: TraceRecord = json.loads(raw)
                if record.get("turn_id") == turn_id:
                    return record
            if len(entries) < page:
                return None
            last = entries[-1][0]
            last = last.decode() if isinstance(last, bytes) else str(last)
            end = "(" + last

    def forget(
        self, users: Collection[str], turn_ids: Collection[str] = (), page: int = 500
    ) -> int:
        """Unlike ``save``, raises when Redis cannot be reached: a forget must not pass for done."""
        users, turn_ids = set(users), set(turn_ids)
        gone: list[Any] = []
        start = "-"
        while True:
            entries = self.client.xrange(self.key, min=start, count=page) or []
            for entry_id, fields in entries:
                raw = fields.get(b"data", fields.get("data")) if fields else None
                if raw is not None and _theirs(json.loads(raw), users, turn_ids):
                    gone.append(entry_id)
            if len(entries) < page:
                break
            last = entries[-1][0]
            start = "(" + (last.decode() if isinstance(last, bytes) else str(last))
        for i in range(0, len(gone), page):
            self.client.xdel(self.key, *gone[i : i + page])
        return len(gone)
