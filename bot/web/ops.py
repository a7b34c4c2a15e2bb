"""Operations routes on the bot's HTTP port: ``/healthz``, ``/readyz``, ``/metrics``.

``/healthz`` says the process is up (the liveness probe: restart me if this fails). ``/readyz``
says this replica can answer — Qdrant answers for the index and Redis answers a ping — so a load
balancer stops sending it traffic while either is away, without restarting it. Each check is
time-bounded; the Qdrant one runs on its own thread so a hung call can never pile up threads or
block the web loop.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Future, ThreadPoolExecutor

import redis.asyncio as aioredis
from aiohttp import web

CHECK_TIMEOUT_S = 1.0
OPS_ROUTES = ("/healthz", "/readyz", "/metrics")  # what probes and scrapers may point at


class ReadinessChecks:
    """Cheap checks of what a replica needs to answer: the index and Redis."""

    def __init__(self, index, redis_client, timeout_s: float = CHECK_TIMEOUT_S):
        self.index, self.redis, self.timeout_s = index, redis_client, timeout_s
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="footnote-readyz")
        self._pending: Future | None = None  # a count still running from an earlier probe

    async def qdrant(self) -> dict:
        """``index.count()`` works for Qdrant Edge and a server alike; it fails if the collection is gone."""
        if self._pending is None or self._pending.done():
            self._pending = self._pool.submit(self.index.count)
        try:
            chunks = await asyncio.wait_for(asyncio.wrap_future(self._pending), self.timeout_s)
        except TimeoutError:
            return {"ok": False, "error": f"no answer within {self.timeout_s}s"}
        except Exception as exc:  # any failure means "not ready"; the type says why
            return {"ok": False, "error": type(exc).__name__}
        return {"ok": True, "chunks": chunks}

    async def redis_ping(self) -> dict:
        """Works with an asyncio or a blocking redis client (the blocking one on a thread)."""
        try:
            if isinstance(self.redis, aioredis.Redis):
                await asyncio.wait_for(self.redis.ping(), self.timeout_s)
            else:
                await asyncio.wait_for(asyncio.to_thread(self.redis.ping), self.timeout_s)
        except TimeoutError:
            return {"ok": False, "error": f"no answer within {self.timeout_s}s"}
        except Exception as exc:
            return {"ok": False, "error": type(exc).__name__}
        return {"ok": True}

    async def run(self) -> dict:
        started = time.perf_counter()
        qdrant, redis = await asyncio.gather(self.qdrant(), self.redis_ping())
        checks = {"qdrant": qdrant, "redis": redis}
        down = [name for name, c in checks.items() if not c["ok"]]
        return {
            "ready": not down,
            "down": down,
            "checks": checks,
            "ms": round((time.perf_counter() - started) * 1000, 1),
        }

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def add_ops_routes(
    app: web.Application, deps, metrics, redis_client, timeout_s: float = CHECK_TIMEOUT_S
) -> None:
    """Mount the three routes; ``/healthz`` only if the server has not mounted its own."""
    checks = ReadinessChecks(deps.index, redis_client, timeout_s)

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def readyz(request: web.Request) -> web.Response:
        body = await checks.run()
        return web.json_response(body, status=200 if body["ready"] else 503)

    async def metrics_route(request: web.Request) -> web.Response:
        body, content_type = metrics.render()
        return web.Response(body=body, headers={"Content-Type": content_type})

    async def close_checks(app: web.Application) -> None:
        checks.close()

    taken = {r.canonical for r in app.router.resources()}
    if "/healthz" not in taken:
        app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_route)
    app.on_cleanup.append(close_checks)
