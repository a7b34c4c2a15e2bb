"""Slack on loopback: ``FakeSlackAPI`` answers ``/api/<method>`` like Slack's Web API and records
every call; ``SlackSender`` signs and POSTs Events API and interactivity payloads as Slack does;
the ``*_event`` helpers build those payloads; ``blocks_text`` reads Block Kit back as text."""

from __future__ import annotations

import itertools
import json
import re
import time
import uuid
from urllib.parse import parse_qsl, urlencode

import aiohttp
from aiohttp import web
from slack_sdk.signature import SignatureVerifier

from testing.recorder import Call, Recorder, start_app

BOT_USER_ID = "UFOOTNOTE"
TEAM_ID = "T0NORTHWD"


class FakeSlackAPI(Recorder):
    """Slack's Web API on loopback: ``POST|GET /api/<method>`` → ``{"ok": true, ...}``."""

    def __init__(
        self, users: dict[str, dict] | None = None, channels: dict[str, list[str]] | None = None
    ):
        super().__init__()
        self.users = users or {}  # slack id → {"email": ..., "is_bot": ...}
        self.channels = channels or {}  # channel id → member ids
        self._ts = itertools.count(1)
        self.fail: dict[str, str] = {}  # method → error to answer with
        # channel → error every post into it answers with (e.g. "not_in_channel")
        self.fail_in: dict[str, str] = {}
        self.sockets: list[web.WebSocketResponse] = []  # Socket Mode connections
        self.acks: list[dict] = []  # what the app sent back over Socket Mode
        # Streamed messages (chat.startStream): ts → {"channel", "text", "streaming"}
        self.streams: dict[str, dict] = {}

    async def start(self) -> FakeSlackAPI:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle)
        app.router.add_get("/socket", self._socket)
        app.router.add_post("/commands/{hook}", self._respond)
        self.runner, self.url = await start_app(app)
        return self

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        """Socket Mode: say hello, then relay envelopes pushed by the test; collect the acks."""
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": 1,
                "connection_info": {"app_id": "A0FOOTNOTE"},
                "debug_info": {"host": "fake", "approximate_connection_time": 3600},
            }
        )
        self.sockets.append(ws)
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                await self._record(Call("socket.ack", json.loads(msg.data)))
        return ws

    async def push(self, payload: dict, kind: str = "events_api") -> str:
        """Send an envelope over the newest Socket Mode connection; returns its envelope_id."""
        envelope_id = uuid.uuid4().hex
        await self.wait_for(lambda _: self.sockets)
        await self.sockets[-1].send_json(
            {
                "envelope_id": envelope_id,
                "type": kind,
                "payload": payload,
                "accepts_response_payload": kind != "events_api",
                "retry_attempt": 0,
                "retry_reason": "",
            }
        )
        return envelope_id

    async def push_raw(self, text: str) -> None:
        """Send any text over the newest Socket Mode connection, as a broken peer might."""
        await self.wait_for(lambda _: self.sockets)
        await self.sockets[-1].send_str(text)

    async def close(self) -> None:
        for ws in self.sockets:
            await ws.close()
        await super().close()

    @property
    def api_url(self) -> str:
        return self.url + "/api/"

    def response_url(self, hook: str) -> str:
        """A slash command's response_url (``https://hooks.slack.com/commands/…`` in Slack)."""
        return f"{self.url}/commands/{hook}"

    async def _respond(self, request: web.Request) -> web.Response:
        """A message posted to a response_url: JSON, answered with a plain ``ok``."""
        body = await request.json()
        await self._record(Call("response_url", {"hook": request.match_info["hook"], **body}))
        return web.Response(text="ok")

    def dm_channel(self, user: str) -> str:
        """The id of the bot's DM with ``user`` (what conversations.open answers)."""
        return "D" + user[1:]

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args: dict = dict(request.query)
        raw = await request.read()
        if raw:
            if request.content_type == "application/json":
                args.update(json.loads(raw))
            else:
                args.update(dict(parse_qsl(raw.decode())))
        for key in ("blocks", "attachments"):
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        if method in self.fail:
            result = {"ok": False, "error": self.fail[method]}
        elif method.startswith("chat.") and args.get("channel") in self.fail_in:
            result = {"ok": False, "error": self.fail_in[args["channel"]]}
        else:
            result = self._answer(method, args)
        await self._record(Call(method, args, result=result))
        return web.json_response(result)

    def _answer(self, method: str, args: dict) -> dict:
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://northwind.slack.com/",
                "team": "Northwind",
                "user": "footnote",
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "bot_id": "BFOOTNOTE",
                "is_enterprise_install": False,
            }
        if method in ("chat.postMessage", "chat.update"):
            ts = args.get("ts") or f"{int(time.time())}.{next(self._ts):06d}"
            return {
                "ok": True,
                "channel": args.get("channel"),
                "ts": ts,
                "message": {"text": args.get("text"), "blocks": args.get("blocks"), "ts": ts},
            }
        if method in ("chat.startStream", "chat.appendStream", "chat.stopStream"):
            return self._stream(method, args)
        if method == "apps.connections.open":
            return {"ok": True, "url": self.url.replace("http://", "ws://") + "/socket"}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"{int(time.time())}.{next(self._ts):06d}"}
        if method == "users.info":
            user = self.users.get(args.get("user", ""))
            if user is None:
                return {"ok": False, "error": "user_not_found"}
            return {
                "ok": True,
                "user": {
                    "id": args["user"],
                    "is_bot": user.get("is_bot", False),
                    "profile": {"email": user.get("email", "")},
                },
            }
        if method == "conversations.open":
            users = str(args.get("users") or "")
            if not users or "," in users:  # one person: the bot's DM with them
                return {
                    "ok": False,
                    "error": "users_list_not_supplied" if not users else "not_implemented",
                }
            return {"ok": True, "channel": {"id": self.dm_channel(users)}}
        if method == "conversations.members":
            members = self.channels.get(args.get("channel", ""))
            if members is None:
                return {"ok": False, "error": "channel_not_found"}
            return {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}
        return {"ok": True}

    MAX_MARKDOWN = 12_000  # markdown_text's documented limit

    def _stream(self, method: str, args: dict) -> dict:
        """Slack's streamed message text. ``chat.startStream`` (channel; thread_ts, the request's
        message; recipient_team_id and recipient_user_id, required outside DMs; markdown_text)
        starts a message and answers its ``ts``; ``chat.appendStream`` (channel, ts,
        markdown_text) adds to it; ``chat.stopStream`` (channel, ts; markdown_text, blocks shown
        at its bottom) ends it. Appending to or stopping a message that is not streaming is
        ``message_not_in_streaming_state``."""
        channel = args.get("channel")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        text = args.get("markdown_text") or ""
        if len(text) > self.MAX_MARKDOWN:
            return {"ok": False, "error": "msg_too_long"}
        if method == "chat.startStream":
            if not channel.startswith("D") and not (
                args.get("recipient_team_id") and args.get("recipient_user_id")
            ):
                return {"ok": False, "error": "invalid_arguments"}
            ts = f"{int(time.time())}.{next(self._ts):06d}"
            self.streams[ts] = {"channel": channel, "text": text, "streaming": True}
            return {"ok": True, "channel": channel, "ts": ts}
        stream = self.streams.get(args.get("ts") or "")
        if stream is None or stream["channel"] != channel:
            return {"ok": False, "error": "message_not_found"}
        if not stream["streaming"]:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        if method == "chat.appendStream" and not text:
            return {"ok": False, "error": "invalid_arguments"}
        stream["text"] += text
        if method == "chat.stopStream":
            stream["streaming"] = False
        return {"ok": True, "channel": channel, "ts": args["ts"]}

    def streamed_text(self, channel: str) -> list[str]:
        """The markdown each stream in ``channel`` showed, start to stop, in order."""
        return [s["text"] for s in self.streams.values() if s["channel"] == channel]

    # -- views on what was received ---------------------------------------------------------

    def of(self, method: str, channel: str | None = None) -> list[Call]:
        return [
            c
            for c in self.calls
            if c.method == method and (channel is None or c.args.get("channel") == channel)
        ]

    @staticmethod
    def is_final(call: Call) -> bool:
        """An answer (not a progress line): anything but a lone ⏳ context block."""
        blocks = call.args.get("blocks") or []
        return not (
            len(blocks) == 1
            and blocks[0].get("type") == "context"
            and blocks[0]["elements"][0]["text"].startswith("⏳")
        )

    def finals(self, channel: str) -> list[Call]:
        """The answers in a channel, in order: a placeholder edited into its final form, or (in
        an assistant thread, which has no placeholder) a final message posted in a DM thread."""
        return [
            c
            for c in self.calls
            if c.args.get("channel") == channel
            and self.is_final(c)
            and (
                c.method == "chat.update"
                or (
                    c.method == "chat.postMessage"
                    and bool(c.args.get("thread_ts"))
                    and channel.startswith("D")
                    and bool(c.args.get("blocks"))
                )
            )
        ]

    async def final_answer(self, channel: str, count: int = 1, timeout: float = 30.0) -> Call:
        """The ``count``-th final ``chat.update`` in a channel."""
        return await self.wait_for(
            lambda _: len(self.finals(channel)) >= count and self.finals(channel)[count - 1],
            timeout,
        )

    async def posted(self, channel: str, count: int = 1, timeout: float = 30.0) -> Call:
        return await self.wait_for(
            lambda _: (
                len(self.of("chat.postMessage", channel)) >= count
                and self.of("chat.postMessage", channel)[count - 1]
            ),
            timeout,
        )


