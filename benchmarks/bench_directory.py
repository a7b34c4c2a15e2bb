"""Directory lookups through Microsoft Graph: cold (Graph asked) vs cached (Redis), in one process.

    python -m benchmarks.bench_directory                       # 200 people, loopback Graph
    python -m benchmarks.bench_directory --latency-ms 40       # a real tenant's round trip

Each person is in ``--groups`` groups, half of them through a nested group, read over
``transitiveMemberOf`` pages of ``--page`` groups. A cold lookup is the e-mail query plus every
page of groups; a cached one is one Redis GET (127.0.0.1:6379, keys under a throwaway prefix,
deleted at the end). Prints the median and p95 of each and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

import redis
from pydantic import SecretStr

from bot.identity.directory_cache import CachedDirectory
from bot.identity.graph_directory import GraphDirectory, GraphDirectoryClient
from testing.graph import LoopbackGraph

REDIS_URL = "redis://127.0.0.1:6379/0"


def timed(find, keys: list[str]) -> list[float]:
    out = []
    for key in keys:
        start = time.perf_counter()
        assert find(key) is not None
        out.append((time.perf_counter() - start) * 1000)
    return out


def summary(ms: list[float]) -> tuple[float, float]:
    ms = sorted(ms)
    return statistics.median(ms), ms[int(0.95 * (len(ms) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=200)
    parser.add_argument("--groups", type=int, default=12)
    parser.add_argument("--page", type=int, default=100, help="groups per memberOf page")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to every Graph GET")
    args = parser.parse_args()

    graph = LoopbackGraph(latency_s=args.latency_ms / 1000, member_page_size=args.page).start()
    people = [graph.user(f"person{n}@acme.example") for n in range(args.people)]
    outer = [graph.group(f"Area {g}") for g in range(args.groups // 2)]
    for g in range(args.groups - len(outer)):
        inner = graph.group(f"Team {g}", people)
        if g < len(outer):
            graph.add_member(outer[g], inner)  # nested: members of Team g are in Area g too
    client = GraphDirectoryClient(
        tenant_id=graph.tenant,
        client_id=graph.client_id,
        client_secret=SecretStr(graph.client_secret),
        authority=graph.url,
        graph_url=f"{graph.url}/v1.0",
    )
    prefix = f"footnote-bench-{uuid.uuid4().hex[:8]}:"
    cache = CachedDirectory(GraphDirectory(client), redis.Redis.from_url(REDIS_URL), prefix=prefix)
    keys = [p.mail for p in people]
    try:
        client.token()  # the token once, outside the figures
        before = len(graph.requests)
        cold = timed(cache.find, keys)
        per_cold = (len(graph.requests) - before) / len(keys)
        before = len(graph.requests)
        warm = timed(cache.find, keys)
        assert len(graph.requests) == before, "a cached lookup went to Graph"
    finally:
        keys_left = list(cache.client.scan_iter(match=prefix + "*"))
        if keys_left:
            cache.client.delete(*keys_left)
        cache.close()
        graph.close()
    (c50, c95), (w50, w95) = summary(cold), summary(warm)
    print(
        f"{args.people} people, {args.groups} groups each ({args.groups // 2} nested), "
        f"Graph latency {args.latency_ms:g} ms"
    )
    print(f"cold   (Graph): p50 {c50:7.2f} ms  p95 {c95:7.2f} ms  {per_cold:.1f} requests each")
    print(f"cached (Redis): p50 {w50:7.2f} ms  p95 {w95:7.2f} ms  0 requests")
    print(f"cold / cached:  {c50 / w50:.1f}x at p50, {c95 / w95:.1f}x at p95")


if __name__ == "__main__":
    main()
