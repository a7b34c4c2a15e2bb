"""The record of answered turns and feedback, on SQLite and the real PostgreSQL: schema in the
same database as the sync state, retention, forgetting a person, and a database that fails
without failing anything else."""

from __future__ import annotations

import asyncio
import logging

import pytest
from pydantic import SecretStr

from bot.reports.feedback import (
    CitedDocument,
    FeedbackRecord,
    FeedbackStore,
    TurnLog,
    TurnRecord,
    ago,
)
from ingest.settings import DatabaseSettings
from ingest.sources.state import SyncState


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> DatabaseSettings:
    if request.param == "sqlite":
        return DatabaseSettings()
    return DatabaseSettings(url=SecretStr(request.getfixturevalue("postgres_url")))


@pytest.fixture
def store(database, tmp_path):
    st = FeedbackStore.open(database, tmp_path)
    yield st
    st.close()


def turn(turn_id: str, user: str = "alice", at: str | None = None, **kw) -> TurnRecord:
    fields = {
        "platform": "slack",
        "conversation": f"slack:T:{user}",
        "user_id": user,
        "groups": ("hr", "managers"),
        "channel_kind": "dm",
        "question": f"question {turn_id}?",
        "status": "answered",
        "answer": f"answer {turn_id} [1]",
        "citations": (CitedDocument("handbook/hr/leave.md", "Leave policy", "file:///leave.md"),),
    }
    fields.update(kw)
    return TurnRecord(turn_id=turn_id, at=at or ago(0), **fields)  # type: ignore[arg-type]


def test_turns_and_feedback_share_the_database_of_the_sync_state(database, tmp_path):
    """Own tables, own migrations, one database: opening either never disturbs the other."""
    sync = SyncState.open(database, tmp_path)
    sync.add_source("intranet", "web", {})
    feedback = FeedbackStore.open(database, tmp_path)
    feedback.record_turn(turn("t1"))
    assert feedback.schema_version() == FeedbackStore.MIGRATIONS[-1][0]
    assert sync.schema_version() == SyncState.MIGRATIONS[-1][0]
    sync.migrate()
    feedback.migrate()  # again: nothing applied twice
    assert [s.name for s in SyncState.open(database, tmp_path).sources()] == ["intranet"]
    assert FeedbackStore.open(database, tmp_path).turn("t1") == turn(
        "t1", at=feedback.turn("t1").at
    )
    sync.close()
    feedback.close()


def test_a_turn_keeps_what_was_cited_never_the_passages(store):
    store.record_turn(turn("t1"))
    got = store.turn("t1")
    assert got is not None and got.groups == ("hr", "managers")
    assert got.citations == (
        CitedDocument("handbook/hr/leave.md", "Leave policy", "file:///leave.md"),
    )
    assert store.turn("nope") is None


def test_feedback_is_one_per_person_and_turn_the_last_word_wins(store):
    store.record_turn(turn("t1"))
    assert store.record_feedback(FeedbackRecord("t1", "alice", "down"))
    assert store.record_feedback(FeedbackRecord("t1", "alice", "down", "outdated", "x" * 900))
    (fb,) = store.feedback("t1")
    assert (fb.vote, fb.reason, len(fb.note)) == ("down", "outdated", 500)
    assert not store.record_feedback(FeedbackRecord("unknown-turn", "alice", "up"))


def test_rated_since_gives_the_askers_feedback_and_earlier_questions(store):
    store.record_turn(turn("t0", at=ago(0.02)))
    store.record_turn(turn("t1", at=ago(0.01)))
    store.record_turn(turn("t2", user="bob", at=ago(0.01)))
    store.record_turn(turn("old", at=ago(20)))
    store.record_feedback(FeedbackRecord("t1", "alice", "down", "wrong"))
    store.record_feedback(FeedbackRecord("t2", "alice", "up"))  # not bob's: not the asker's word
    store.record_feedback(FeedbackRecord("old", "alice", "up", at=ago(19)))
    rated = store.rated_since(ago(7))
    assert [(t.turn_id, f.reason) for t, f in rated] == [("t1", "wrong")]
    assert store.earlier_questions(rated[0][0]) == ["question old?", "question t0?"]


def test_purge_deletes_turns_past_retention_with_their_feedback(store):
    store.record_turn(turn("old", at=ago(31)))
    store.record_turn(turn("new", at=ago(1)))
    store.record_feedback(FeedbackRecord("old", "alice", "down", "wrong"))
    store.record_feedback(FeedbackRecord("new", "alice", "up"))
    assert store.purge(ago(30)) == (1, 1)
    assert store.turn("old") is None and store.turn("new") is not None
    assert store.counts() == (1, 1)
    assert store.purge(ago(30)) == (0, 0)


