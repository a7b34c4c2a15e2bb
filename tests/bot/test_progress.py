"""The progress of an ingest or a sync: a bar with chunks/s and time left on a terminal, plain
lines when the output is a pipe or a log."""

from __future__ import annotations

import io

from rich.console import Console

from bot.progress import IngestProgress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run(console: Console, total: int | None, docs: int, chunks_each: int = 10) -> None:
    """``docs`` documents of ``chunks_each`` chunks, one per second, on a fake clock."""
    clock, written = Clock(), [500]  # the ingester's counter does not start at 0
    with IngestProgress(console, "indexing", total, lambda: written[0], clock=clock) as progress:
        for i in range(docs):
            clock.now += 1.0
            written[0] += chunks_each
            progress.advance(f"hr/doc-{i}.md", "added")
        progress.advance("hr/gone.md", "deleted")  # not one of the documents counted


def test_piped_it_prints_a_plain_line_per_tenth_with_chunks_per_second_and_time_left():
    out = io.StringIO()
    run(Console(file=out, force_terminal=False, width=80), total=20, docs=20)
    lines = out.getvalue().splitlines()
    assert len(lines) == 10  # every second document, the last one included
    assert lines[0] == "indexing 2/20 documents · 20 chunks · 10.0 chunks/s · about 18 s left"
    assert lines[-1] == "indexing 20/20 documents · 200 chunks · 10.0 chunks/s · about 0 s left"
    assert "\r" not in out.getvalue() and "\x1b[" not in out.getvalue()  # nothing redrawn


def test_piped_with_no_total_it_says_so_at_once_and_then_every_so_many_documents():
    out = io.StringIO()
    run(Console(file=out, force_terminal=False, width=80), total=None, docs=60)
    lines = out.getvalue().splitlines()
    assert lines == [
        "indexing 1 documents · 10 chunks · 10.0 chunks/s",
        "indexing 26 documents · 260 chunks · 10.0 chunks/s",
        "indexing 51 documents · 510 chunks · 10.0 chunks/s",
    ]


def test_on_a_terminal_it_draws_a_bar_with_chunks_per_second_and_time_left_then_clears_it():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=140, color_system=None)
    clock, written = Clock(), [0]
    progress = IngestProgress(console, "indexing", 4, lambda: written[0], clock=clock)
    with progress:
        for i in range(2):
            clock.now += 1.0
            written[0] += 15
            progress.advance(f"hr/doc-{i}.md", "added")
        progress._bar.refresh()  # type: ignore[union-attr]  # draw now, not on the timer
        drawn = out.getvalue()
    assert "indexing" in drawn and "2/4" in drawn and "30 chunks · 15.0 chunks/s" in drawn
    assert "hr/doc-1.md" in drawn and "━" in drawn  # the file at hand, and the bar
    assert "0:00:02" in drawn  # two documents left at one a second
    assert "documents · " not in drawn  # no plain lines on a terminal
