"""Pending actions: a proposed ticket waits here until its asker confirms it, then is taken ONCE.

``take`` is atomic (Redis GETDEL), so a double click or a retried event files one ticket.
A store that cannot be reached raises ``StateUnavailable``; callers then offer no ticket (or say
the request cannot be checked right now) instead of failing the turn.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Collection
from dataclasses import asdict
from typing import TYPE_CHECKING, Protocol

from agent.turns import PendingAction

if TYPE_CHECKING:
    from redis import Redis


class StateUnavailable(Exception):
    """The store of pending actions cannot be reached right now."""


class PendingActions(Protocol):
    def put(self, action: PendingAction) -> None: ...

    def take(self, action_id: str) -> PendingAction | None:
        """Remove and return the action; ``None`` if it expired or was already taken."""
        ...

    def peek(self, action_id: str) -> PendingAction | None: ...

    def forget(self, users: Collection[str]) -> int:
        """Drop every proposal these people have not confirmed yet (it holds their question)."""
        ...


class MemoryPendingActions:
    """For one process (the terminal chat); the bot uses Redis."""

    def __init__(self) -> None:
        self._items: dict[str, PendingAction] = {}
        self._lock = threading.Lock()

    def put(self, action: PendingAction) -> None:
        with self._lock:
            self._items[action.action_id] = action

    def take(self, action_id: str) -> PendingAction | None:
        with self._lock:
            action = self._items.pop(action_id, None)
        return action if action and action.expires_at > time.time() else None

    def peek(self, action_id: str) -> PendingAction | None:
        action = self._items.get(action_id)
        return action if action and action.expires_at > time.time() else None

    def forget(self, users: Collection[str]) -> int:
        with self._lock:
            gone = [k for k, a in self._items.items() if a.user_id in users]
            for k in gone:
                del self._items[k]
        return len(gone)


class RedisPendingActions:
    def __init__(self, client: Redis, prefix: str = "footnote:pending:"):
        # Imported here: the redis package costs a tenth of a second that `footnote ask`, which
        # keeps pending actions in memory, never needs.
        from redis.exceptions import RedisError

        self.client, self.prefix = client, prefix
        self._down = (RedisError, OSError)

    def put(self, action: PendingAction) -> None:
        ttl = max(1, int(action.expires_at - time.time()))
        try:
            self.client.set(self.prefix + action.action_id, json.dumps(asdict(action)), ex=ttl)
        except self._down as exc:
            raise StateUnavailable(f"redis: {exc}") from exc

    def take(self, action_id: str) -> PendingAction | None:
        try:
            raw = self.client.getdel(self.prefix + action_id)
        except self._down as exc:
            raise StateUnavailable(f"redis: {exc}") from exc
        return PendingAction(**json.loads(raw)) if raw else None

    def peek(self, action_id: str) -> PendingAction | None:
        try:
            raw = self.client.get(self.prefix + action_id)
        except self._down as exc:
            raise StateUnavailable(f"redis: {exc}") from exc
        return PendingAction(**json.loads(raw)) if raw else None

    def forget(self, users: Collection[str]) -> int:
        """Every key under the prefix is read (SCAN, so Redis is never blocked); raises
        ``StateUnavailable`` when Redis cannot be reached: a forget must not pass for done."""
        pattern = re.sub(r"([\\*?\[\]])", r"\\\1", self.prefix) + "*"
        gone = 0
        try:
            for key in self.client.scan_iter(match=pattern, count=500):
                raw = self.client.get(key)
                try:
                    user = json.loads(raw)["user_id"] if raw else None
                except (ValueError, KeyError, TypeError):
                    continue
                if user in users:
                    gone += int(self.client.delete(key))
        except self._down as exc:
            raise StateUnavailable(f"redis: {exc}") from exc
        return gone
