"""Rated answers become evaluation cases: the export writes the golden file's own format (on
SQLite and the real PostgreSQL), and the round trip — answers recorded and rated through the
conversation core, `footnote feedback export`, then the golden set's evaluation — runs end to end
over the real handbook index."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
import yaml
from pydantic import SecretStr

from agent.assistant import build_assistant
from agent.evaluation import load_golden, run_eval
from agent.turns import Answer
from bot.chat.conversation import Conversation, Member, Question
from bot.chat.conversation_state import ConversationState
from bot.identity.directory import FileDirectory, groups_of
from bot.reports.cases import Reviewer, export_cases, parse_since
from bot.reports.feedback import (
    CitedDocument,
    FeedbackRecord,
    FeedbackStore,
    TurnLog,
    TurnRecord,
    ago,
)
from bot.settings import HANDBOOK_DIRECTORY, RedisSettings
from bot.web.links import LinkSigner
from ingest.settings import DatabaseSettings

DIRECTORY = FileDirectory.load(HANDBOOK_DIRECTORY)
# A reviewer who may read every document cited here and reads all the askers' groups: nothing is
# left out (what is, for whom, is tests/security/test_feedback_export.py).
ALICE = DIRECTORY.find("alice")
assert ALICE is not None
EVERYTHING = Reviewer(ALICE, lambda _doc_id: True)
SECRET_ANSWER = "The secret answer text that quotes a document"


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    st = FeedbackStore.open(DatabaseSettings(url=SecretStr(url) if url else None), tmp_path)
    yield st
    st.close()


def record(store: FeedbackStore, turn_id: str, question: str, **kw) -> TurnRecord:
    fields = {
        "platform": "slack",
        "conversation": "slack:T:D1",
        "user_id": "alice",
        "groups": ("hr", "managers"),
        "channel_kind": "dm",
        "question": question,
        "status": "answered",
        "answer": SECRET_ANSWER,
        "citations": (
            CitedDocument("handbook/hr/leave-policy-2026.md", "Leave policy 2026", "file:///l"),
        ),
        "at": ago(0),
    }
    fields.update(kw)
    turn = TurnRecord(turn_id=turn_id, **fields)  # type: ignore[arg-type]
    store.record_turn(turn)
    return turn


def test_since_reads_ages_and_dates():
    now = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)
    assert parse_since("7d", now) == "2026-11-24T12:00:00.000+00:00"
    assert parse_since("12h", now) == "2026-12-01T00:00:00.000+00:00"
    assert parse_since("2026-11-20", now) == "2026-11-20T00:00:00.000+00:00"
    with pytest.raises(ValueError, match="7d"):
        parse_since("last week", now)


def test_export_writes_golden_cases_with_verdicts_and_no_document_text(store, tmp_path):
    record(store, "t0", "How many vacation days can I carry over?", at=ago(0.002))
    record(store, "t1", "And until when?", at=ago(0.001))
    record(
        store,
        "t2",
        "What is the notice period?",
        user_id="bob",
        groups=("engineering", "old-team"),  # no longer bob's groups in the directory
        conversation="teams:a:personal-bob",
    )
    record(store, "t3", "How do I bake a cake?", status="unknown", citations=())
    record(store, "t4", "Not rated", conversation="slack:T:D2")
    store.record_feedback(
        FeedbackRecord("t1", "alice", "down", "outdated", "says 5,\nnot 10 # really")
    )
    store.record_feedback(FeedbackRecord("t2", "bob", "down", "wrong"))
    store.record_feedback(FeedbackRecord("t3", "alice", "up"))

    export = export_cases(store, DIRECTORY, ago(7), EVERYTHING)
    text, items = export.text, export.items
    assert export.notes_left_out == 0 and export.cases_left_out == 0
    assert SECRET_ANSWER not in text
    cases = {c["id"]: c for c in yaml.safe_load(text)}  # plain YAML, comments and all
    assert list(cases) == ["fb-t1", "fb-t2", "fb-t3"]
    t1 = cases["fb-t1"]
    assert t1["user"] == "alice" and "groups" not in t1
    assert t1["turns"] == ["How many vacation days can I carry over?"]
    assert t1["sources"] == ["handbook/hr/leave-policy-2026.md"] and t1["facts"] == []
    assert (t1["verdict"], t1["reason"], t1["answerable"]) == ("down", "outdated", True)
    assert cases["fb-t2"]["groups"] == ["engineering", "old-team"] and "user" not in cases["fb-t2"]
    assert cases["fb-t3"]["answerable"] is False  # "I don't know", rated 👍
    # the reviewer's notes are comments, one line each, whatever the asker typed
    assert '# 👎 outdated: "says 5, not 10 # really"' in text
    assert "# cited: Leave policy 2026 (handbook/hr/leave-policy-2026.md)" in text

    path = tmp_path / "cases.yaml"
    path.write_text(text, encoding="utf-8")
    loaded = {i.id: i for i in load_golden(path)}
    assert loaded == {i.id: i for i in items}  # what was written is what is read back
    assert loaded["fb-t1"].set == "feedback" and loaded["fb-t1"].kind == "feedback"


def test_export_since_leaves_older_feedback_out(store):
    record(store, "t1", "q1?", at=ago(10))
    store.record_feedback(FeedbackRecord("t1", "alice", "down", "wrong", at=ago(9)))
    assert export_cases(store, DIRECTORY, ago(7), EVERYTHING).items == []
    assert len(export_cases(store, DIRECTORY, ago(14), EVERYTHING).items) == 1


class Shown:
    """A Reply that keeps what the asker was shown."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.answers: list[tuple[Answer, dict]] = []

    async def say(self, text: str) -> None:
        self.said.append(text)

    async def working(self) -> None:
        return None

    async def show(self, answer: Answer, view: dict) -> None:
        self.answers.append((answer, view))

    async def tell_privately(self, text: str) -> None:
        self.said.append(text)

    async def ask_reason(self, turn_id: str, vote: str, asker: str) -> None:
        self.said.append(f"reasons for {vote}")


