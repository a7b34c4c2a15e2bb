"""A SharePoint sync of N files against the loopback Microsoft Graph: wall time and requests.

    python -m benchmarks.bench_sharepoint --files 200            # listing and fetching, no index
    python -m benchmarks.bench_sharepoint --latency-ms 30 --concurrency 1   # a round trip per GET
    python -m benchmarks.bench_sharepoint --files 50 --index     # through `footnote sync`

Without ``--index`` the files go to a sink that parses them as the index sink does and keeps
nothing, so the figures are the connector's: requests, JSON, parsing. With ``--index`` a
throwaway data dir is synced by the real CLI, embedding included. Each run does a first sync, a
sync with nothing changed, and one after 2% edited, 1% deleted and 1% shared differently.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

from pydantic import SecretStr

from benchmarks.bench_sync import ParseSink, page_body
from ingest.sources.sharepoint import SharePointConnector
from ingest.sources.state import SyncState
from ingest.sources.sync import sync
from testing.graph import FakeDrive, LoopbackGraph, entra_group, granted, link

LABELS = ("first", "nothing changed", "2% edited, 1% deleted, 1% shared differently")


def fill(graph: LoopbackGraph, files: int) -> tuple[FakeDrive, list[str], str]:
    rng = random.Random(7)
    site = graph.site("acme.sharepoint.com", "/sites/Support")
    docs = graph.drives[site.drives[0]]
    graph.share(docs, docs.root, [granted(entra_group("g-support"))])
    folders = [graph.folder(docs, f"Team {n}") for n in range(4)]
    ids = [
        graph.put(
            docs,
            f"Page {n}.html",
            f"<html><head><title>Page {n}</title></head><body>{page_body(rng, n)}</body></html>",
            parent=folders[n % 4],
        )
        for n in range(files)
    ]
    return docs, ids, site.web_url


def change(graph: LoopbackGraph, docs: FakeDrive, ids: list[str]) -> None:
    n = len(ids)
    for item in ids[: max(1, n // 50)]:
        graph.edit(docs, item, docs.items[item].content + b"<p>Edited.</p>")
    for item in ids[-max(1, n // 100) :]:
        graph.delete(docs, item)
    for item in ids[n // 2 : n // 2 + max(1, n // 100)]:
        graph.share(docs, item, [link("organization")])


def without_index(files: int, latency_ms: float, concurrency: int) -> None:
    graph = LoopbackGraph().start()
    docs, ids, site = fill(graph, files)
    graph.latency_s = latency_ms / 1000
    with tempfile.TemporaryDirectory() as tmp:
        state = SyncState.sqlite(Path(tmp) / "state.db")
        state.add_source("sp", "sharepoint", {})
        print(
            f"{files} files of four ~70-word sections in four folders, no index, "
            f"{latency_ms:g} ms a GET, {concurrency} at a time"
        )
        print("| sync | wall | CPU | requests | written | unchanged | deleted |")
        print("|---|---|---|---|---|---|---|")
        for label in LABELS:
            if label.startswith("2%"):
                change(graph, docs, ids)
            conn = SharePointConnector(
                tenant_id=graph.tenant,
                client_id=graph.client_id,
                client_secret=SecretStr(graph.client_secret),
                site=site,
                authority=graph.url,
                graph_url=f"{graph.url}/v1.0",
                concurrency=concurrency,
            )
            wall, cpu = time.perf_counter(), time.process_time()
            report = sync("sp", state, conn, ParseSink())
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(
                f"| {label} | {wall:.2f} s | {cpu:.2f} s | {conn.requests} | "
                f"{len(report.written)} | {len(report.unchanged)} | {len(report.deleted)} |"
            )
            conn.close()
        state.close()
    graph.close()


def with_index(files: int) -> None:
    from bot.cli import main as cli_main

    graph = LoopbackGraph().start()
    docs, ids, site = fill(graph, files)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            {
                "FOOTNOTE_DATA_DIR": tmp,
                "FOOTNOTE_GRAPH__TENANT_ID": graph.tenant,
                "FOOTNOTE_GRAPH__CLIENT_ID": graph.client_id,
                "FOOTNOTE_GRAPH__CLIENT_SECRET": graph.client_secret,
                "FOOTNOTE_GRAPH__AUTHORITY": graph.url,
                "FOOTNOTE_GRAPH__URL": f"{graph.url}/v1.0",
            }
        )
        assert cli_main(["sources", "add", "sharepoint", "--site", site, "--name", "sp"]) == 0
        print(f"`footnote sync`, {files} files into Qdrant Edge")
        for label in LABELS:
            if label.startswith("2%"):
                change(graph, docs, ids)
            before = len(graph.requests)
            wall, cpu = time.perf_counter(), time.process_time()
            cli_main(["sync"])
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            made = len(graph.requests) - before
            print(f"| {label} | {wall:.1f} s | {cpu:.1f} s | {made} requests |")
    graph.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--index", action="store_true", help="through footnote sync, embedding")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to every GET")
    parser.add_argument("--concurrency", type=int, default=4, help="files fetched at once")
    args = parser.parse_args()
    if args.index:
        with_index(args.files)
    else:
        without_index(args.files, args.latency_ms, args.concurrency)


if __name__ == "__main__":
    main()