def test_forget_deletes_a_persons_turns_and_every_feedback_they_gave(store):
    store.record_turn(turn("a1"))
    store.record_turn(turn("a2"))
    store.record_turn(turn("b1", user="bob"))
    store.record_feedback(FeedbackRecord("a1", "alice", "down"))
    store.record_feedback(FeedbackRecord("b1", "alice", "up"))  # alice on bob's turn
    store.record_feedback(FeedbackRecord("b1", "bob", "up"))
    assert store.forget("alice") == (2, 2)
    assert store.counts() == (1, 1)
    assert store.forget("alice") == (0, 0)


async def test_the_bot_log_records_and_reads_back(database, tmp_path):
    log_ = TurnLog.from_settings(database, tmp_path, retention_days=30)
    await log_.record_turn(turn("t1", at=ago(40)))
    await log_.record_turn(turn("t2"))
    assert (await log_.turn("t1")).user_id == "alice"
    assert await log_.record_feedback(FeedbackRecord("t2", "alice", "up"))
    assert await log_.purge() == (1, 0)
    log_.close()


async def test_a_click_right_after_the_answer_waits_for_its_record(tmp_path):
    log_ = TurnLog.from_settings(DatabaseSettings(), tmp_path, retention_days=30)
    writing = log_.record_turn(turn("t1"))
    assert (await log_.turn("t1")) is not None  # not raced: the read waits for the write
    await writing
    log_.close()


async def test_an_unreachable_database_is_logged_once_and_never_raises(tmp_path, caplog):
    url = SecretStr("postgresql://nobody@127.0.0.1:1/none")
    log_ = TurnLog.from_settings(DatabaseSettings(url=url), tmp_path, retention_days=30)
    with caplog.at_level(logging.WARNING, logger="bot.reports.feedback"):
        started = asyncio.get_running_loop().time()
        await log_.record_turn(turn("t1"))
        assert await log_.turn("t1") is None
        assert not await log_.record_feedback(FeedbackRecord("t1", "alice", "up"))
        assert await log_.purge() == (0, 0)
        assert asyncio.get_running_loop().time() - started < 5
    warnings = [r for r in caplog.records if "feedback database unavailable" in r.getMessage()]
    assert len(warnings) == 1
    log_.close()


async def test_a_database_that_goes_away_is_reopened_when_back(tmp_path):
    opened = []

    def opener() -> FeedbackStore:
        if len(opened) == 0:
            opened.append("failed")
            raise OSError("disk away")
        opened.append("ok")
        return FeedbackStore.open(DatabaseSettings(), tmp_path)

    log_ = TurnLog(opener, retention_days=30, retry_after_s=0.0)
    await log_.record_turn(turn("t1"))  # lost: the database was away
    await log_.record_turn(turn("t2"))
    assert await log_.turn("t1") is None and await log_.turn("t2") is not None
    assert opened == ["failed", "ok"]
    log_.close()


def test_what_the_admin_page_reads_filters_and_counts_per_day(store):
    """The admin page's queries, the same on SQLite and PostgreSQL."""
    store.record_turn(turn("t1", at=ago(2), question="How many days CARRY over?"))
    same = ago(1)  # two turns in one millisecond: the order must not depend on the database
    store.record_turn(turn("t2", at=same, status="unknown", question="100% _odd_ question"))
    store.record_turn(turn("t3", at=same, status="answered"))
    store.record_feedback(FeedbackRecord("t1", "alice", "down", "outdated", "old", at=ago(1)))
    store.record_feedback(FeedbackRecord("t3", "alice", "up", at=ago(1)))
    assert [t.turn_id for t in store.recent_turns()] == ["t3", "t2", "t1"]
    assert [t.turn_id for t in store.recent_turns(status="unknown")] == ["t2"]
    assert [t.turn_id for t in store.recent_turns(text="carry")] == ["t1"]
    assert [t.turn_id for t in store.recent_turns(text="100%")] == ["t2"]  # no wildcard
    assert [t.turn_id for t in store.recent_turns(limit=1)] == ["t3"]
    assert [(t.turn_id, f.vote) for t, f in store.recent_feedback()] == [
        ("t3", "up"),
        ("t1", "down"),
    ]
    assert [t.turn_id for t, _ in store.recent_feedback(vote="down", reason="outdated")] == ["t1"]
    assert store.recent_feedback(reason="wrong") == []
    days = store.daily(ago(7))
    yesterday, before = ago(1)[:10], ago(2)[:10]
    assert days[before] == {"answered": 1}
    assert days[yesterday] == {"unknown": 1, "answered": 1, "up": 1, "down": 1}
    assert store.daily(ago(0.5)) == {}


def test_replicas_opening_a_new_sqlite_database_at_once_all_succeed(tmp_path):
    """serve's turn log and its digest (or two processes) open and migrate a new file together:
    none may fail with "database is locked"."""
    import threading

    for round_ in range(20):
        folder = tmp_path / str(round_)
        barrier, errors = threading.Barrier(3), []

        def open_it(folder=folder, barrier=barrier, errors=errors) -> None:
            barrier.wait()
            try:
                FeedbackStore.open(DatabaseSettings(), folder).close()
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
