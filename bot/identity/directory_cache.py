"""A Redis cache in front of a directory that is slow or rate-limited to ask (Microsoft Graph).

Each lookup key (object id, e-mail) is cached on its own, as the JSON of the person found, for
``ttl_s``; "nobody" is cached too, for the shorter ``negative_ttl_s``, so a newly added person
is found soon while a stranger's retries do not hammer Graph. A change in Entra ID (a group
joined or left) is seen at the latest ``ttl_s`` later. An error is never cached: the next
question asks the directory again.

Keys: ``{prefix}dir:{sha256 of the lookup key}`` — addresses stay out of key names (and out of
``MONITOR`` / ``SCAN`` output); the value holds what the directory returned.

Redis is a convenience here as elsewhere (``bot/chat/conversation_state.py``): if it errs, the lookup goes to the
directory itself and Redis is skipped for ``RETRY_AFTER_S``, so a dead Redis costs one
connect timeout, not one per question.

The SCIM directory is not cached: it reads its own database, which changes exactly when the
identity provider pushes, so a cache could only make it stale.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import redis
from redis.exceptions import RedisError

from bot.identity.directory import Directory, Person

log = logging.getLogger(__name__)

RETRY_AFTER_S = 5.0  # after a Redis error, lookups skip Redis this long
NOBODY = "null"


@dataclass
class CachedDirectory:
    inner: Directory
    client: redis.Redis
    prefix: str = "footnote:"
    ttl_s: int = 900
    negative_ttl_s: int = 60
    clock: Callable[[], float] = time.monotonic
    # keys worth a trip to Redis: the inner directory answers the others at once (None for a
    # Slack user id in Graph), so they never wait on Redis, up or down
    worth: Callable[[str], bool] = lambda key: True
    _skip_until: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def find(self, key: str) -> Person | None:
        if not key.strip():
            return None
        if not self.worth(key):
            return self.inner.find(key)
        name = self._key(key)
        cached = self._read(name)
        if cached is not None:
            return _person(cached)
        person = self.inner.find(key)  # DirectoryUnavailable passes through, uncached
        self._write(name, person)
        return person

    def forget(self, *keys: str) -> None:
        """Drop what is cached for these lookup keys: the next lookup asks the directory."""
        names = [self._key(k) for k in keys if k.strip()]
        if names and self._usable():
            try:
                self.client.delete(*names)
            except RedisError as exc:
                self._away(exc)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()
        self.client.close()

    def _key(self, key: str) -> str:
        digest = hashlib.sha256(key.strip().encode()).hexdigest()[:40]
        return f"{self.prefix}dir:{digest}"

    def _read(self, name: str) -> str | None:
        if not self._usable():
            return None
        try:
            value = self.client.get(name)
        except RedisError as exc:
            self._away(exc)
            return None
        return value.decode() if isinstance(value, bytes) else value

    def _write(self, name: str, person: Person | None) -> None:
        if not self._usable():
            return
        value = NOBODY if person is None else json.dumps(asdict(person))
        ttl = self.negative_ttl_s if person is None else self.ttl_s
        try:
            self.client.set(name, value, ex=max(1, ttl))
        except RedisError as exc:
            self._away(exc)

    def _usable(self) -> bool:
        return self.clock() >= self._skip_until

    def _away(self, exc: Exception) -> None:
        with self._lock:
            if self._usable():
                log.warning(
                    "Redis is away (%s): directory lookups go uncached for %.0f s",
                    exc,
                    RETRY_AFTER_S,
                )
            self._skip_until = self.clock() + RETRY_AFTER_S


def _person(cached: str) -> Person | None:
    data = json.loads(cached)
    if data is None:
        return None
    data["groups"] = tuple(data.get("groups") or ())
    return Person(**data)
