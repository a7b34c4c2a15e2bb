"""Forgetting one person everywhere Footnote keeps what they asked (``footnote privacy forget``).

Their questions live in more places than the record of turns: the x-ray traces (the bot's Redis
stream, ``traces.sqlite`` of ``footnote ask``/``chat``), the conversation histories in Redis
(Slack and Teams alike), ticket proposals waiting for their Confirm, and the demo desk's filed
tickets. The turns on record are read first — they say which turns and conversations were theirs —
then every store is cleared; what was removed is counted by kind. A store that cannot be reached
is named, never skipped in silence: the forget is incomplete until it is run again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.reports.feedback import FeedbackStore
from bot.settings import Settings


@dataclass
class Forgotten:
    removed: dict[str, int] = field(default_factory=dict)  # kind → how many, in the order done
    unreachable: list[str] = field(default_factory=list)  # what still holds them, and the fix


def forget(settings: Settings, store: FeedbackStore, users: Sequence[str]) -> Forgotten:
    from agent.actions import RedisPendingActions, StateUnavailable
    from agent.desk import SqliteTicketDesk
    from agent.traces import RedisTraceStore, SqliteTraceStore

    out = Forgotten()
    theirs = [t for user in users for t in store.turns_of(user)]
    turn_ids = {t for t, _ in theirs}
    conversations = sorted({c for _, c in theirs if c})
    turns = feedback = 0
    for user in users:
        t, f = store.forget(user)
        turns, feedback = turns + t, feedback + f
    out.removed["turns"], out.removed["feedback records"] = turns, feedback

    traces_file = settings.data_dir / "traces.sqlite"
    if traces_file.exists():
        local = SqliteTraceStore(traces_file)
        try:
            out.removed["traces in traces.sqlite"] = local.forget(users, turn_ids)
        finally:
            local.close()
    tickets_file = settings.data_dir / "tickets.sqlite"
    if tickets_file.exists():
        desk = SqliteTicketDesk(tickets_file)
        try:
            out.removed["filed tickets (the demo desk)"] = desk.forget(users)
        finally:
            desk.close()

    import redis
    from redis.exceptions import RedisError

    r = settings.redis
    client = redis.Redis.from_url(r.url, socket_connect_timeout=2, socket_timeout=5)
    try:
        out.removed["traces in Redis"] = RedisTraceStore(
            client, key=r.key_prefix + "traces"
        ).forget(users, turn_ids)
        out.removed["pending ticket proposals"] = RedisPendingActions(
            client, prefix=r.key_prefix + "pending:"
        ).forget(users)
        out.removed["conversation histories"] = asyncio.run(
            _histories(settings, users, conversations)
        )
    except (RedisError, OSError, StateUnavailable) as exc:
        out.unreachable.append(
            f"Redis at {redis_address(r.url)} ({exc}): their traces, conversation histories and "
            "pending ticket proposals there are not forgotten yet — start Redis, or point "
            "FOOTNOTE_REDIS__URL at the bot's, and run this again"
        )
    finally:
        client.close()
    return out


async def _histories(settings: Settings, users: Sequence[str], conversations: list[str]) -> int:
    from bot.chat.conversation_state import ConversationState

    state = ConversationState.from_settings(settings.redis)
    try:
        return await state.forget(users, conversations)
    finally:
        await state.close()


def redis_address(url: str) -> str:
    """The URL without its password, to name in a message."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"
