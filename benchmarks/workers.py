"""``footnote bench ingest --workers 1,2``: the handbook ingested with each number of worker
processes (``footnote ingest --workers N``), each into a fresh index, in one run.

The handbook is copied ``copies`` times (under other names, so every copy is embedded again) to
give the workers more than a few seconds of work. Models are loaded before the clock starts (in
this process for N=1, in the workers for N>1, timed apart as "start"), so chunks per second is
the steady rate; what a cold ``footnote ingest --workers N`` pays once on top is the start.
CPU-seconds count this process and its workers (Linux: read from /proc).
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bot.app import build_deps
from bot.settings import Settings

HANDBOOK = Path(__file__).resolve().parent.parent / "examples" / "handbook"
console = Console()


def _cpu() -> float:
    """CPU-seconds so far of this process and of its live worker processes (from /proc, so a
    worker's model loading before the clock started is taken off, not counted)."""
    total = time.process_time()
    for child in multiprocessing.active_children():
        try:
            fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    return total


def run(settings: Settings, counts: Sequence[int], copies: int = 3) -> int:
    t = Table(title=f"footnote ingest --workers N: the handbook x{copies}")
    for col in ["workers", "chunks", "start s", "ingest s", "chunks/s", "chunks/CPU-s", "vs first"]:
        t.add_column(col, justify="right")
    with tempfile.TemporaryDirectory(prefix="footnote-bench-workers-") as tmp:
        folder = Path(tmp) / "handbook"
        for k in range(copies):
            shutil.copytree(HANDBOOK, folder / f"copy-{k}")
        first = 0.0
        for i, n in enumerate(counts):  # a count given twice (1,2,2,1) runs twice, afresh
            deps = build_deps(settings.model_copy(update={"data_dir": Path(tmp) / f"data-{i}"}))
            pool = deps.worker_pool(n)
            try:
                started = time.perf_counter()
                if pool is None:
                    for e in deps.embedders:
                        e.embed(["warm up"])
                else:
                    pool.start()
                start_s = time.perf_counter() - started
                deps.ingester.pool = pool
                cpu, began = _cpu(), time.perf_counter()
                report = deps.ingester.ingest(folder)
                seconds, cpu_s = time.perf_counter() - began, _cpu() - cpu
            finally:
                if pool is not None:
                    pool.close()
                deps.close()
            rate = report.chunks / seconds if seconds else 0.0
            first = first or rate
            t.add_row(
                str(n),
                str(report.chunks),
                f"{start_s:.1f}",
                f"{seconds:.1f}",
                f"{rate:.1f}",
                f"{report.chunks / cpu_s:.1f}" if cpu_s else "",
                f"{rate / first:.2f}x",
            )
    console.print(t)
    return 0
