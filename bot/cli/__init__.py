"""``footnote``: the command line, one module per verb group — ``ingesting`` (ingest),
``sources`` (sources, sync), ``asking`` (search, ask, chat, demo), ``evaluating`` (eval),
``records`` (feedback, report, digest, privacy), ``serving`` (serve, bench) — beside what they
share: ``process`` (the start and end of the process) and ``asker`` (who a command acts as).
The arguments are parsed in ``bot.entry`` (with ``bot.arguments``' parser) before this package
is imported; ``run`` builds the settings once and hands them to the verb. What may live here:
terminal I/O and the wiring of one verb; the work itself belongs to agent/, ingest/ or another
room of bot/."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import threading

from pydantic import ValidationError
from pydantic_settings import SettingsError
from rich.text import Text

from bot import bad_settings
from bot.arguments import build_parser
from bot.chat.terminal import console, plain
from bot.cli.asking import cmd_ask, cmd_chat, cmd_demo, cmd_search
from bot.cli.evaluating import cmd_eval
from bot.cli.ingesting import cmd_ingest
from bot.cli.process import PRELOAD, disk_problem, end_process, set_up_done, stderr
from bot.cli.records import cmd_digest, cmd_feedback, cmd_privacy, cmd_report
from bot.cli.serving import cmd_bench, cmd_serve
from bot.cli.sources import cmd_sources, cmd_sync
from bot.settings import Settings
from ingest.errors import ConfigError, FootnoteError


def main(argv: list[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


# Commands that end the start-up themselves, once their answer loop is built; every other
# command collects garbage from the moment its settings are read.
LATE_SET_UP = ("ask", "chat")


def run(args: argparse.Namespace) -> int:
    """A parsed command, run with the settings built once, here."""
    if not console.is_terminal:
        console.soft_wrap = True  # piped or logged: whole lines, never cut at 80 columns
    try:
        settings = Settings()
    except (ValidationError, SettingsError) as exc:
        for line in bad_settings.describe(exc, Settings):
            stderr.print(Text("configuration error: ", style="red") + plain(line))
        return 2
    if args.command not in LATE_SET_UP:
        set_up_done()
    try:
        return COMMANDS[args.command](args, settings)
    except ConfigError as exc:
        stderr.print(Text("configuration error: ", style="red") + plain(exc))
        return 2
    except FootnoteError as exc:
        stderr.print(Text("error: ", style="red") + plain(exc))
        return 1
    except (OSError, sqlite3.OperationalError) as exc:
        problem = disk_problem(exc, settings.data_dir)
        if problem is None:
            raise
        stderr.print(Text("error: ", style="red") + plain(problem))
        return 1
    except KeyboardInterrupt:
        stderr.print()  # the shell prompt starts on a line of its own
        if getattr(args, "process_ends", False):
            # Ctrl-C ends the process at once, as a kill would (every store here survives one:
            # the tests kill ingests and syncs mid-batch), the command's own clean-up done:
            # neither models still loading in native code nor the tear-down hold it.
            end_process(130)
        if any(t.name == PRELOAD and t.is_alive() for t in threading.enumerate()):
            # A busy machine may still be loading the models, in native code that cannot be
            # interrupted: exit now rather than hold Ctrl-C for the seconds that takes.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
        return 130


COMMANDS = {
    "ingest": cmd_ingest,
    "sources": cmd_sources,
    "sync": cmd_sync,
    "search": cmd_search,
    "ask": cmd_ask,
    "chat": cmd_chat,
    "demo": cmd_demo,
    "eval": cmd_eval,
    "feedback": cmd_feedback,
    "report": cmd_report,
    "digest": cmd_digest,
    "privacy": cmd_privacy,
    "bench": cmd_bench,
    "serve": cmd_serve,
}