@pytest.mark.models
async def test_rated_answers_round_trip_through_export_and_eval_cases(handbook_deps, tmp_path):
    records_db = tmp_path / "records.db"
    database = DatabaseSettings(url=SecretStr(f"sqlite:///{records_db}"))
    log_ = TurnLog.from_settings(database, tmp_path, retention_days=30)
    state = ConversationState.from_settings(
        RedisSettings(), prefix=f"footnote-test-{uuid.uuid4().hex[:8]}:"
    )
    links = LinkSigner("http://127.0.0.1:1", uuid.uuid4().hex + uuid.uuid4().hex, 600)
    conversation = Conversation(
        build_assistant(handbook_deps),
        state,
        DIRECTORY,
        links,
        platform="slack",
        private_chat="direct message",
        records=log_,
    )
    asked = [
        ("U0ALICE01", "D0ALICE01", "How many days of leave may I move into next year?", "down"),
        ("U0ALICE01", "D0ALICE02", "How do I bake a chocolate cake?", "up"),
    ]
    statuses = []
    for slack_id, channel, text, vote in asked:
        reply = Shown()
        question = Question(Member((slack_id,)), text, f"slack:T:{channel}", "dm")
        await conversation.ask(question, reply)
        (answer, view) = reply.answers[0]
        statuses.append(answer.status)
        await conversation.feedback(
            Member((slack_id,)),
            view["turn_id"],
            vote,
            Shown(),
            reason="outdated" * (vote == "down"),
        )
    await state.close()
    log_.close()

    # what `footnote feedback export --reviewer alice` does (the command itself runs in
    # tests/bot/test_cli.py: this process holds the handbook's index open, one per folder)
    cases = tmp_path / "cases.yaml"
    reviewer = Reviewer(ALICE, lambda d: bool(handbook_deps.index.chunks(d, ALICE.principals)))
    store = FeedbackStore.open(database, tmp_path)
    try:
        export = export_cases(store, DIRECTORY, ago(7), reviewer)
    finally:
        store.close()
    assert len(export.items) == 2 and export.cases_left_out == 0
    cases.write_text(export.text, encoding="utf-8")
    items = load_golden(cases)
    leave, cake = items
    assert (leave.user, leave.verdict, leave.reason, leave.answerable) == (
        "alice",
        "down",
        "outdated",
        True,
    )
    assert any(s.endswith("leave-policy-2026.md") for s in leave.sources)
    assert statuses[1] == "unknown"  # "I don't know" rated 👍: a case the bot must refuse
    assert (cake.user, cake.verdict, cake.answerable) == ("alice", "up", False)

    # the same evaluation as the golden set: the cited documents are found and cited again
    report = await run_eval(build_assistant(handbook_deps), items, groups_of(DIRECTORY))
    assert report.metrics["citation_accuracy"] == 1.0 and report.metrics["recall@5"] > 0
    assert report.metrics["answered_correctly"] == 1.0  # no facts yet: answered / refused as rated
    # `footnote eval --cases` itself runs in tests/bot/test_cli.py: this index is held open here
