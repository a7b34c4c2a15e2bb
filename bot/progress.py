"""How far an ingest or a sync has got: a bar on a terminal, plain lines in a log.

On a terminal: documents done of all, chunks written, chunks per second and the time left (when
the total is known: a folder's files are; a source's changes arrive in batches nobody counted
beforehand), the bar cleared when done. Piped or logged: one line per tenth of the documents (or
at the first and then per ``every`` documents when there is no total), nothing redrawn.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)

from bot.chat.terminal import plain


class IngestProgress:
    """Pass ``advance`` as ``on_file``; ``chunks`` reads how many chunks are written so far."""

    def __init__(
        self,
        console: Console,
        what: str,
        total: int | None,
        chunks: Callable[[], int],
        every: int = 25,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.console, self.what, self.total = console, what, total
        self._chunks, self._clock, self.every = chunks, clock, every
        self._first_chunks = chunks()
        self._started = clock()
        self.done = 0
        self._next_line = self._step() if total else 1  # no total: a first line at once
        self._bar: Progress | None = None
        if console.is_terminal:
            self._bar = Progress(
                TextColumn(f"[bold]{what}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                TextColumn("{task.description}"),
                console=console,
                transient=True,
                get_time=clock,
            )
            self._task = self._bar.add_task("", total=total, rate="")

    def __enter__(self) -> IngestProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    @property
    def chunks(self) -> int:
        return self._chunks() - self._first_chunks

    def rate(self) -> float:
        """Chunks written per second since the start."""
        elapsed = self._clock() - self._started
        return self.chunks / elapsed if elapsed > 0 else 0.0

    def seconds_left(self) -> float | None:
        if not self.total or not self.done:
            return None
        elapsed = self._clock() - self._started
        return elapsed / self.done * max(self.total - self.done, 0)

    def advance(self, doc_id: str, status: str) -> None:
        if status == "deleted":  # not one of the documents counted in the total
            return
        self.done += 1
        if self._bar is not None:
            rate = f"{self.chunks} chunks · {self.rate():.1f} chunks/s"
            self._bar.update(self._task, advance=1, description=doc_id, rate=rate)
            return
        if self.done >= self._next_line or self.done == self.total:
            self._next_line = self.done + self._step()
            self.console.print(plain(self.line()), highlight=False)

    def line(self) -> str:
        of = f"/{self.total}" if self.total else ""
        left = self.seconds_left()
        text = (
            f"{self.what} {self.done}{of} documents · {self.chunks} chunks · "
            f"{self.rate():.1f} chunks/s"
        )
        return text + (f" · about {left:.0f} s left" if left is not None else "")

    def _step(self) -> int:
        return max(1, -(-self.total // 10)) if self.total else self.every
