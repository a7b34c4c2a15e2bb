"""A durable record of answered turns and the asker's feedback on them, so 👍/👎 can be read:
exported as evaluation cases (``bot/reports/cases.py``), purged after the retention period, deleted per
person on request.

Kept in the one database of ``ingest/database.py`` (SQLite in the data dir, PostgreSQL when
``FOOTNOTE_DATABASE__URL`` is set), in tables of its own with their own migrations. Per turn: the
question, the asker's user id and groups, where it was asked, the answer's status and text, and
what it cited (document id, title, link — never passage text). Per feedback: the vote, a reason
and the asker's free text.

``FeedbackStore`` is plain synchronous SQL for the command line and tests. The bot talks to it
through ``TurnLog``, which never raises and never makes an answer wait: it opens the database
lazily, runs each call on a worker thread, and after a failure logs once and skips the database
for a while — as ``bot/chat/conversation_state.py`` does with Redis.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ClassVar, Literal, TypeVar

from ingest.database import Database, Migrations
from ingest.settings import DatabaseSettings

log = logging.getLogger(__name__)

T = TypeVar("T")

Vote = Literal["up", "down"]
# Why an answer was rated so: the asker picks one; "other" comes with their own words.
REASONS: dict[str, str] = {
    "wrong": "Wrong",
    "outdated": "Outdated",
    "incomplete": "Incomplete",
    "unanswered": "Didn't answer",
    "other": "Other",
}
MAX_NOTE = 500  # characters of free text kept with a reason
RETRY_AFTER_S = 30.0  # after a database error, calls skip the database this long
CONNECT_TIMEOUT_S = 3  # the bot's connection attempt; an answer never waits on it


def now() -> str:
    """UTC, to the millisecond: turns of one conversation seconds apart keep their order."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class CitedDocument:
    doc_id: str
    title: str = ""
    link: str = ""


@dataclass(frozen=True)
class ConflictNote:
    """Two documents an answer found disagreeing (the older one, then the newer that applies)."""

    older: str
    older_title: str
    older_updated: str
    newer: str
    newer_title: str
    newer_updated: str
    note: str = ""


@dataclass(frozen=True)
class TurnRecord:
    turn_id: str
    platform: str
    conversation: str
    user_id: str
    groups: tuple[str, ...]
    channel_kind: str
    question: str
    status: str
    answer: str
    citations: tuple[CitedDocument, ...] = ()
    at: str = field(default_factory=now)
    conflicts: tuple[ConflictNote, ...] = ()


@dataclass(frozen=True)
class FeedbackRecord:
    turn_id: str
    user_id: str
    vote: Vote
    reason: str = ""  # one of REASONS, or "" while the asker has not picked one
    note: str = ""
    at: str = field(default_factory=now)


def owner_key(owner: str) -> str:
    """An owner as routes match it: e-mail-like addresses compare without case or spaces."""
    return owner.strip().lower()


@dataclass(frozen=True)
class DigestRoute:
    """Where one document owner's weekly digest goes: a Slack channel or a Teams conversation."""

    owner: str
    platform: Literal["slack", "teams"]
    target: str  # a Slack channel id (C…/G…) or a Teams conversation id (19:…)

    def __post_init__(self) -> None:
        object.__setattr__(self, "owner", owner_key(self.owner))

    @property
    def key(self) -> str:
        """The route's part of a digest claim: one post per owner and period."""
        return "owner:" + self.owner


def ago(days: float, at: str | None = None) -> str:
    """The timestamp ``days`` before ``at`` (default: now), as the records store them."""
    base = dt.datetime.fromisoformat(at) if at else dt.datetime.now(dt.UTC)
    return (base - dt.timedelta(days=days)).isoformat(timespec="milliseconds")


