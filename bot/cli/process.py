"""The process a command runs in: garbage collection during the start, the models preloaded on
threads of their own, a one-shot command's quick end, the disk problems told as one line, and
stderr, where errors and notices go."""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import sqlite3
import sys
import threading
from pathlib import Path
from typing import NoReturn

from rich.console import Console

from ingest.database import disk_fault

# Errors and notices go to stderr, so `ask --json` and `search | grep` read only results; they
# never wrap (a terminal wraps them itself, a log keeps one line per message).
stderr = Console(stderr=True, soft_wrap=True)


def set_up_done() -> None:
    """The start-up is over: what it made stays for the life of the process, so the collector
    leaves it out from now on (``gc.freeze``) and collects what comes after as usual. A no-op
    unless ``bot.entry.main`` turned the collector off (a test that calls ``run`` never
    freezes its own objects)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def end_process(code: int) -> NoReturn:
    """End a one-shot command's process now, its output printed and its records written (traces
    and tickets commit as they are made; ``Deps.close`` flushed the spans). The interpreter's
    own tear-down would free the start's objects and the models one by one (~0.1 s), and
    closing Qdrant Edge rewrites its segment files and drops them from the page cache, so the
    next start would read the index back from disk (~0.1 s at each end)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that went away: nothing to do
            stream.flush()
    os._exit(code)


PRELOAD = "preload"  # the name of the threads that load the models ahead of the first question


def preload_models(deps, answer_model: bool = True) -> None:
    """Start loading the embedding models, each on a thread of its own, before the index opens
    and while this thread builds the answer loop: the loads run mostly in native code (OpenVINO
    reading a compiled model back from the cache, SentencePiece, the mapped USE arrays), so on
    two cores they overlap the index and the imports instead of following them, most of a
    one-shot ``ask``'s wall time. Each thread also encodes a word, so the first question meets
    warm models. Only what ``deps.embedders`` holds is loaded: nothing the command does not use.

    ``answer_model``: also the answer model's cross-encoder. A one-shot ``ask`` leaves it to load
    where it is read: the offline reasoner consults it only for what its rules refuse
    (``agent.answers.Opinion``), and loading it beside the embedders cost every ``ask`` ~0.14 s
    wall (0.2 CPU-s, two AVX2-capped cores), where a question that reads it pays ~0.15 s then.
    ``chat`` and ``eval`` keep it: their questions should meet a warm model.

    Not daemons: a daemon thread still in the models' native code when the interpreter shuts
    down aborts the process. Ctrl-C during the load ends the process without waiting (``main``)."""
    for warm in deps.warmers(answer_model):
        threading.Thread(target=warm, name=PRELOAD).start()


# The errors of a disk that cannot take a write: full, read-only, over quota, not ours.
_DISK_ERRNOS = {
    errno.ENOSPC: "is full",
    errno.EDQUOT: "is over its quota",
    errno.EROFS: "is read-only",
    errno.EACCES: "is not writable by this user",
    errno.EPERM: "is not writable by this user",
}


def disk_problem(exc: OSError | sqlite3.OperationalError, data_dir: Path) -> str | None:
    """One line naming the folder a write failed in and the fix, or None for other errors."""
    if isinstance(exc, sqlite3.OperationalError):
        return disk_fault(exc, data_dir)
    reason = _DISK_ERRNOS.get(exc.errno or -1)
    if reason is None:
        return None
    where = Path(exc.filename).parent if exc.filename else data_dir
    return (
        f"cannot write in {where}: the folder {reason} ({exc.strerror}); free space there or "
        "make it writable, or set FOOTNOTE_DATA_DIR to a folder that is"
    )
