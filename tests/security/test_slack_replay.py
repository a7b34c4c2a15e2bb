"""A signed Slack event is answered once, with or without an ``event_id`` (hole 10): without one,
a hash of the signed body identifies it, so a replay (or a retry) within the signature's five
minutes is not answered again."""

from __future__ import annotations

import asyncio
import json

from testing.slack import dm_event


async def test_a_replayed_event_without_an_event_id_is_answered_once(bot):
    event = dm_event("How many vacation days can I carry over?", channel="D0REPLAY1")
    event.pop("event_id")
    body = json.dumps(event)
    for headers in (None, None, {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}):
        assert (await bot.send.post(body, headers=headers))[0] == 200
    await bot.slack.final_answer("D0REPLAY1")
    await asyncio.sleep(0.5)
    assert len(bot.slack.of("chat.postMessage", "D0REPLAY1")) == 1
    # a different message in the same channel is a different event
    other = dm_event("And how many sick days?", channel="D0REPLAY1")
    other.pop("event_id")
    assert (await bot.send.event(other))[0] == 200
    await bot.slack.final_answer("D0REPLAY1", 2)
