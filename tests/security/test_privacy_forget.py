"""``footnote privacy forget --user X`` forgets everything of X (hole 6 of the second attack): the
database rows went, but the traces with X's questions (the bot's Redis stream, ``traces.sqlite``),
X's conversation histories in Redis, ticket proposals waiting for X's Confirm and the demo desk's
filed tickets stayed, and the /admin x-ray of a forgotten turn still rendered from its trace.
Real Redis, real SQLite, the real admin app on loopback."""

from __future__ import annotations

import asyncio
import json
import time

import redis

from agent.actions import RedisPendingActions
from agent.desk import SqliteTicketDesk
from agent.traces import RedisTraceStore
from agent.turns import Answer, PendingAction, Turn
from bot.chat.conversation_state import ConversationState
from bot.cli import main as footnote
from testing.admin_data import LEAVE, steps
from tests.bot.test_admin import REDIS_URL, start, turn

BOB_ASKS = "Is my manager planning to put me on a performance plan?"
ALICE_ASKS = "How many vacation days carry over?"
BOB_DM, BOB_THREAD, ALICE_DM = "slack:T:D0BOB", "teams:19:eng@thread.tacv2:m1", "slack:T:D0ALICE"


async def forget_command(user: str) -> int:
    """``footnote privacy forget`` in this process, off the test's event loop (it runs its own)."""
    return await asyncio.to_thread(footnote, ["privacy", "forget", "--user", user])


def trace(user: str, question: str, turn_id: str) -> tuple[Turn, Answer]:
    return Turn(user, question, (), turn_id=turn_id), Answer("a", "answered", trace=steps(LEAVE))


async def test_forget_removes_every_trace_history_and_ticket_and_the_xray_is_gone(
    tmp_path, monkeypatch, capsys
):
    async for admin in start(tmp_path):
        prefix = admin.settings.redis.key_prefix
        client = redis.Redis.from_url(REDIS_URL)
        try:
            bob_turn = turn(admin.store, BOB_ASKS, user="bob", turn_id="bob-turn-1")
            turn(admin.store, ALICE_ASKS, user="alice", turn_id="alice-turn-1")
            stream = RedisTraceStore(client, key=prefix + "traces")
            for store in (admin.traces, stream):
                store.save(*trace("bob", BOB_ASKS, bob_turn.turn_id))
                store.save(*trace("bob", "and what about my bonus?", "bob-turn-unrecorded"))
                store.save(*trace("alice", ALICE_ASKS, "alice-turn-1"))
            state = ConversationState.from_settings(admin.settings.redis)
            try:
                # written as before the fix: found through the record of bob's turn
                await state.remember(bob_turn.conversation, BOB_ASKS, "I don't know.")
                await state.remember(ALICE_DM, ALICE_ASKS, "Five days.")
            finally:
                await state.close()
            pending = RedisPendingActions(client, prefix=prefix + "pending:")
            later = time.time() + 600
            pending.put(PendingAction("p-bob", "create_ticket", "bob", BOB_ASKS, BOB_ASKS, later))
            pending.put(PendingAction("p-alice", "create_ticket", "alice", "t", "b", later))
            desk = SqliteTicketDesk(tmp_path / "tickets.sqlite")
            desk.create(BOB_ASKS, BOB_ASKS, "bob", "k-bob")
            desk.create("Leave", "b", "alice", "k-alice")

            await admin.sign_in()
            assert BOB_ASKS in await admin.page(f"/admin/turns/{bob_turn.turn_id}")

            monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path))
            monkeypatch.setenv("FOOTNOTE_REDIS__URL", REDIS_URL)
            monkeypatch.setenv("FOOTNOTE_REDIS__KEY_PREFIX", prefix)
            assert await forget_command("bob@northwind.example") == 0
            # the x-ray of the forgotten turn no longer renders from a trace
            page = await admin.page(f"/admin/turns/{bob_turn.turn_id}", 404)
            assert BOB_ASKS not in page
            everything = json.dumps(admin.traces.recent(100)) + json.dumps(stream.recent(100))
            assert "bob" not in everything and "bonus" not in everything
            assert ALICE_ASKS in everything  # the others' stay
            assert not client.exists(prefix + "hist:" + bob_turn.conversation)
            assert client.exists(prefix + "hist:" + ALICE_DM)
            assert pending.peek("p-bob") is None and pending.peek("p-alice") is not None
            assert desk.count() == 1
            assert "alice" in await admin.page("/admin/turns/alice-turn-1")
            # and the command says what it removed, by kind
            said = capsys.readouterr().out
            for line in [
                "forgot bob:",
                "1  turns",
                "2  traces in traces.sqlite",
                "2  traces in Redis",
                "1  conversation histories",
                "1  pending ticket proposals",
                "1  filed tickets (the demo desk)",
            ]:
                assert line in said, said

        finally:
            for key in client.scan_iter(match=prefix + "*"):
                client.delete(key)
            client.close()


async def test_histories_the_record_does_not_name_are_forgotten_too(tmp_path, monkeypatch, capsys):
    """A channel thread or DM whose turn was never recorded (records off or down, a rejected
    question, retention already past): Redis itself says whose questions a history holds."""
    async for admin in start(tmp_path):
        prefix = admin.settings.redis.key_prefix
        client = redis.Redis.from_url(REDIS_URL)
        try:
            state = ConversationState.from_settings(admin.settings.redis)
            try:
                await state.remember(BOB_DM, BOB_ASKS, "I don't know.", "bob")
                await state.remember(BOB_THREAD, "who approves my raise?", "…", "bob")
                await state.remember(ALICE_DM, ALICE_ASKS, "Five days.", "alice")
            finally:
                await state.close()
            monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path))
            monkeypatch.setenv("FOOTNOTE_REDIS__URL", REDIS_URL)
            monkeypatch.setenv("FOOTNOTE_REDIS__KEY_PREFIX", prefix)
            assert await forget_command("bob") == 0
            assert "2  conversation histories" in capsys.readouterr().out
            assert not client.exists(prefix + "hist:" + BOB_DM, prefix + "hist:" + BOB_THREAD)
            assert not client.exists(prefix + "asked:bob")
            assert client.exists(prefix + "hist:" + ALICE_DM)
        finally:
            for key in client.scan_iter(match=prefix + "*"):
                client.delete(key)
            client.close()


def test_an_unreachable_redis_is_named_and_the_forget_fails(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("FOOTNOTE_REDIS__URL", "redis://:hunter2@127.0.0.1:1/0")
    assert footnote(["privacy", "forget", "--user", "bob"]) == 1
    said = capsys.readouterr()
    assert "0  turns" in said.out
    assert "not forgotten everywhere: Redis at redis://127.0.0.1:1/0" in said.err
    assert "run this again" in said.err and "hunter2" not in said.err
