"""Fakes at the two LLM seams, so no test ever calls a real model.

``ScriptedLLM``  the LlamaIndex interface: ``enqueue`` replies, read back the prompts it got.
``FakeOpenAI``   the wire: an OpenAI-compatible ``/v1/chat/completions`` server on 127.0.0.1 (a
                 thread, so sync and async clients on any event loop can use it). It speaks the
                 real format (text or ``tool_calls`` replies, SSE when ``stream`` is true, usage),
                 plays scripted replies in order and records every request.

    with FakeOpenAI() as fake:
        fake.reply_tool({"kind": "question", "question": "How many days?"})
        settings = LLMSettings(provider="openai_like", base_url=fake.base_url, model="fake", ...)
        ...
        assert fake.bodies[0]["tool_choice"] == "required"
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from llama_index.core.base.llms.types import (
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import BaseModel, Field

from testing.recorder import send_json


def _as_text(reply: str | dict | list | BaseModel) -> str:
    if isinstance(reply, BaseModel):
        return reply.model_dump_json()
    return reply if isinstance(reply, str) else json.dumps(reply)


# ---------------------------------------------------------------- the LlamaIndex seam


class ScriptedLLM(CustomLLM):
    """A completion model that answers with what was enqueued, in order, and records each prompt.

    Chat calls reach ``complete`` through LlamaIndex's own messages-to-prompt conversion, so a
    prompt here holds every message ("system: …", "user: …"). Running out of replies is a test bug
    and raises ``AssertionError``, which no reasoner fallback swallows.
    """

    replies: list[str] = Field(default_factory=list)
    prompts: list[str] = Field(default_factory=list)

    def enqueue(self, *replies: str | dict | list | BaseModel) -> ScriptedLLM:
        self.replies.extend(_as_text(r) for r in replies)
        return self

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            model_name="scripted", is_chat_model=False, is_function_calling_model=False
        )

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        if not self.replies:
            raise AssertionError(f"ScriptedLLM has no reply left for call {len(self.prompts)}")
        return CompletionResponse(text=self.replies.pop(0))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        response = self.complete(prompt, formatted=formatted, **kwargs)
        yield CompletionResponse(text=response.text, delta=response.text)


# ---------------------------------------------------------------- the wire


@dataclass
class Reply:
    """One scripted answer: text ``content``, ``tool_calls`` [{"name", "arguments"}] (both at once,
    as OpenAI allows: the text first), or an HTTP error; sent after ``delay_s`` seconds (a slow
    model; closing the server cuts the wait short). ``arguments`` given as a string go on the wire
    as they are, so a test can send JSON that does not parse.

    Streamed (``stream: true``): ``chunk_s`` seconds pass between content chunks (a model writing),
    ``piece`` characters each; with ``fail_after`` the stream stops after that many content chunks
    with the error event OpenAI sends mid-stream (``data: {"error": {...}}``, then the connection
    closes), carrying ``error`` as its message; with ``drop_after`` the stream goes chunked
    (``Transfer-Encoding: chunked``, as real servers send it) and the connection drops in the
    middle of a chunk after that many content chunks (a proxy or the server going away)."""

    content: str | None = None
    tool_calls: list[dict] = field(default_factory=list)
    status: int = 200
    error: str = ""
    delay_s: float = 0.0
    chunk_s: float = 0.0
    piece: int = 16
    fail_after: int | None = None
    drop_after: int | None = None


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict


Script = Reply | Callable[[dict], Reply]


class FakeOpenAI:
    """A loopback OpenAI-compatible chat server with scripted replies. Use as a context manager.

    ``enqueue`` takes ``Reply`` objects or callables ``body -> Reply`` (for flows whose call count
    is not fixed). An empty queue answers 400 "no scripted reply", which the SDK does not retry.
    ``require_key`` makes it answer 401 unless the request carries ``Bearer <key>``.
    """

    def __init__(self, model: str = "fake", require_key: str | None = None):
        self.model, self.require_key = model, require_key
        self.requests: list[Recorded] = []
        self._script: deque[Script] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()  # wakes delayed replies when the server closes

    # -- scripting

    def enqueue(self, *replies: Script) -> FakeOpenAI:
        with self._lock:
            self._script.extend(replies)
        return self

    def clear(self) -> FakeOpenAI:
        """Drop the replies still scripted (a flow ended before it used them all)."""
        with self._lock:
            self._script.clear()
        return self

    def reply_text(self, text: str) -> FakeOpenAI:
        return self.enqueue(Reply(content=text))

    def reply_json(self, obj: dict | list | BaseModel) -> FakeOpenAI:
        return self.enqueue(Reply(content=_as_text(obj)))

    def reply_tool(self, arguments: dict | str, name: str | None = None) -> FakeOpenAI:
        """A tool call; ``name`` defaults to the (first) tool the request offers."""
        return self.enqueue(Reply(tool_calls=[{"name": name, "arguments": arguments}]))

    def reply_calls(self, *calls: tuple[str, dict | str], content: str | None = None) -> FakeOpenAI:
        """One reply calling several tools by name (parallel tool calls), e.g.
        ``reply_calls(("search_docs", {"query": "vpn"}), ("query_crm", {"customer_id": "4471"}))``."""
        return self.enqueue(
            Reply(content=content, tool_calls=[{"name": n, "arguments": a} for n, a in calls])
        )

    def reply_error(self, status: int, message: str) -> FakeOpenAI:
        return self.enqueue(Reply(status=status, error=message))

    @property
    def bodies(self) -> list[dict]:
        return [r.body for r in self.requests]

    @property
    def pending(self) -> int:
        return len(self._script)

    # -- lifecycle

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        self._closing.clear()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- serving

    def _next(self, body: dict) -> Reply:
        with self._lock:
            script = self._script.popleft() if self._script else None
        if script is None:
            return Reply(
                status=400,
                error=f"FakeOpenAI: no scripted reply left for request {len(self.requests)}",
            )
        return script(body) if callable(script) else script


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ThreadingHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake  # type: ignore[attr-defined]

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(
                200,
                {
                    "object": "list",
                    "data": [{"id": self.fake.model, "object": "model", "owned_by": "fake"}],
                },
            )
        else:
            self._error(404, f"no route GET {self.path}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return self._error(400, "body is not JSON")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._error(404, f"no route POST {self.path}")
        fake = self.fake
        fake.requests.append(
            Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        if fake.require_key and self.headers.get("Authorization") != f"Bearer {fake.require_key}":
            return self._error(401, "Incorrect API key provided", code="invalid_api_key")
        reply = fake._next(body)
        if reply.delay_s:
            fake._closing.wait(reply.delay_s)
        if reply.status != 200:
            return self._error(reply.status, reply.error)
        tool_calls = [_tool_call(c, body) for c in reply.tool_calls]
        if any(c is None for c in tool_calls):
            return self._error(
                400, "FakeOpenAI: a tool call was scripted but the request offers no tools"
            )
        if body.get("stream"):
            self._stream(body, reply, tool_calls)  # type: ignore[arg-type]
        else:
            self._json(200, _completion(body, reply.content, tool_calls))  # type: ignore[arg-type]

    # -- responses

    def _json(self, status: int, payload: dict) -> None:
        send_json(self, status, payload)

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        kind = "authentication_error" if status == 401 else "invalid_request_error"
        self._json(
            status, {"error": {"message": message, "type": kind, "param": None, "code": code}}
        )

    def _stream(self, body: dict, reply: Reply, tool_calls: list[dict]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        chunked = reply.drop_after is not None
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.close_connection = True

        def write(data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
            self.wfile.flush()

        sent = 0
        for chunk in _chunks(body, reply.content, tool_calls, reply.piece):
            written = any((c.get("delta") or {}).get("content") for c in chunk.get("choices", []))
            if written and reply.fail_after is not None and sent >= reply.fail_after:
                error = {"message": reply.error or "stream failed", "type": "server_error"}
                write(f"data: {json.dumps({'error': error})}\n\n".encode())
                return
            if written and reply.drop_after is not None and sent >= reply.drop_after:
                self.wfile.write(b"40\r\ndata: {")  # a chunk announced, never finished
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if written and reply.chunk_s and sent:
                self.fake._closing.wait(reply.chunk_s)
            sent += written
            write(f"data: {json.dumps(chunk)}\n\n".encode())
        write(b"data: [DONE]\n\n")
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()


# ---------------------------------------------------------------- OpenAI's wire format


def _tool_call(call: dict, body: dict) -> dict | None:
    name = call.get("name")
    if name is None:
        choice = body.get("tool_choice")
        offered = [
            t["function"]["name"] for t in body.get("tools") or [] if t.get("type") == "function"
        ]
        if isinstance(choice, dict):
            name = choice.get("function", {}).get("name")
        elif offered:
            name = offered[0]
        else:
            return None
    args = call.get("arguments", {})
    return {
        "id": f"call_{uuid.uuid4().hex[:24]}",
        "type": "function",
        "function": {
            "name": name,
            "arguments": args if isinstance(args, str) else json.dumps(args),
        },
    }


def _tokens(text: str) -> int:
    return max(1, len(text.split()))


def _usage(body: dict, content: str | None, tool_calls: Sequence[dict]) -> dict:
    prompt = sum(_tokens(json.dumps(m.get("content", ""))) for m in body.get("messages", []))
    completion = _tokens(content or "") + sum(
        _tokens(c["function"]["arguments"]) for c in tool_calls
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _envelope(body: dict, obj: str) -> dict:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": obj,
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "system_fingerprint": "fp_fake",
    }


def _completion(body: dict, content: str | None, tool_calls: list[dict]) -> dict:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content or (None if tool_calls else ""),
        "refusal": None,
    }
    if tool_calls:
        message["tool_calls"] = tool_calls
    return _envelope(body, "chat.completion") | {
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": _usage(body, content, tool_calls),
    }


def _pieces(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _chunks(body: dict, content: str | None, tool_calls: list[dict], size: int = 16):
    """The SSE chunks OpenAI sends: role first, then deltas, then finish_reason, then usage if asked."""
    env = _envelope(body, "chat.completion.chunk")

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return env | {
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        }

    yield chunk({"role": "assistant", "content": None if tool_calls and not content else ""})
    if content and tool_calls:  # the text streams before the calls
        for piece in _pieces(content, size):
            yield chunk({"content": piece})
    if tool_calls:
        for i, call in enumerate(tool_calls):
            head = {
                "index": i,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            yield chunk({"tool_calls": [head]})
            for piece in _pieces(call["function"]["arguments"]):
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    else:
        for piece in _pieces(content or "", size):
            yield chunk({"content": piece})
    yield chunk({}, "tool_calls" if tool_calls else "stop")
    if (body.get("stream_options") or {}).get("include_usage"):
        yield env | {"choices": [], "usage": _usage(body, content, tool_calls)}