class FeedbackStore(Database):
    MIGRATIONS: ClassVar[Migrations] = [
        (
            1,
            [
                """CREATE TABLE turns (
                    turn_id TEXT PRIMARY KEY,
                    at TEXT NOT NULL,
                    platform TEXT NOT NULL,
                    conversation TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    user_groups TEXT NOT NULL,
                    channel_kind TEXT NOT NULL,
                    question TEXT NOT NULL,
                    status TEXT NOT NULL,
                    answer TEXT NOT NULL,
                    citations TEXT NOT NULL
                )""",
                "CREATE INDEX turns_at ON turns (at)",
                "CREATE INDEX turns_user ON turns (user_id)",
                "CREATE INDEX turns_conversation ON turns (conversation, at)",
                """CREATE TABLE feedback (
                    turn_id TEXT NOT NULL REFERENCES turns(turn_id) ON DELETE CASCADE,
                    user_id TEXT NOT NULL,
                    vote TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    note TEXT NOT NULL,
                    at TEXT NOT NULL,
                    PRIMARY KEY (turn_id, user_id)
                )""",
                "CREATE INDEX feedback_at ON feedback (at)",
                "CREATE INDEX feedback_user ON feedback (user_id)",
            ],
        ),
        (
            2,
            [
                # what the answer noted as two sources disagreeing (JSON list of ConflictNote)
                "ALTER TABLE turns ADD COLUMN conflicts TEXT NOT NULL DEFAULT '[]'",
                # one row per digest period: the replica that inserts it is the one that posts
                """CREATE TABLE digests (
                    period TEXT PRIMARY KEY,
                    claimed_at TEXT NOT NULL,
                    claimed_by TEXT NOT NULL,
                    posted_at TEXT NOT NULL DEFAULT ''
                )""",
            ],
        ),
        (
            3,
            [
                # per-owner digests: a claim is per (period, route); "" is the default channel
                """CREATE TABLE digests_v3 (
                    period TEXT NOT NULL,
                    route TEXT NOT NULL DEFAULT '',
                    claimed_at TEXT NOT NULL,
                    claimed_by TEXT NOT NULL,
                    posted_at TEXT NOT NULL DEFAULT '',
                    PRIMARY KEY (period, route)
                )""",
                "INSERT INTO digests_v3 (period, route, claimed_at, claimed_by, posted_at)"
                " SELECT period, '', claimed_at, claimed_by, posted_at FROM digests",
                "DROP TABLE digests",
                "ALTER TABLE digests_v3 RENAME TO digests",
                # where each document owner wants their digest (footnote digest route)
                """CREATE TABLE digest_routes (
                    owner TEXT PRIMARY KEY,
                    platform TEXT NOT NULL,
                    target TEXT NOT NULL,
                    added_at TEXT NOT NULL
                )""",
            ],
        ),
    ]
    VERSION_TABLE: ClassVar[str] = "feedback_schema_version"
    WHAT: ClassVar[str] = "the feedback record"

    _TURN_COLUMNS = (
        "turn_id, platform, conversation, user_id, user_groups, channel_kind, question, status,"
        " answer, citations, at, conflicts"
    )

    def record_turn(self, t: TurnRecord) -> None:
        cited = [{"doc_id": c.doc_id, "title": c.title, "link": c.link} for c in t.citations]
        self._rows(
            f"INSERT INTO turns ({self._TURN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (turn_id) DO NOTHING",
            (
                t.turn_id,
                t.platform,
                t.conversation,
                t.user_id,
                json.dumps(list(t.groups)),
                t.channel_kind,
                t.question,
                t.status,
                t.answer,
                json.dumps(cited),
                t.at,
                json.dumps([asdict(c) for c in t.conflicts]),
            ),
        )

    @staticmethod
    def _turn(row: tuple) -> TurnRecord:
        cited = tuple(CitedDocument(**c) for c in json.loads(row[9]))
        return TurnRecord(
            turn_id=row[0],
            platform=row[1],
            conversation=row[2],
            user_id=row[3],
            groups=tuple(json.loads(row[4])),
            channel_kind=row[5],
            question=row[6],
            status=row[7],
            answer=row[8],
            citations=cited,
            at=row[10],
            conflicts=tuple(ConflictNote(**c) for c in json.loads(row[11] or "[]")),
        )

    def turn(self, turn_id: str) -> TurnRecord | None:
        rows = self._rows(f"SELECT {self._TURN_COLUMNS} FROM turns WHERE turn_id = ?", (turn_id,))
        return self._turn(rows[0]) if rows else None

    def record_feedback(self, f: FeedbackRecord) -> bool:
        """Store (or replace) a person's feedback on a turn; False when the turn is not on record
        (never recorded, or purged)."""
        with self._transaction():
            if not self._rows("SELECT 1 FROM turns WHERE turn_id = ?", (f.turn_id,)):
                return False
            self._rows(
                "INSERT INTO feedback (turn_id, user_id, vote, reason, note, at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id, user_id) DO UPDATE SET"
                " vote = excluded.vote, reason = excluded.reason, note = excluded.note,"
                " at = excluded.at",
                (f.turn_id, f.user_id, f.vote, f.reason, f.note[:MAX_NOTE], f.at),
            )
        return True

    def feedback(self, turn_id: str) -> list[FeedbackRecord]:
        rows = self._rows(
            "SELECT turn_id, user_id, vote, reason, note, at FROM feedback WHERE turn_id = ?"
            " ORDER BY at",
            (turn_id,),
        )
        return [FeedbackRecord(*r) for r in rows]

    def rated_since(self, since: str) -> list[tuple[TurnRecord, FeedbackRecord]]:
        """Every turn that got feedback at or after ``since``, oldest first, with the asker's
        latest feedback on it (only the asker may rate a turn)."""
        turn_columns = [c.strip() for c in self._TURN_COLUMNS.split(",")]
        cols = ", ".join(f"t.{c}" for c in turn_columns)
        rows = self._rows(
            f"SELECT {cols}, f.turn_id, f.user_id, f.vote, f.reason, f.note, f.at"
            " FROM feedback f JOIN turns t ON t.turn_id = f.turn_id"
            " WHERE f.at >= ? AND f.user_id = t.user_id ORDER BY t.at, t.turn_id",
            (since,),
        )
        return [(self._turn(r[:12]), FeedbackRecord(*r[12:])) for r in rows]

    def turns_since(self, since: str) -> list[tuple[TurnRecord, FeedbackRecord | None]]:
        """Every turn answered at or after ``since``, oldest first, with the asker's own feedback
        on it (None when they gave none): what the gap report reads."""
        turn_columns = [c.strip() for c in self._TURN_COLUMNS.split(",")]
        cols = ", ".join(f"t.{c}" for c in turn_columns)
        rows = self._rows(
            f"SELECT {cols}, f.turn_id, f.user_id, f.vote, f.reason, f.note, f.at"
            " FROM turns t LEFT JOIN feedback f ON f.turn_id = t.turn_id AND f.user_id = t.user_id"
            " WHERE t.at >= ? ORDER BY t.at, t.turn_id",
            (since,),
        )
        return [
            (self._turn(r[:12]), FeedbackRecord(*r[12:]) if r[12] is not None else None)
            for r in rows
        ]

    def claim_digest(self, period: str, by: str, route: str = "") -> bool:
        """Claim the digest of ``period`` for ``route`` ("" the default channel, else an owner's
        route key): True for exactly one caller however many race (the row's primary key
        decides; insert-or-nothing), False for every other."""
        return (
            self._count(
                "INSERT INTO digests (period, route, claimed_at, claimed_by) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (period, route) DO NOTHING",
                (period, route, now(), by),
            )
            == 1
        )

    def digest_posted(self, period: str, route: str = "") -> None:
        self._count(
            "UPDATE digests SET posted_at = ? WHERE period = ? AND route = ?",
            (now(), period, route),
        )

    def release_digest(self, period: str, by: str, route: str = "") -> None:
        """Give a claimed period back after its post failed, so a later try (any replica) posts."""
        self._count(
            "DELETE FROM digests WHERE period = ? AND route = ? AND claimed_by = ?"
            " AND posted_at = ''",
            (period, route, by),
        )

    def digests(self, route: str = "") -> list[tuple[str, str, str]]:
        """(period, claimed by, posted at) of every digest claimed for ``route``, oldest first."""
        rows = self._rows(
            "SELECT period, claimed_by, posted_at FROM digests WHERE route = ? ORDER BY period",
            (route,),
        )
        return [(str(a), str(b), str(c)) for a, b, c in rows]

    def set_route(self, route: DigestRoute) -> None:
        """Send ``route.owner``'s digest to ``route`` from the next period on (replacing any)."""
        self._rows(
            "INSERT INTO digest_routes (owner, platform, target, added_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (owner) DO UPDATE SET platform = excluded.platform,"
            " target = excluded.target, added_at = excluded.added_at",
            (route.owner, route.platform, route.target, now()),
        )

    def remove_route(self, owner: str) -> bool:
        """False when ``owner`` had no route."""
        return self._count("DELETE FROM digest_routes WHERE owner = ?", (owner_key(owner),)) > 0

    def routes(self) -> list[DigestRoute]:
        rows = self._rows("SELECT owner, platform, target FROM digest_routes ORDER BY owner")
        return [DigestRoute(str(o), str(p), str(t)) for o, p, t in rows]  # type: ignore[arg-type]

    def earlier_questions(self, t: TurnRecord, limit: int = 5, after: str = "") -> list[str]:
        """The asker's questions before ``t`` in the same conversation (since ``after``), oldest
        first: what the bot still had in its history when it answered ``t``."""
        return [e.question for e in self.earlier_turns(t, limit, after)]

    def earlier_turns(self, t: TurnRecord, limit: int = 5, after: str = "") -> list[TurnRecord]:
        """``earlier_questions`` as whole turns: what each of them cited too."""
        rows = self._rows(
            f"SELECT {self._TURN_COLUMNS} FROM turns WHERE conversation = ? AND user_id = ?"
            " AND at <= ? AND at >= ? AND turn_id <> ? ORDER BY at DESC LIMIT ?",
            (t.conversation, t.user_id, t.at, after, t.turn_id, limit),
        )
        return [self._turn(r) for r in reversed(rows)]

    # --- what the admin page reads ----------------------------------------------------------

    def recent_turns(self, status: str = "", text: str = "", limit: int = 200) -> list[TurnRecord]:
        """The latest turns, newest first; ``status`` exact, ``text`` a case-insensitive part of
        the question."""
        where, params = ["1 = 1"], []
        if status:
            where.append("status = ?")
            params.append(status)
        if text:
            where.append("LOWER(question) LIKE ?")
            params.append("%" + text.lower().replace("%", "").replace("_", "") + "%")
        rows = self._rows(
            f"SELECT {self._TURN_COLUMNS} FROM turns WHERE {' AND '.join(where)}"
            " ORDER BY at DESC, turn_id DESC LIMIT ?",  # one order on both databases, ties too
            (*params, limit),
        )
        return [self._turn(r) for r in rows]

    def recent_feedback(
        self, vote: str = "", reason: str = "", limit: int = 200
    ) -> list[tuple[TurnRecord, FeedbackRecord]]:
        """The latest feedback, newest first, each with its turn."""
        turn_columns = [c.strip() for c in self._TURN_COLUMNS.split(",")]
        cols = ", ".join(f"t.{c}" for c in turn_columns)
        where, params = ["1 = 1"], []
        if vote:
            where.append("f.vote = ?")
            params.append(vote)
        if reason:
            where.append("f.reason = ?")
            params.append(reason)
        rows = self._rows(
            f"SELECT {cols}, f.turn_id, f.user_id, f.vote, f.reason, f.note, f.at"
            " FROM feedback f JOIN turns t ON t.turn_id = f.turn_id"
            f" WHERE {' AND '.join(where)} ORDER BY f.at DESC, f.turn_id DESC LIMIT ?",
            (*params, limit),
        )
        n = len(turn_columns)
        return [(self._turn(r[:n]), FeedbackRecord(*r[n:])) for r in rows]

    def daily(self, since: str) -> dict[str, dict[str, int]]:
        """Per UTC day since ``since``: turns by status and feedback by vote (``up`` / ``down``)."""
        days: dict[str, dict[str, int]] = {}
        for day, status, n in self._rows(
            "SELECT SUBSTR(at, 1, 10), status, COUNT(*) FROM turns WHERE at >= ?"
            " GROUP BY SUBSTR(at, 1, 10), status",
            (since,),
        ):
            days.setdefault(str(day), {})[str(status)] = int(n)
        for day, vote, n in self._rows(
            "SELECT SUBSTR(at, 1, 10), vote, COUNT(*) FROM feedback WHERE at >= ?"
            " GROUP BY SUBSTR(at, 1, 10), vote",
            (since,),
        ):
            counts = days.setdefault(str(day), {})
            counts[str(vote)] = counts.get(str(vote), 0) + int(n)
        return days

    def counts(self) -> tuple[int, int]:
        """(turns, feedback) on record."""
        turns = self._rows("SELECT COUNT(*) FROM turns")[0][0]
        feedback = self._rows("SELECT COUNT(*) FROM feedback")[0][0]
        return int(turns), int(feedback)

    def purge(self, before: str) -> tuple[int, int]:
        """Delete the turns answered before ``before`` and the feedback on them: (turns, feedback)."""
        with self._transaction():
            feedback = self._count(
                "DELETE FROM feedback WHERE turn_id IN (SELECT turn_id FROM turns WHERE at < ?)",
                (before,),
            )
            turns = self._count("DELETE FROM turns WHERE at < ?", (before,))
        return turns, feedback

    def turns_of(self, user_id: str) -> list[tuple[str, str]]:
        """(turn id, conversation) of every turn one person asked: where else they are kept
        (traces, conversation histories) is found from these before ``forget``."""
        rows = self._rows("SELECT turn_id, conversation FROM turns WHERE user_id = ?", (user_id,))
        return [(str(r[0]), str(r[1])) for r in rows]

    def forget(self, user_id: str) -> tuple[int, int]:
        """Delete one person's turns, the feedback on them and the feedback they gave."""
        with self._transaction():
            feedback = self._count(
                "DELETE FROM feedback WHERE user_id = ?"
                " OR turn_id IN (SELECT turn_id FROM turns WHERE user_id = ?)",
                (user_id, user_id),
            )
            turns = self._count("DELETE FROM turns WHERE user_id = ?", (user_id,))
        return turns, feedback


