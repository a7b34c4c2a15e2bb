"""What every loopback fake shares: an aiohttp app on 127.0.0.1 at a free port, and a record of
the calls it received that a test or a benchmark can wait on."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from aiohttp import web


def send_json(
    handler: BaseHTTPRequestHandler,
    status: int,
    payload: object,
    content_type: str = "application/json",
) -> None:
    """A JSON reply from a ``http.server`` handler (the fakes that run outside asyncio)."""
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


async def start_app(app: web.Application) -> tuple[web.AppRunner, str]:
    """Serve an aiohttp app on 127.0.0.1 at a free port; returns the runner and its base URL."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    return runner, f"http://{host}:{port}"


@dataclass
class Call:
    method: str
    args: dict
    at: float = field(default_factory=time.perf_counter)
    result: dict = field(default_factory=dict)


class Recorder:
    """A loopback service that records every call; ``wait_for`` awaits the calls a test expects."""

    def __init__(self):
        self.calls: list[Call] = []
        self._changed = asyncio.Condition()
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def _record(self, call: Call) -> None:
        async with self._changed:
            self.calls.append(call)
            self._changed.notify_all()

    async def wait_for(self, predicate, timeout: float = 30.0):
        """Wait until ``predicate(calls)`` is truthy; returns its value."""

        async def _wait():
            async with self._changed:
                while not (result := predicate(self.calls)):
                    await self._changed.wait()
                return result

        return await asyncio.wait_for(_wait(), timeout)

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
