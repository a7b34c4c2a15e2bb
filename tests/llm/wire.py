"""A loopback proxy in front of the real LLM server: it passes every chat request on and, for the
steps it is told, garbles the reply's text or holds the reply back longer than a step may wait.

It also keeps, per request, which step asked (the reply schema the request names), whether the
reply streamed, how long the server took, and whether the reply's text met that step's schema:
the figures ``make test-llm`` prints at the end.
"""

from __future__ import annotations

import http.client
import json
import re
import select
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from agent import llm_reasoner

STEPS = {
    "RouteReply": "route",
    "PlanReply": "plan",
    "GradeReply": "grade",
    "RewriteReply": "rewrite",
    "AnswerReply": "answer",
    "CheckReply": "check",
}
GARBLED_TOKENS = 16  # what a garbled request may cost the server
# No brace, bracket or double quote survives: garbled text is never JSON, whole or repaired.
_GARBLE = str.maketrans('{}[]"', "()<>'")


@dataclass
class Exchange:
    step: str  # "grade"; "grade (retry)" for the plain-JSON retry without a response_format
    stream: bool
    seconds: float
    parsed: bool  # the reply text validated against the step's schema
    sabotaged: str = ""  # "garbled" / "held back"
    cut: bool = False  # the server stopped at max_tokens (finish_reason "length")


TOOLS = "tools"  # the tool step: the turn's tools offered, none forced; its "schema" too


def step_of(body: dict) -> tuple[str, str]:
    """(step, schema) a chat request is for; ("probe", "") for anything else."""
    fmt = body.get("response_format") or {}
    schema = ""
    offered = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    if "search_docs" in offered:
        return TOOLS, TOOLS
    if fmt.get("type") == "json_schema":
        schema = fmt["json_schema"]["name"]
    elif fmt.get("type") == "json_object":
        schema = (fmt.get("schema") or {}).get("title", "")
    elif body.get("tools"):
        schema = body["tools"][0]["function"]["name"]
    if schema:
        return STEPS.get(schema, schema), schema
    first = (body.get("messages") or [{}])[0].get("content") or ""
    m = re.search(r'"title": "(\w+Reply)"', first if isinstance(first, str) else "")
    if m:
        return f"{STEPS.get(m.group(1), m.group(1))} (retry)", m.group(1)
    return "probe", ""


def meets_schema(schema: str, text: str) -> bool:
    if schema == TOOLS:  # text or tool calls are both replies; the reasoner checks each call
        return True
    cls: type[BaseModel] | None = getattr(llm_reasoner, schema, None) if schema else None
    if cls is None:
        return False
    try:
        cls.model_validate_json(text)
    except (ValidationError, ValueError):
        return False
    return True


class ReplyProxy:
    """Use as a context manager; ``base_url`` is what the reasoner is pointed at."""

    def __init__(self, upstream: str):
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.exchanges: list[Exchange] = []
        self.garbled: set[str] = set()  # steps whose replies are garbled (their retries too)
        self.held: dict[str, float] = {}  # step → seconds its reply is held back
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def sabotage(self, garble: tuple[str, ...] = (), hold: dict[str, float] | None = None) -> None:
        """Garble the replies of the ``garble`` steps; hold back those of ``hold`` (step → s)."""
        self.garbled, self.held = set(garble), dict(hold or {})

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)

    def __enter__(self) -> ReplyProxy:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.proxy = self  # type: ignore[attr-defined]
        threading.Thread(target=self._server.serve_forever, daemon=True, name="llm-proxy").start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: the connection closes after each reply, so a stream needs no chunked framing.
    protocol_version = "HTTP/1.0"
    server: ThreadingHTTPServer
    finish_reason = ""  # the last reply's finish_reason

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def proxy(self) -> ReplyProxy:
        return self.server.proxy  # type: ignore[attr-defined]

    def do_GET(self) -> None:
        self._forward("GET", b"", {})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.loads(raw or b"{}")
        step, schema = step_of(body)
        base = step.removesuffix(" (retry)")
        sabotaged = ""
        if base in self.proxy.held:
            self.proxy._closing.wait(self.proxy.held[base])
            if self._client_gone():  # it stopped waiting: spare the server the work
                self.proxy.record(Exchange(step, bool(body.get("stream")), 0.0, False, "held back"))
                return
            sabotaged = "held back"
        if base in self.proxy.garbled:
            sabotaged = "garbled"
            # Its text is thrown away: the server need not write much of it (on a slow machine a
            # full reply under the grammar takes tens of seconds).
            body["max_tokens"] = min(body.get("max_tokens") or GARBLED_TOKENS, GARBLED_TOKENS)
            raw = json.dumps(body).encode()
        t0 = time.perf_counter()
        self.finish_reason = ""
        text = self._forward("POST", raw, body, garble=base in self.proxy.garbled)
        seconds = time.perf_counter() - t0
        if text is not None:
            parsed = meets_schema(schema, text)
            stream, cut = bool(body.get("stream")), self.finish_reason == "length"
            self.proxy.record(Exchange(step, stream, seconds, parsed, sabotaged, cut))

    def _client_gone(self) -> bool:
        readable, _, _ = select.select([self.connection], [], [], 0)
        return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""

    def _forward(self, method: str, raw: bytes, body: dict, garble: bool = False) -> str | None:
        """Send the request on and the reply back; the reply's text (None if the client left)."""
        conn = http.client.HTTPConnection(*self.proxy.upstream, timeout=600)
        headers = {"Content-Type": "application/json"} if raw else {}
        conn.request(method, self.path, body=raw or None, headers=headers)
        resp = conn.getresponse()
        try:
            if body.get("stream") and resp.status == 200:
                return self._relay_stream(resp, garble)
            data = resp.read()
            text = ""
            if method == "POST" and resp.status == 200:
                reply = json.loads(data)
                self.finish_reason = reply["choices"][0].get("finish_reason") or ""
                message = reply["choices"][0]["message"]
                text = message.get("content") or ""
                if garble:
                    message["content"] = text = text.translate(_GARBLE)
                    data = json.dumps(reply).encode()
            self.send_response(resp.status)
            self.send_header("Content-Type", resp.getheader("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return text
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            return None  # the client gave up (a step's timeout): nothing to record
        finally:
            conn.close()

    def _relay_stream(self, resp: http.client.HTTPResponse, garble: bool) -> str:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        text = []
        for line in resp:
            stripped = line.strip()
            if stripped.startswith(b"data: {"):
                chunk = json.loads(stripped[6:])
                for choice in chunk.get("choices") or []:
                    self.finish_reason = choice.get("finish_reason") or self.finish_reason
                    delta = choice.get("delta") or {}
                    if delta.get("content"):
                        if garble:
                            delta["content"] = delta["content"].translate(_GARBLE)
                        text.append(delta["content"])
                line = b"data: " + json.dumps(chunk).encode() + b"\r\n"
            self.wfile.write(line)
            self.wfile.flush()
        return "".join(text)