def flat(node) -> str:
    """One Block Kit element as text: rich_text links as ``<url|text>`` (what mrkdwn would have
    said), code-styled text in backticks, text objects as their text, buttons as their label."""
    if isinstance(node, list):
        return "".join(flat(n) for n in node)
    if not isinstance(node, dict):
        return ""
    kind = node.get("type")
    if kind == "link":
        return f"<{node['url']}|{node.get('text') or node['url']}>"
    if kind == "text":  # a rich_text element
        text = node.get("text", "")
        return f"`{text}`" if (node.get("style") or {}).get("code") else text
    if kind in ("mrkdwn", "plain_text"):
        return node.get("text", "")
    if kind == "section":
        return flat(node.get("text")) + "".join("\n" + flat(f) for f in node.get("fields") or [])
    if kind in ("context", "actions"):
        return " ".join(flat(e) for e in node.get("elements") or [])
    if kind == "button":
        return flat(node.get("text"))
    return flat(node.get("elements") or [])


def blocks_text(blocks: list[dict]) -> str:
    """Every text in a Block Kit message, one line per block (for assertions)."""
    return "\n".join(flat(b) for b in blocks or [])


def shown(text: str) -> str:
    """What a reader sees of a message's text: each ``<url|label>`` as its label, Markdown
    ``[label](url)`` as its label, and no bare URLs. For assertions that a figure is *not* said:
    a signed link's expiry time and signature hold digits that change with the clock."""
    text = re.sub(r"<[^<>|\s]+\|([^<>]*)>", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\(\S+?\)", r"\1", text)
    return re.sub(r"<?https?://[^\s>]*>?", "", text)


def buttons(blocks: list[dict]) -> dict[str, dict]:
    """action_id → button element."""
    return {
        e["action_id"]: e for b in blocks or [] if b.get("type") == "actions" for e in b["elements"]
    }


# -- Slack payloads ------------------------------------------------------------------------------


class SlackSender:
    """Signs and POSTs Events API and interactivity payloads the way Slack does."""

    def __init__(self, session: aiohttp.ClientSession, url: str, secret: str):
        self.session, self.url, self.verifier = session, url, SignatureVerifier(secret)

    async def post(
        self,
        body: str,
        content_type: str = "application/json",
        *,
        timestamp: int | None = None,
        signature: str | None = None,
        headers: dict | None = None,
    ) -> tuple[int, str]:
        ts = str(timestamp if timestamp is not None else int(time.time()))
        sig = signature or self.verifier.generate_signature(timestamp=ts, body=body)
        hdrs = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": sig,
            **(headers or {}),
        }
        async with self.session.post(self.url, data=body.encode(), headers=hdrs) as resp:
            return resp.status, await resp.text()

    async def event(self, payload: dict, **kw) -> tuple[int, str]:
        return await self.post(json.dumps(payload), **kw)

    async def command(
        self,
        text: str,
        *,
        user: str,
        channel: str,
        response_url: str,
        command: str = "/footnote",
        **kw,
    ) -> tuple[int, str]:
        """A slash command as Slack sends it: a signed form of the command's fields."""
        fields = {
            "token": "deprecated-verification-token",
            "team_id": TEAM_ID,
            "team_domain": "northwind",
            "channel_id": channel,
            "channel_name": "directmessage" if channel.startswith("D") else "general",
            "user_id": user,
            "user_name": user.lower(),
            "command": command,
            "text": text,
            "api_app_id": "A0FOOTNOTE",
            "is_enterprise_install": "false",
            "response_url": response_url,
            "trigger_id": f"{int(time.time())}.{TEAM_ID}.{uuid.uuid4().hex}",
        }
        return await self.post(urlencode(fields), "application/x-www-form-urlencoded", **kw)

    async def action(self, payload: dict, **kw) -> tuple[int, str]:
        return await self.post(
            urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded", **kw
        )


