"""Every endpoint answers junk with a 4xx, never a 500 (hole 8) — including junk that carries a
valid Slack signature, which reaches our own listeners."""

from __future__ import annotations

import json

import pytest

from bot.chat import render
from testing.slack import block_action, dm_event, mention_event

JUNK_BODIES = [
    b"",
    b"{",
    b"[]",
    b"null",
    b'"text"',
    b"\xff\xfe\x00junk",
    b'{"type": 5}',
    b"payload=%7B",
    b"payload=" + b"A" * 5000,
    b"a" * (1024 * 1024 + 10),  # over the body limit
]
CONTENT_TYPES = ["application/json", "application/x-www-form-urlencoded", "text/plain", ""]
ROUTES = ["/slack/events", "/api/messages", "/docs/x", "/healthz", "/readyz", "/metrics", "/nope"]


@pytest.mark.parametrize("route", ROUTES)
async def test_junk_on_every_route_is_never_a_server_error(bot, route):
    for body in JUNK_BODIES:
        for content_type in CONTENT_TYPES:
            for method in ("POST", "GET", "PUT"):
                headers = {"Content-Type": content_type} if content_type else {}
                async with bot.session.request(
                    method, bot.url + route, data=body, headers=headers
                ) as resp:
                    assert resp.status < 500, (method, route, content_type, body[:40], resp.status)


def _odd_events() -> list[dict]:
    events = []
    for field, value in [
        ("user", 5),
        ("user", ["U0ALICE01"]),
        ("channel", {"id": "D1"}),
        ("text", None),
        ("text", ["a"]),
        ("thread_ts", {"x": 1}),
        ("channel_type", 7),
    ]:
        e = dm_event("How many vacation days?", channel="D0ODD0001")
        e["event"][field] = value
        events.append(e)
    e = mention_event("hi", channel="C0ODD0001")
    e["event"]["ts"] = None
    events.append(e)
    e = dm_event("x")
    e["event"] = "not an object"
    events.append(e)
    e = dm_event("x")
    e["event_id"] = {"nested": True}
    events.append(e)
    return events


async def test_signed_events_with_odd_fields_get_200_or_4xx(bot):
    for event in _odd_events():
        status, _ = await bot.send.event(event)
        assert status in (200, 400, 404), (event, status)
    # and the app still answers afterwards
    status, _ = await bot.send.event(dm_event("How many vacation days?", channel="D0ODDOK01"))
    assert status == 200
    await bot.slack.final_answer("D0ODDOK01")


async def test_signed_button_clicks_with_odd_fields_get_200_or_4xx(bot):
    button = {
        "action_id": render.CONFIRM,
        "text": {"type": "plain_text", "text": "x"},
        "value": "{}",
    }
    base = block_action("U0ALICE01", "D0ODD0002", {"ts": "1.1", "blocks": []}, button)
    variants = []
    for key, value in [
        ("actions", "x"),
        ("actions", [{"action_id": render.CONFIRM, "value": 5}]),
        ("actions", [{"action_id": render.FEEDBACK_UP, "value": ["x"]}]),
        ("actions", [{"action_id": render.TICKET_OFFER, "value": {"q": 1}}]),
        ("user", "U0ALICE01"),
        ("user", {"id": 7}),
        ("channel", "D0ODD0002"),
        ("container", None),
        ("message", "text"),
    ]:
        variant = json.loads(json.dumps(base))
        variant[key] = value
        variants.append(variant)
    for payload in variants:
        status, _ = await bot.send.action(payload)
        assert status in (200, 400, 404), (payload, status)
