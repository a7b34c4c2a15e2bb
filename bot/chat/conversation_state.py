"""Conversation state in Redis: thread history, the threads the bot answered in, event de-dupe,
per-user rate limits. (Turns and feedback are recorded durably in ``bot/reports/feedback.py``.)

Redis is a convenience, never a dependency of answering: every method catches Redis errors and
degrades (no history, in-process de-dupe, an in-process rate limit), and ``history()`` reports
that it could not remember so the adapter can say so — once per conversation while Redis stays
away. A limit is never lifted because Redis is away: each replica then counts for itself.

The client has ONE pool of ``redis.pool_size`` connections; under a burst, callers wait briefly
for a connection instead of opening hundreds (``BlockingConnectionPool``).

Keys (all under ``prefix``, by default ``redis.key_prefix``, ``footnote:``):
``hist:{conversation}`` list of JSON messages (newest last, trimmed, TTL) ·
``asked:{user}`` set of the conversations whose history holds that person's questions (TTL as
the history's), so ``forget`` finds them all ·
``answered:{conversation}`` marker: the bot answered in this thread (TTL as the history's) ·
``seen:{event_id}`` de-dupe marker (SET NX, TTL) ·
``rate:{user}`` sorted set of the last minute's questions (a rolling window; TTL).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import RedisError

from agent.turns import Message
from bot.settings import RedisSettings

log = logging.getLogger(__name__)

FORGETFUL_NOTICE = (
    "I can't remember our conversation right now, so I answered this message on its own — "
    "please include any details from earlier."
)
RATE_LIMITED = "You're asking faster than I can read — give me a minute and ask again."

SEEN_TTL_S = 60 * 60  # Slack retries for minutes; an hour is plenty
RETRY_AFTER_S = 2.0  # after a Redis error, calls skip Redis this long
RATE_WINDOW_S = 60.0
LOCAL_KEEP = 50_000  # entries an in-process fallback keeps at most
POOL_WAIT_S = 1.0  # how long a call waits for a free connection before Redis counts as away

# One question more for ``KEYS[1]`` if fewer than ARGV[3] were asked in the ARGV[2] seconds before
# ARGV[1]: drop what left the window, count, add. Atomic, so a burst cannot slip past the count.
_RATE_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1)
return 1
"""


def redis_pool_kwargs(settings: RedisSettings) -> dict:
    """Connection settings shared by the asyncio and the blocking client: one sized pool each."""
    return {
        "max_connections": settings.pool_size,
        "timeout": POOL_WAIT_S,
        "socket_connect_timeout": 0.5,
        "socket_timeout": 1.0,
    }


class LocalRateLimit:
    """At most ``limit`` per rolling window per key, in this process: the floor every replica
    keeps, and the whole limit while Redis is away."""

    def __init__(self, window_s: float = RATE_WINDOW_S, max_keys: int = 100_000):
        self.window_s, self.max_keys = window_s, max_keys
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def count(self, key: str, now: float) -> int:
        times = self._seen.get(key)
        if not times:
            return 0
        while times and times[0] <= now - self.window_s:
            times.popleft()
        return len(times)

    def record(self, key: str, now: float) -> None:
        self._seen.setdefault(key, deque()).append(now)
        self._seen.move_to_end(key)
        while len(self._seen) > self.max_keys:
            self._seen.popitem(last=False)


@dataclass(frozen=True)
class History:
    messages: tuple[Message, ...]
    available: bool  # False when Redis could not be reached