def _ts() -> str:
    return f"{time.time():.6f}"


def _event(kind: str, user: str, channel: str, text: str, ts: str | None = None, **extra) -> dict:
    """The fields every Slack message event carries, and those of its kind."""
    ts = ts or _ts()
    event = {"type": kind, "user": user, "text": text, "ts": ts, "channel": channel, "event_ts": ts}
    event.update({k: v for k, v in extra.items() if v is not None})
    return event


def dm_event(
    text: str,
    user: str = "U0ALICE01",
    channel: str = "D0ALICE01",
    *,
    event_id: str | None = None,
    thread_ts: str | None = None,
) -> dict:
    event = _event("message", user, channel, text, channel_type="im", thread_ts=thread_ts)
    return _envelope(event, event_id)


def mention_event(
    text: str,
    user: str = "U0ALICE01",
    channel: str = "C0GENERAL",
    *,
    event_id: str | None = None,
    thread_ts: str | None = None,
) -> dict:
    event = _event("app_mention", user, channel, f"<@{BOT_USER_ID}> {text}", thread_ts=thread_ts)
    return _envelope(event, event_id)


def channel_message_event(
    text: str,
    user: str = "U0BOB0001",
    channel: str = "C0HRENG01",
    *,
    thread_ts: str | None = None,
    parent_user_id: str | None = None,
    channel_type: str = "channel",
    event_id: str | None = None,
    ts: str | None = None,
) -> dict:
    """A ``message.channels`` (``channel_type`` ``group``: ``message.groups``) event: a top-level
    message, or with ``thread_ts`` a reply in that thread (Slack adds ``parent_user_id``, who
    started the thread)."""
    parent = (parent_user_id or "U0ALICE01") if thread_ts else None
    event = _event(
        "message",
        user,
        channel,
        text,
        ts,
        channel_type=channel_type,
        thread_ts=thread_ts,
        parent_user_id=parent,
    )
    return _envelope(event, event_id)


