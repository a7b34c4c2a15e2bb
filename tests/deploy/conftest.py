"""Things a deployment test starts and stops on loopback: its own redis-server, a Qdrant stand-in,
and the ops routes on a real aiohttp server."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import aiohttp
import pytest
from aiohttp import web

from bot.web.ops import add_ops_routes
from testing.recorder import send_json


def free_port() -> int:
    with contextlib.closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisProcess:
    """A private redis-server on its own port, so a test can kill it without touching the machine's."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 0.2),
            ):
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(5)
            self.proc = None


@pytest.fixture
def redis_process() -> Iterator[RedisProcess]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    r = RedisProcess()
    r.start()
    yield r
    r.stop()


class QdrantStandIn:
    """Speaks the part of Qdrant's REST API that opening an index and ``count`` use (qdrant-client
    is the real client on the other side). ``stop()``/``start()`` take it away and bring it back on
    the same port; ``has_collection`` False answers like a server whose collection was deleted."""

    def __init__(self, chunks: int = 42) -> None:
        self.port = free_port()
        self.chunks, self.has_collection = chunks, True
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        owner = self

        # HTTP/1.0 (the default): every connection closes, so "down" really is down.
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def reply(self, status: int, body: dict) -> None:
                send_json(self, status, body)

            def do_GET(self) -> None:
                if self.path == "/":
                    self.reply(200, {"title": "qdrant - vector search engine", "version": "1.19.0"})
                elif self.path.endswith("/exists"):
                    self.reply(
                        200,
                        {"result": {"exists": owner.has_collection}, "status": "ok", "time": 0.0},
                    )
                else:
                    self.reply(404, {"status": {"error": "Not found"}, "time": 0.0})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.endswith("/points/count") and owner.has_collection:
                    self.reply(
                        200, {"result": {"count": owner.chunks}, "status": "ok", "time": 0.0}
                    )
                else:
                    self.reply(
                        404,
                        {
                            "status": {"error": "Not found: Collection `footnote` doesn't exist!"},
                            "time": 0.0,
                        },
                    )

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


@pytest.fixture
def qdrant_standin() -> Iterator[QdrantStandIn]:
    q = QdrantStandIn()
    q.start()
    yield q
    q.stop()


@contextlib.asynccontextmanager
async def ops_server(
    deps, metrics, redis_client, timeout_s: float = 1.0
) -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    """The ops routes on a real loopback port, as the bot's server mounts them."""
    app = web.Application()
    add_ops_routes(app, deps, metrics, redis_client, timeout_s=timeout_s)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with aiohttp.ClientSession() as session:
            yield f"http://127.0.0.1:{port}", session
    finally:
        await runner.cleanup()
