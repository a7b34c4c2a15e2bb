"""A Confluence sync of N pages against the loopback Confluence: wall time and requests.

    python -m benchmarks.bench_sync --pages 1000            # listing and fetching, no index
    python -m benchmarks.bench_sync --pages 50 --index      # through `footnote sync` into the index
    python -m benchmarks.bench_sync --pages 1000 --attachments 200   # and 200 one-page PDFs

Without ``--index`` the pages go to a sink that parses them as the index sink does (HTML parser,
sections) and keeps nothing, so the figures are the connector's: requests, JSON, parsing. With
``--index`` a throwaway data dir is synced by the real CLI, embedding included. Each run does a
first sync, a sync with nothing changed, and one after 2% edited, 1% trashed and 1% restricted;
without ``--index``, then the daily full pass of attachments (a day later on the connector's clock).
"""

from __future__ import annotations

import argparse
import io
import os
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import SecretStr

from ingest.parse import MEDIA_TYPES, parse_bytes
from ingest.sources.confluence import ConfluenceConnector
from ingest.sources.connector import SourceDocument
from ingest.sources.state import SyncState
from ingest.sources.sync import sync
from testing.confluence import LoopbackConfluence

WORDS = [
    "policy",
    "team",
    "expense",
    "travel",
    "report",
    "budget",
    "invoice",
    "customer",
    "contract",
    "renewal",
    "security",
    "laptop",
    "onboarding",
    "manager",
    "approval",
    "holiday",
    "leave",
    "payroll",
    "benefit",
    "insurance",
    "office",
    "remote",
    "meeting",
    "deadline",
    "project",
    "release",
    "server",
    "database",
    "backup",
    "incident",
    "review",
    "training",
    "audit",
    "vendor",
]


class ParseSink:
    """Parses every page as the index sink would, and keeps nothing."""

    def __init__(self) -> None:
        self.sections = 0

    def write(self, source: str, docs: Sequence[SourceDocument]) -> list[tuple[str, str]]:
        for d in docs:
            data = d.content.encode() if isinstance(d.content, str) else d.content
            self.sections += len(
                parse_bytes(data, MEDIA_TYPES.get(d.media_type, ".html"), d.key).sections
            )
        return []

    def delete(self, source: str, keys: Sequence[str]) -> None:
        pass

    def finish(self) -> None:
        pass


def page_body(rng: random.Random, n: int) -> str:
    parts = []
    for s in range(4):
        words = " ".join(rng.choice(WORDS) for _ in range(70))
        parts.append(f"<h2>Section {s + 1} of page {n}</h2><p>{words.capitalize()}.</p>")
    return "".join(parts)


def pdf(rng: random.Random, n: int) -> bytes:
    """A one-page PDF of ~40 lines of words, written by reportlab (a dev dependency)."""
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    c = canvas.Canvas(out)
    for line in range(40):
        c.drawString(72, 760 - 17 * line, " ".join(rng.choice(WORDS) for _ in range(10)))
    c.setTitle(f"Attachment {n}")
    c.showPage()
    c.save()
    return out.getvalue()


def fill(site: LoopbackConfluence, pages: int, attachments: int = 0) -> list[str]:
    rng = random.Random(7)
    site.space("HR", groups=["hr"])
    site.space("ENG", groups=["confluence-users"])
    ids = [site.put("HR" if n % 2 else "ENG", f"Page {n}", page_body(rng, n)) for n in range(pages)]
    for n in range(attachments):  # spread over the pages
        site.attach(ids[n * pages // attachments], f"attachment {n}.pdf", pdf(rng, n))
    return ids


def change(site: LoopbackConfluence, ids: list[str]) -> None:
    n = len(ids)
    for pid in ids[: max(1, n // 50)]:
        site.edit(pid, site.pages[pid].body + "<p>Edited.</p>")
    for pid in ids[-max(1, n // 100) :]:
        site.pages[pid].status = "trashed"
    for pid in ids[n // 2 : n // 2 + max(1, n // 100)]:
        site.restrict(pid, groups=["leads"])


def without_index(pages: int, attachments: int) -> None:
    site = LoopbackConfluence().start()
    ids = fill(site, pages, attachments)
    now = [time.time()]
    with tempfile.TemporaryDirectory() as tmp:
        state = SyncState.sqlite(Path(tmp) / "state.db")
        state.add_source("wiki", "confluence", {})
        print(f"{pages} pages of four ~70-word sections, {attachments} PDFs, two spaces, no index")
        print("| sync | wall | CPU | requests | written | unchanged | deleted | attachments |")
        print("|---|---|---|---|---|---|---|---|")
        labels = ["first", "nothing changed", "2% edited, 1% trashed, 1% restricted"]
        for label in labels + ["a day later (full pass)"] * bool(attachments):
            if label.startswith("2%"):
                change(site, ids)
            if label.startswith("a day"):
                now[0] += 86400
            conn = ConfluenceConnector(
                site=site.url,
                spaces=("HR", "ENG"),
                email=site.email,
                token=SecretStr(site.token),
                clock=lambda: now[0],
            )
            wall, cpu = time.perf_counter(), time.process_time()
            report = sync("wiki", state, conn, ParseSink())
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(
                f"| {label} | {wall:.2f} s | {cpu:.2f} s | {conn.requests} | "
                f"{len(report.written)} | {len(report.unchanged)} | {len(report.deleted)} | "
                f"{conn.summary().removeprefix('attachments: ')} |"
            )
            conn.close()
        state.close()
    site.close()


def with_index(pages: int, attachments: int) -> None:
    from bot.cli import main as cli_main

    site = LoopbackConfluence().start()
    ids = fill(site, pages, attachments)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            {
                "FOOTNOTE_DATA_DIR": tmp,
                "FOOTNOTE_CONFLUENCE__EMAIL": site.email,
                "FOOTNOTE_CONFLUENCE__API_TOKEN": site.token,
            }
        )
        add = ["sources", "add", "confluence", "--url", site.url, "--name", "wiki"]
        assert cli_main([*add, "--space", "HR", "--space", "ENG"]) == 0
        print(f"`footnote sync`, {pages} pages and {attachments} PDFs into Qdrant Edge")
        for label in ("first", "nothing changed", "2% edited, 1% trashed, 1% restricted"):
            if label.startswith("2%"):
                change(site, ids)
            before = len(site.requests)
            wall, cpu = time.perf_counter(), time.process_time()
            cli_main(["sync"])
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(
                f"| {label} | {wall:.1f} s | {cpu:.1f} s | {len(site.requests) - before} requests |"
            )
    site.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--attachments", type=int, default=0, help="PDFs spread over the pages")
    parser.add_argument("--index", action="store_true", help="through footnote sync, embedding")
    args = parser.parse_args()
    (with_index if args.index else without_index)(args.pages, args.attachments)


if __name__ == "__main__":
    main()
