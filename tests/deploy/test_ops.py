"""``/readyz`` follows Redis and Qdrant going away and coming back; ``/healthz`` never does.

Redis is a real redis-server this test starts on its own port and kills. Qdrant is the product's
``ServerIndex`` (qdrant-client) talking to a stand-in HTTP server that speaks Qdrant's REST wire
format for the calls readiness makes (no Qdrant server binary is installable here).
"""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

import pytest
import redis
import redis.asyncio as aioredis
from aiohttp import web

from agent.telemetry import Metrics
from bot.web.ops import OPS_ROUTES, add_ops_routes
from ingest.server_index import ServerIndex
from tests.deploy.conftest import ops_server


async def wait_for_status(session, url: str, want: int, within_s: float = 10.0) -> dict:
    deadline = time.monotonic() + within_s
    while True:
        async with session.get(url + "/readyz") as resp:
            body = await resp.json()
            if resp.status == want:
                return body
        if time.monotonic() > deadline:
            raise AssertionError(f"/readyz stayed {resp.status} (wanted {want}): {body}")
        await asyncio.sleep(0.1)


def redis_client(url: str) -> aioredis.Redis:
    return aioredis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=1.0)


async def test_readyz_follows_redis_down_and_back(handbook_deps, redis_process):
    client = redis_client(redis_process.url)
    async with ops_server(handbook_deps, Metrics(), client) as (url, session):
        body = await wait_for_status(session, url, 200)
        assert body["checks"]["qdrant"]["chunks"] == handbook_deps.index.count() > 0
        redis_process.stop()
        body = await wait_for_status(session, url, 503)
        assert body["down"] == ["redis"] and body["checks"]["qdrant"]["ok"]
        async with session.get(url + "/healthz") as resp:
            assert resp.status == 200  # alive: the orchestrator must not restart it for this
        redis_process.start()
        await wait_for_status(session, url, 200)
    await client.aclose()


# qdrant-client checks the server version on a background thread, which may run while the stand-in is down.
@pytest.mark.filterwarnings("ignore:Failed to obtain server version")
async def test_readyz_follows_qdrant_down_and_back(qdrant_standin, redis_process):
    index = ServerIndex.connect(qdrant_standin.url, None, "footnote", {"minilm": 384})
    deps = SimpleNamespace(index=index)
    client = redis_client(redis_process.url)
    async with ops_server(deps, Metrics(), client) as (url, session):
        body = await wait_for_status(session, url, 200)
        assert body["checks"]["qdrant"] == {"ok": True, "chunks": 42}
        qdrant_standin.stop()
        body = await wait_for_status(session, url, 503)
        assert body["down"] == ["qdrant"] and body["checks"]["redis"]["ok"]
        qdrant_standin.start()
        await wait_for_status(session, url, 200)
        qdrant_standin.has_collection = False  # reachable, but the index is gone
        body = await wait_for_status(session, url, 503)
        assert body["down"] == ["qdrant"]
        qdrant_standin.has_collection = True
        await wait_for_status(session, url, 200)
    await client.aclose()
    index.close()


class HungIndex:
    """An index whose count blocks until the test releases it: hung for as long as the test
    needs, however slow the machine, instead of for a fixed time that a loaded machine outlasts."""

    def __init__(self):
        self.calls = 0
        self.release = threading.Event()

    def count(self) -> int:
        self.calls += 1
        self.release.wait()
        return 1


async def test_a_hung_index_is_not_ready_within_the_timeout_and_piles_up_no_threads(redis_process):
    index = HungIndex()
    client = redis_client(redis_process.url)
    try:
        async with ops_server(SimpleNamespace(index=index), Metrics(), client, timeout_s=0.2) as (
            url,
            session,
        ):
            for _ in range(3):
                # the count never returns: a probe that waited on it would never answer
                async with asyncio.timeout(30), session.get(url + "/readyz") as resp:
                    assert resp.status == 503 and "qdrant" in (await resp.json())["down"]
            assert index.calls == 1  # later probes waited on the same call instead of starting more
    finally:
        index.release.set()
    await client.aclose()


async def test_readyz_accepts_a_blocking_redis_client(handbook_deps, redis_process):
    client = redis.Redis.from_url(redis_process.url, socket_connect_timeout=0.5, socket_timeout=1.0)
    async with ops_server(handbook_deps, Metrics(), client) as (url, session):
        await wait_for_status(session, url, 200)
        redis_process.stop()
        await wait_for_status(session, url, 503)
    client.close()


def test_ops_routes_leave_an_existing_healthz_alone():
    app = web.Application()

    async def server_healthz(request):
        return web.json_response({"status": "ok", "slack": False})

    app.router.add_get("/healthz", server_healthz)
    add_ops_routes(app, SimpleNamespace(index=None), Metrics(), None)
    paths = [r.canonical for r in app.router.resources()]
    assert sorted(paths) == sorted(OPS_ROUTES)