def assistant_thread_started_event(
    user: str = "U0ALICE01",
    channel: str = "D0ALICE01",
    *,
    thread_ts: str | None = None,
    event_id: str | None = None,
) -> dict:
    """Slack's ``assistant_thread_started``: someone opened a thread in the assistant side panel
    (the thread's first message is the app's, so the thread exists before the user writes)."""
    thread_ts = thread_ts or _ts()
    event = {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": user,
            "context": {"channel_id": "C0GENERAL", "team_id": TEAM_ID, "enterprise_id": None},
            "channel_id": channel,
            "thread_ts": thread_ts,
        },
        "event_ts": _ts(),
    }
    return _envelope(event, event_id)


def _envelope(event: dict, event_id: str | None) -> dict:
    return {
        "token": "verification-token-unused",
        "team_id": TEAM_ID,
        "api_app_id": "A0FOOTNOTE",
        "event": event,
        "type": "event_callback",
        "event_id": event_id or f"Ev{uuid.uuid4().hex[:10].upper()}",
        "event_time": int(time.time()),
        "authorizations": [
            {"enterprise_id": None, "team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}
        ],
    }


def block_action(user: str, channel: str, message: dict, button: dict) -> dict:
    """The interactivity payload Slack sends when ``user`` clicks ``button`` on ``message``."""
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": TEAM_ID},
        "api_app_id": "A0FOOTNOTE",
        "token": "verification-token-unused",
        "container": {
            "type": "message",
            "message_ts": message["ts"],
            "channel_id": channel,
            "is_ephemeral": False,
        },
        "trigger_id": f"{int(time.time())}.1.{uuid.uuid4().hex[:8]}",
        "team": {"id": TEAM_ID, "domain": "northwind"},
        "channel": {"id": channel, "name": "directmessage"},
        "message": {
            "type": "message",
            "user": BOT_USER_ID,
            "ts": message["ts"],
            "text": message.get("text", ""),
            "blocks": message.get("blocks", []),
            **({"thread_ts": message["thread_ts"]} if message.get("thread_ts") else {}),
        },
        "response_url": "http://127.0.0.1:9/actions/unused",
        "actions": [
            {
                "type": "button",
                "action_id": button["action_id"],
                "block_id": "b",
                "text": button["text"],
                "value": button.get("value", ""),
                "action_ts": _ts(),
            }
        ],
    }
