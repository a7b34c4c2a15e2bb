"""Conversation state over real Redis (a key prefix per test), and its degraded mode without Redis."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from agent.turns import Message
from bot.chat.conversation_state import FORGETFUL_NOTICE, ConversationState
from bot.settings import RedisSettings

URL = "redis://127.0.0.1:6379/0"


@pytest.fixture
async def state():
    settings = RedisSettings(url=URL, history_turns=2, history_ttl_s=120, rate_per_minute=3)
    prefix = f"footnote-test-{uuid.uuid4().hex[:8]}:"
    s = ConversationState.from_settings(settings, prefix=prefix)
    yield s
    keys = [k async for k in s.client.scan_iter(match=prefix + "*")]
    if keys:
        await s.client.delete(*keys)
    await s.close()


@pytest.fixture
async def dead_state():
    # nothing listens on port 1 on loopback: every call is refused
    s = ConversationState.from_settings(
        RedisSettings(url="redis://127.0.0.1:1/0", rate_per_minute=1), prefix="x:"
    )
    yield s
    await s.close()


async def test_history_is_bounded_and_expires(state):
    for i in range(3):
        assert await state.remember("c1", f"q{i}", f"a{i}")
    history = await state.history("c1")
    assert history.available
    assert history.messages == (
        Message("user", "q1"),
        Message("assistant", "a1"),
        Message("user", "q2"),
        Message("assistant", "a2"),
    )
    assert 0 < await state.client.ttl(state.prefix + "hist:c1") <= 120
    assert (await state.history("other")).messages == ()


async def test_an_event_is_first_delivered_once_even_concurrently(state):
    results = await asyncio.gather(*[state.first_delivery("Ev1") for _ in range(5)])
    assert results.count(True) == 1
    assert await state.first_delivery("Ev2")
    assert await state.client.ttl(state.prefix + "seen:Ev1") > 0


async def test_rate_limit_counts_per_user(state):
    assert [await state.allow("alice") for _ in range(4)] == [True, True, True, False]
    assert await state.allow("bob")


async def test_without_redis_nothing_raises_and_the_bot_says_once_it_forgot(dead_state):
    history = await dead_state.history("c1")
    assert not history.available and history.messages == ()
    assert dead_state.forgetful_notice("c1", history) == FORGETFUL_NOTICE
    assert dead_state.forgetful_notice("c1", await dead_state.history("c1")) == ""
    assert dead_state.forgetful_notice("c2", await dead_state.history("c2")) == FORGETFUL_NOTICE
    assert not await dead_state.remember("c1", "q", "a")
    # the limit holds without Redis: this process counts on its own
    assert await dead_state.allow("alice") and not await dead_state.allow("alice")
    assert await dead_state.first_delivery("Ev1") and not await dead_state.first_delivery(
        "Ev1"
    )  # in process


async def test_threads_answered_in_are_known_to_every_replica_as_long_as_their_history(state):
    await state.note_answered("slack:T1:C1:1.1")
    assert await state.has_answered("slack:T1:C1:1.1")
    assert not await state.has_answered("slack:T1:C1:2.2")
    assert 0 < await state.client.ttl(state.prefix + "answered:slack:T1:C1:1.1") <= 120
    # another replica (or this one after a restart) knows it from Redis
    other = ConversationState.from_settings(state.settings, prefix=state.prefix)
    try:
        assert await other.has_answered("slack:T1:C1:1.1")
        assert not await other.has_answered("slack:T1:C1:2.2")
    finally:
        await other.close()


async def test_without_redis_answered_threads_are_kept_in_process_for_the_history_ttl():
    now = [1_000_000.0]
    s = ConversationState.from_settings(
        RedisSettings(url="redis://127.0.0.1:1/0", history_ttl_s=60),
        prefix="x:",
        clock=lambda: now[0],
    )
    try:
        await s.note_answered("slack:T1:C1:1.1")
        assert await s.has_answered("slack:T1:C1:1.1")
        assert not await s.has_answered("slack:T1:C1:2.2")
        now[0] += 59
        await s.note_answered("slack:T1:C1:3.3")
        assert await s.has_answered("slack:T1:C1:1.1")
        now[0] += 2  # the first thread's history would have expired by now; the second's not
        assert not await s.has_answered("slack:T1:C1:1.1")
        assert await s.has_answered("slack:T1:C1:3.3")
    finally:
        await s.close()
