"""Socket Mode takes junk quietly and acknowledges it (issue 23, item 10).

Found: a malformed envelope was logged as a traceback by slack_sdk or Bolt, and some envelopes
(no payload, a payload of the wrong type, an event no listener takes) got no ack, so Slack sends
them again and again. Here the bot's real Socket Mode client connects to the loopback Slack
(``testing/slack.py``: ``apps.connections.open``, then a WebSocket that says hello), which sends
what a broken or hostile peer would; every envelope with an id must be acknowledged once, and each
malformed one logged as one line naming what was wrong, without a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging

import pytest

from bot.web.server import SLACK_KEY
from testing.slack import FakeSlackAPI, block_action, dm_event
from tests.security.test_web_junk import site


def unhandled_event() -> dict:
    body = dm_event("x")
    body["event"] = {"type": "reaction_added", "user": "U0ALICE01", "reaction": "thumbsup"}
    return body


def odd_user() -> dict:
    body = dm_event("How many vacation days?")
    body["event"]["user"] = 5
    return body


def envelope(envelope_id: object, kind: object, payload: object = None, **extra) -> str:
    message = {"envelope_id": envelope_id, "type": kind, **extra}
    if payload is not None:
        message["payload"] = payload
    return json.dumps(message)


BUTTON = {"action_id": "footnote_feedback_up", "text": {"type": "plain_text", "text": "x"}}
DEEP = "[" * 5000 + "]" * 5000
# (what is sent, the envelope id that must be acknowledged or None, a word the log line names)
PROBES = [
    ('{"envelope_id": "e-cut", "type": "events_api", "payload": {"ev', "e-cut", "not JSON"),
    ('{"envelope_id": "e-deep", "type": "events_api", "payload": ' + DEEP + "}", "e-deep", "JSON"),
    ("hello there", None, "not JSON"),
    ("[1, 2, 3]", None, "list"),
    ('"envelope"', None, "str"),
    (envelope("e-nopayload", "events_api"), "e-nopayload", "payload"),
    (envelope("e-listpayload", "events_api", [1, 2]), "e-listpayload", "payload"),
    (envelope("e-strpayload", "events_api", "text"), "e-strpayload", "payload"),
    (envelope("e-eventstr", "events_api", {"event": "x"}), "e-eventstr", "payload"),
    (envelope("e-user5", "events_api", odd_user()), "e-user5", "payload"),
    (envelope(5, "events_api", dm_event("x")), None, "envelope_id"),
    (envelope("e-kind", "no_such_type", {}), "e-kind", "no_such_type"),
    (envelope("e-kindlist", ["events_api"], {}), "e-kindlist", "type"),
    (envelope("e-notype", None, {}), "e-notype", "type"),
    (json.dumps({"type": "events_api", "payload": {}}), None, "envelope_id"),
    (
        envelope("e-actions", "interactive", {"type": "block_actions", "actions": "x"}),
        "e-actions",
        "payload",
    ),
    (
        envelope(
            "e-action-user",
            "interactive",
            {**block_action("U0A", "D0A", {"ts": "1.1"}, BUTTON), "user": 5},
        ),
        "e-action-user",
        "payload",
    ),
    (envelope("e-command", "slash_commands", {"text": "admin"}), "e-command", "payload"),
]
UNHANDLED = envelope("e-unhandled", "events_api", unhandled_event())  # well formed, no listener


@pytest.fixture
async def slack_api():
    api = await FakeSlackAPI().start()
    yield api
    await api.close()


async def test_malformed_envelopes_are_one_line_each_and_every_id_is_acknowledged(
    tmp_path, slack_api, caplog
):
    caplog.set_level(logging.DEBUG)
    expected = {eid for _, eid, _ in PROBES if eid} | {"e-unhandled"}
    async for web in site(tmp_path, slack_api=slack_api.api_url):
        handler = web.app[SLACK_KEY].socket_mode_handler("xapp-1-test")
        await handler.connect_async()
        try:
            for text, _, _ in PROBES:
                await slack_api.push_raw(text)
            await slack_api.push_raw(UNHANDLED)

            def acked(calls) -> set[str]:
                return {str(c.args.get("envelope_id")) for c in calls if c.method == "socket.ack"}

            with contextlib.suppress(TimeoutError):
                await slack_api.wait_for(lambda calls: expected <= acked(calls), timeout=20)
            await asyncio.sleep(0.5)  # let a second ack of any envelope arrive, if one would
            acks = [c.args.get("envelope_id") for c in slack_api.of("socket.ack")]
        finally:
            await handler.close_async()
    assert sorted(set(acks)) == sorted(expected), f"not acknowledged: {expected - set(acks)}"
    assert len(acks) == len(set(acks)), f"acknowledged twice: {acks}"
    tracebacks = [r for r in caplog.records if r.exc_info or r.exc_text]
    assert not tracebacks, [f"{r.name}: {r.getMessage()[:120]}" for r in tracebacks]
    dropped = [r.getMessage() for r in caplog.records if "socket mode: dropped" in r.getMessage()]
    for text, envelope_id, word in PROBES:
        lines = [m for m in dropped if (envelope_id or "") in m and word in m]
        assert lines, (text[:60], envelope_id, word, dropped)
    assert len(dropped) == len(PROBES), dropped