class ConversationState:
    def __init__(
        self,
        client: aioredis.Redis,
        settings: RedisSettings,
        prefix: str = "footnote:",
        clock: Callable[[], float] | None = None,
    ):
        self.client, self.settings, self.prefix = client, settings, prefix
        self.clock = clock or (lambda: time.time())  # wall clock: replicas share the window
        self._seen_local: OrderedDict[str, float] = OrderedDict()  # de-dupe while Redis is away
        self._answered_local: OrderedDict[str, float] = OrderedDict()  # conversation → marked at
        self._told_forgetful: set[str] = set()
        self._rate_local = LocalRateLimit()
        self._rate_script = client.register_script(_RATE_SCRIPT)
        self._down_until = (
            0.0  # after a failure, skip Redis for a moment instead of waiting on it per call
        )

    @classmethod
    def from_settings(
        cls,
        settings: RedisSettings,
        prefix: str | None = None,
        clock: Callable[[], float] | None = None,
    ) -> ConversationState:
        pool = aioredis.BlockingConnectionPool.from_url(
            settings.url,
            health_check_interval=30,
            retry=Retry(ExponentialBackoff(cap=0.05, base=0.01), 1),
            **redis_pool_kwargs(settings),
        )
        client = aioredis.Redis(connection_pool=pool)
        return cls(client, settings, settings.key_prefix if prefix is None else prefix, clock)

    async def close(self) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self.client.aclose()

    def _up(self) -> bool:
        return time.monotonic() >= self._down_until

    def _down(self, what: str, exc: Exception) -> None:
        if self._down_until == 0.0:
            log.warning(
                "redis unavailable (%s): %s; answering without memory until it is back", what, exc
            )
        self._down_until = time.monotonic() + RETRY_AFTER_S

    def _ok(self) -> None:
        if self._down_until:
            log.info("redis is back")
        self._down_until = 0.0

    # -- history -----------------------------------------------------------------------------

    async def history(self, conversation: str) -> History:
        if not self._up():
            return History((), False)
        try:
            raw = await self.client.lrange(f"{self.prefix}hist:{conversation}", 0, -1)
        except (RedisError, OSError) as exc:
            self._down("history", exc)
            return History((), False)
        self._ok()
        self._told_forgetful.discard(conversation)
        messages = []
        for item in raw:
            try:
                d = json.loads(item)
                messages.append(Message(d["role"], d["text"]))
            except (ValueError, KeyError, TypeError):
                continue
        return History(tuple(messages), True)

    async def remember(
        self, conversation: str, question: str, answer: str, user_id: str = ""
    ) -> bool:
        return await self._push(
            conversation, Message("user", question), Message("assistant", answer), user_id=user_id
        )

    async def remember_said(self, conversation: str, text: str, user_id: str = "") -> bool:
        """What the bot said with no question before it (a ticket filed on a click), so a later
        turn can refer to it ("what was the ticket number?")."""
        return await self._push(conversation, Message("assistant", text), user_id=user_id)

    async def _push(self, conversation: str, *messages: Message, user_id: str = "") -> bool:
        key = f"{self.prefix}hist:{conversation}"
        keep = max(1, self.settings.history_turns) * 2  # a turn is a question and its answer
        if not self._up():
            return False
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.rpush(key, *(json.dumps({"role": m.role, "text": m.text}) for m in messages))
                pipe.ltrim(key, -keep, -1)
                pipe.expire(key, self.settings.history_ttl_s)
                if user_id:
                    pipe.sadd(f"{self.prefix}asked:{user_id}", conversation)
                    pipe.expire(f"{self.prefix}asked:{user_id}", self.settings.history_ttl_s)
                await pipe.execute()
            return True
        except (RedisError, OSError) as exc:
            self._down("remember", exc)
            return False

    async def forget(self, users: Sequence[str], conversations: Sequence[str] = ()) -> int:
        """Delete the history of every conversation these people asked in (those their
        ``asked:`` sets name, and ``conversations``, from the record of their turns) and their
        rate-limit window: how many histories went. A channel thread's history is shared, so the
        others there lose its context too. Unlike the rest, Redis errors are raised: a forget
        must not pass for done."""
        found = set(conversations)
        for user in users:
            found |= {
                c.decode() if isinstance(c, bytes) else str(c)
                for c in await self.client.smembers(f"{self.prefix}asked:{user}")
            }
        gone = 0
        for conversation in sorted(found):
            gone += int(await self.client.delete(f"{self.prefix}hist:{conversation}"))
        for user in users:
            await self.client.delete(f"{self.prefix}asked:{user}", f"{self.prefix}rate:{user}")
        return gone

    def forgetful_notice(self, conversation: str, history: History) -> str:
        """The "I can't remember" line, the first time a conversation loses its history."""
        if history.available or conversation in self._told_forgetful:
            return ""
        if len(self._told_forgetful) > 50_000:
            self._told_forgetful.clear()
        self._told_forgetful.add(conversation)
        return FORGETFUL_NOTICE

    # -- threads the bot answered in ---------------------------------------------------------

    async def note_answered(self, conversation: str) -> None:
        """Remember that the bot answered in this thread, for as long as its history is kept, so
        that a reply there counts as a follow-up. Kept in this process too: a thread marked while
        Redis is away (or lost from it) is still known to the replica that answered in it."""
        now = self.clock()
        self._answered_local[conversation] = now
        self._answered_local.move_to_end(conversation)
        while len(self._answered_local) > LOCAL_KEEP:
            self._answered_local.popitem(last=False)
        if not self._up():
            return
        try:
            await self.client.set(
                f"{self.prefix}answered:{conversation}", "1", ex=self.settings.history_ttl_s
            )
            self._ok()
        except (RedisError, OSError) as exc:
            self._down("answered threads", exc)

    async def has_answered(self, conversation: str) -> bool:
        """Did the bot answer in this thread within the history TTL (on any replica)?"""
        now = self.clock()
        ttl = self.settings.history_ttl_s
        while self._answered_local and next(iter(self._answered_local.values())) <= now - ttl:
            self._answered_local.popitem(last=False)
        if conversation in self._answered_local:
            return True
        if not self._up():
            return False
        try:
            found = bool(await self.client.exists(f"{self.prefix}answered:{conversation}"))
        except (RedisError, OSError) as exc:
            self._down("answered threads", exc)
            return False
        self._ok()
        return found

    # -- de-dupe ---------------------------------------------------------------------------

    async def first_delivery(self, event_id: str) -> bool:
        """True the first time an event id is seen; a retry of the same event gets False."""
        if not event_id:
            return True
        if self._up():
            try:
                first = bool(
                    await self.client.set(
                        f"{self.prefix}seen:{event_id}", "1", nx=True, ex=SEEN_TTL_S
                    )
                )
                self._ok()
                return first and event_id not in self._seen_local
            except (RedisError, OSError) as exc:
                self._down("de-dupe", exc)
        now = time.monotonic()
        while self._seen_local and next(iter(self._seen_local.values())) < now - SEEN_TTL_S:
            self._seen_local.popitem(last=False)
        if event_id in self._seen_local:
            return False
        self._seen_local[event_id] = now
        if len(self._seen_local) > 50_000:
            self._seen_local.popitem(last=False)
        return True

    # -- rate limit ------------------------------------------------------------------------

    async def allow(self, user_id: str) -> bool:
        """At most ``rate_per_minute`` questions per user in any rolling 60 s (0 turns it off).

        Redis counts across replicas; this process counts too, and alone while Redis is away.
        Questions refused are not counted."""
        limit = self.settings.rate_per_minute
        if limit <= 0:
            return True
        now = self.clock()
        if self._rate_local.count(user_id, now) >= limit:
            return False
        if self._up():
            try:
                allowed = await self._rate_script(
                    keys=[f"{self.prefix}rate:{user_id}"],
                    args=[now, RATE_WINDOW_S, limit, f"{now}:{uuid.uuid4().hex[:8]}"],
                )
                self._ok()
                if not allowed:
                    return False
            except (RedisError, OSError) as exc:
                self._down("rate limit", exc)
        # Counted again after the await: concurrent calls may have been let through meanwhile.
        if self._rate_local.count(user_id, now) >= limit:
            return False
        self._rate_local.record(user_id, now)
        return True