class TurnLog:
    """The bot's side of the record: async, and a database that fails never fails an answer."""

    def __init__(
        self,
        opener: Callable[[], FeedbackStore],
        retention_days: int,
        retry_after_s: float = RETRY_AFTER_S,
    ):
        self._open, self.retention_days = opener, retention_days
        self.retry_after_s = retry_after_s
        self._store: FeedbackStore | None = None
        self._lock = threading.Lock()  # one connection, used by one thread at a time
        self._down_until = 0.0
        self._writing: dict[str, asyncio.Future[None]] = {}  # turn id → its record in flight

    @classmethod
    def from_settings(
        cls, database: DatabaseSettings, data_dir: Path, retention_days: int
    ) -> TurnLog:
        return cls(
            lambda: FeedbackStore.open(database, data_dir, connect_timeout=CONNECT_TIMEOUT_S),
            retention_days,
        )

    def _run(self, what: str, fn: Callable[[FeedbackStore], T], default: T) -> T:
        with self._lock:
            if time.monotonic() < self._down_until:
                return default
            try:
                if self._store is None:
                    self._store = self._open()
                result = fn(self._store)
            except Exception as exc:  # the database is a record, never a dependency of answering
                if not self._down_until:
                    log.warning(
                        "feedback database unavailable (%s): %s; answering without a record "
                        "of turns until it is back",
                        what,
                        exc,
                    )
                self._down_until = time.monotonic() + self.retry_after_s
                self._drop()
                return default
            if self._down_until:
                log.info("feedback database is back")
                self._down_until = 0.0
            return result

    def _drop(self) -> None:
        store, self._store = self._store, None
        if store is not None:
            try:
                store.close()
            except Exception as exc:
                log.debug("closing the feedback database failed: %s", exc)

    async def _call(self, what: str, fn: Callable[[FeedbackStore], T], default: T) -> T:
        return await asyncio.to_thread(self._run, what, fn, default)

    def record_turn(self, t: TurnRecord) -> Awaitable[None]:
        """Start writing ``t``; await the result to know it is done (it never raises)."""

        async def write() -> None:
            await self._call("record turn", lambda s: s.record_turn(t), None)

        task = asyncio.ensure_future(write())
        self._writing[t.turn_id] = task
        task.add_done_callback(lambda _: self._writing.pop(t.turn_id, None))
        return task

    async def turn(self, turn_id: str) -> TurnRecord | None:
        """The turn on record (None when unknown or the database is away)."""
        writing = self._writing.get(turn_id)
        if writing is not None:  # a click right after the answer: its record may be in flight
            await writing
        return await self._call("read turn", lambda s: s.turn(turn_id), None)

    async def record_feedback(self, f: FeedbackRecord) -> bool:
        return await self._call("record feedback", lambda s: s.record_feedback(f), False)

    async def read(self, what: str, fn: Callable[[FeedbackStore], T]) -> T | None:
        """Run a read for the admin page; None when the database is away."""
        return await self._call(what, fn, None)

    async def purge(self) -> tuple[int, int]:
        before = ago(self.retention_days)
        return await self._call("purge", lambda s: s.purge(before), (0, 0))

    def close(self) -> None:
        with self._lock:
            self._drop()
