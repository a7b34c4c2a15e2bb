"""A rate limit is at most N questions per user in any rolling 60 s (hole 5): under a burst, with
connections scarce, with Redis down, and across a clock-minute boundary. Real Redis servers: the
machine's, and our own with few client slots."""

from __future__ import annotations

import asyncio
import time as real_time
import uuid

import pytest

from bot.chat.conversation_state import ConversationState
from bot.settings import RedisSettings
from testing.slack import dm_event
from tests.e2e.conftest import REDIS_URL, redis_server, running_bot

LIMIT = 20


async def allowed_of(state: ConversationState, n: int, user: str = "alice") -> int:
    results = await asyncio.gather(*(state.allow(user) for _ in range(n)))
    return sum(results)


@pytest.fixture
async def state():
    settings = RedisSettings(url=REDIS_URL, rate_per_minute=LIMIT, pool_size=4)
    s = ConversationState.from_settings(settings, prefix=f"footnote-test-{uuid.uuid4().hex[:8]}:")
    yield s
    await s.close()


async def test_a_burst_of_a_thousand_is_held_to_the_limit(state):
    assert await allowed_of(state, 1000) == LIMIT
    assert await allowed_of(state, 10, user="bob") == 10  # per user


async def test_a_burst_against_a_redis_short_of_connections_is_held_to_the_limit():
    # Redis accepts 3 clients; the pool wants more: calls that find no connection fall back to
    # this process's own count instead of letting the question through.
    with redis_server("--maxclients", "3") as (_, url):
        settings = RedisSettings(url=url, rate_per_minute=LIMIT, pool_size=16)
        state = ConversationState.from_settings(settings, prefix="burst:")
        try:
            assert await allowed_of(state, 1000) == LIMIT
        finally:
            await state.close()


async def test_with_redis_down_each_replica_keeps_the_limit():
    settings = RedisSettings(url="redis://127.0.0.1:1/0", rate_per_minute=LIMIT)
    state = ConversationState.from_settings(settings, prefix="down:")
    try:
        assert await allowed_of(state, 200) == LIMIT
    finally:
        await state.close()


class Clock:
    """Stands in for the ``time`` module inside ``bot.chat.conversation_state``: wall time we set, real monotonic."""

    def __init__(self, now: float):
        self.now = now

    def time(self) -> float:
        return self.now

    monotonic = staticmethod(real_time.monotonic)


@pytest.mark.parametrize("redis_url", [REDIS_URL, "redis://127.0.0.1:1/0"])
async def test_the_window_rolls_across_a_clock_minute(monkeypatch, redis_url):
    clock = Clock(1_800_000_059.5)  # half a second before a clock minute ends
    monkeypatch.setattr("bot.chat.conversation_state.time", clock)
    settings = RedisSettings(url=redis_url, rate_per_minute=LIMIT)
    state = ConversationState.from_settings(settings, prefix=f"roll-{uuid.uuid4().hex[:8]}:")
    try:
        assert await allowed_of(state, LIMIT) == LIMIT
        clock.now += 1.0  # a new clock minute, the same rolling minute
        assert await allowed_of(state, LIMIT) == 0
        clock.now += 58.5  # 59.5 s after the first ones
        assert await allowed_of(state, LIMIT) == 0
        clock.now += 1.0  # 60.5 s: the first ones left the window
        assert await allowed_of(state, LIMIT) == LIMIT
    finally:
        await state.close()


async def test_a_burst_of_direct_messages_gets_at_most_the_limit_answered(
    handbook, assistant, redis_prefix
):
    async with running_bot(handbook, assistant, redis_prefix, rate_per_minute=3) as bot:
        channel = "D0BURST01"
        events = [dm_event(f"Carry-over question {i}?", channel=channel) for i in range(40)]
        statuses = await asyncio.gather(*(bot.send.event(e) for e in events))
        assert {s for s, _ in statuses} == {200}
        await bot.slack.wait_for(lambda _: len(bot.slack.of("chat.postMessage", channel)) == 40)
        answered = await bot.slack.wait_for(
            lambda _: len(bot.slack.finals(channel)) >= 3 and bot.slack.finals(channel)
        )
        await asyncio.sleep(0.5)
        assert len(answered) == 3
        limited = [
            c for c in bot.slack.of("chat.postMessage", channel) if "faster" in c.args["text"]
        ]
        assert len(limited) == 37
