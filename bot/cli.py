"""``footnote``: ingest, sources, sync, search, ask, chat, eval, feedback, report, privacy, serve,
bench — one entry point, settings built here. The arguments are parsed in ``bot.arguments``,
before this module is imported."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import gc
import os
import re
import sqlite3
import sys
import threading
from functools import partial
from pathlib import Path
from typing import NoReturn

from pydantic import ValidationError
from pydantic_settings import SettingsError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.style import Style
from rich.text import Text

from agent.corpora import DATASETS as CORPORA
from bot import bad_settings
from bot.arguments import DEMO_USER, build_parser
from bot.directory import Person
from bot.progress import IngestProgress
from bot.settings import HANDBOOK_DIRECTORY, Settings
from bot.terminal import TerminalChat, console, plain, read_line, safe
from ingest.database import disk_fault
from ingest.errors import ConfigError, FootnoteError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
INGEST_CODE = Path(__file__).resolve().parent.parent / "ingest"  # its modules shape an index
# Errors and notices go to stderr, so `ask --json` and `search | grep` read only results; they
# never wrap (a terminal wraps them itself, a log keeps one line per message).
stderr = Console(stderr=True, soft_wrap=True)


class NothingIngested(FootnoteError):
    """Asked before any document is in the index: the answer would be a silent "I don't know"."""


def main(argv: list[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


# Commands that end the start-up themselves, once their answer loop is built; every other
# command collects garbage from the moment its settings are read.
LATE_SET_UP = ("ask", "chat")


def set_up_done() -> None:
    """The start-up is over: what it made stays for the life of the process, so the collector
    leaves it out from now on (``gc.freeze``) and collects what comes after as usual. A no-op
    unless ``bot.arguments.main`` turned the collector off (a test that calls ``run`` never
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


def person_for(args, deps, announce: bool = True) -> Person:
    """Who a command acts as, said on stderr. Without ``--user`` that is the demo's user, and
    only while the sample directory is in use: with a company's directory nobody is assumed."""
    directory_file = deps.settings.directory_file
    source = deps.settings.directory_source
    where = {
        "file": f"{directory_file} (FOOTNOTE_DIRECTORY_FILE)",
        "scim": "what the identity provider pushed over SCIM (their userName or e-mail)",
        "graph": "Microsoft Entra ID (their e-mail, user principal name or object id)",
    }[source]
    name = args.user
    if name is None:
        if source != "file" or Path(directory_file).resolve() != HANDBOOK_DIRECTORY.resolve():
            raise ConfigError(f"say who is asking: pass --user NAME, a user in {where}")
        name = DEMO_USER
    person = deps.directory.find(name)
    if person is None:
        raise ConfigError(f"unknown user {name!r}; pass --user with someone in {where}")
    if announce:
        stderr.print(plain(f"acting as {who(person)}{other_user_hint(args)}", "dim"))
    return person


def who(person: Person) -> str:
    return f"{person.user_id} ({person.name} · {', '.join(person.groups) or 'no groups'})"


def other_user_hint(args) -> str:
    return "" if args.user else "; --user NAME acts as someone else"


def groups_for(args, deps) -> list[str]:
    if getattr(args, "groups", None):
        return [g.strip() for g in args.groups.split(",") if g.strip()]
    return list(person_for(args, deps).principals)


def require_documents(deps) -> None:
    """Stop before a question meets an empty index, which can only answer "I don't know"."""
    if not deps.index.count():
        s = deps.settings
        where = f"{s.qdrant.url} collection {s.qdrant.collection}" if s.qdrant.url else s.index_dir
        raise NothingIngested(
            f"nothing is ingested yet: run footnote ingest {shown(EXAMPLES / 'handbook')} "
            f"(the sample handbook) or footnote ingest YOUR_FOLDER (the index: {where})"
        )


PRELOAD = "preload"  # the name of the threads that load the models ahead of the first question


def preload_models(deps) -> None:
    """Start loading the embedding models, each on a thread of its own, before the index opens
    and while this thread builds the answer loop: the loads run mostly in native code (OpenVINO
    reading a compiled model back from the cache, SentencePiece, the mapped USE arrays), so on
    two cores they overlap the index and the imports instead of following them, most of a
    one-shot ``ask``'s wall time. Each thread also encodes a word, so the first question meets
    warm models. Only what ``deps.embedders`` holds is loaded: nothing the command does not use.

    Not daemons: a daemon thread still in the models' native code when the interpreter shuts
    down aborts the process. Ctrl-C during the load ends the process without waiting (``main``)."""
    for embedder in deps.embedders:
        threading.Thread(
            target=embedder.embed, args=(["warm up"],), kwargs={"kind": "query"}, name=PRELOAD
        ).start()
    cross = deps.answer_model.cross  # the offline reasoner's, there with an LLM too
    if cross is not None:
        threading.Thread(target=cross.warm, name=PRELOAD).start()


def shown(path: Path) -> str:
    """A path as typed from here: relative under the current folder, absolute elsewhere."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def cmd_ingest(args, settings: Settings) -> int:
    from bot.app import build_deps

    if not args.folder.is_dir():
        raise ConfigError(f"{args.folder} is not a folder")
    if args.collection:
        settings = settings.model_copy(
            update={"qdrant": settings.qdrant.model_copy(update={"collection": args.collection})}
        )
    deps = build_deps(settings)
    default_acl = (
        None if args.acl is None else [g.strip() for g in args.acl.split(",") if g.strip()]
    )
    deps.ingester.pool = deps.worker_pool(args.workers)
    try:
        report = run_ingest(deps, args.folder, default_acl)
    finally:
        if deps.ingester.pool is not None:
            deps.ingester.pool.close()
    deps.telemetry.ingest(report)
    deps.close()
    return 1 if report.failed else 0


def run_ingest(deps, folder: Path, default_acl: list[str] | None, files: list[Path] | None = None):
    """Ingest the folder (or only ``files`` of it) with a progress bar, and say what changed."""
    ingester = deps.ingester
    chosen = files if files is not None else ingester.scan(folder.resolve())
    progress = IngestProgress(console, "indexing", len(chosen), lambda: ingester.chunks_written)
    with progress:
        report = ingester.ingest(folder, default_acl, on_file=progress.advance, files=files)
    for doc_id, reason in report.failed:
        console.print(Text("skipped ", style="yellow") + plain(f"{doc_id}: {reason}"))
    relabelled = (
        f"readers changed {len(report.readers_changed)} · " if report.readers_changed else ""
    )
    console.print(
        f"added {len(report.added)} · updated {len(report.updated)} · {relabelled}"
        f"unchanged {len(report.unchanged)} · "
        f"deleted {len(report.deleted)} · failed {len(report.failed)}  "
        f"({report.chunks} chunks in {report.seconds:.1f}s, {report.chunks_per_s:.0f} chunks/s)"
    )
    if report.admins_only:
        unruled, of = len(report.admins_only), len(chosen)
        console.print(
            Text(
                f"{unruled} of {of} file{'s' if of != 1 else ''} "
                f"{'have' if unruled != 1 else 'has'} no access rule: only admins can read "
                f"{'them' if unruled != 1 else 'it'} — add `--acl GROUPS` or an `_access.yaml`",
                style="yellow",
            )
        )
    return report


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


def open_state(settings: Settings):
    # Imported here: `footnote ask` never opens the sync state.
    from ingest.sources.state import SyncState

    return SyncState.open(settings.database, settings.data_dir)


def cmd_sources(args, settings: Settings) -> int:
    state = open_state(settings)
    try:
        if args.action == "add":
            return add_source(args, state, settings)
        print_sources(state.sources())
    finally:
        state.close()
    return 0


def add_source(args, state, settings: Settings) -> int:
    import re
    from urllib.parse import urlsplit

    if args.kind == "sharepoint":
        from ingest.sources.sharepoint import SharePointConnector

        config = SharePointConnector.config(
            args.site,
            args.drive,
            args.drive_id,
            args.group_map,
            args.full_every_days,
            args.concurrency,
        )
        site_name = urlsplit(config["site"]).path.rstrip("/").rsplit("/", 1)[-1]
        name = args.name or site_name or (urlsplit(config["site"]).hostname or "sharepoint")
        readers = "each file's SharePoint permissions (sharing links and inherited ones too)"
    elif args.kind == "gdrive":
        from ingest.sources.gdrive import DriveClient, GoogleDriveConnector

        drive = DriveClient.from_settings(settings.gdrive)  # resolves the name now: typos stop
        try:
            config = GoogleDriveConnector.config(
                drive, args.shared_drive, args.folder, args.domain or ()
            )
        finally:
            drive.close()
        name = args.name or re.sub(r"[^\w.-]+", "-", config["name"]).strip("-") or "gdrive"
        readers = (
            "each file's Drive sharing (people, groups, shared-drive members; "
            f"{', '.join(config['domains'])} and anyone-with-the-link as every member)"
        )
    elif args.kind == "confluence":
        from ingest.sources.confluence import ConfluenceConnector

        config = ConfluenceConnector.config(
            args.url, args.space, args.group_map, args.everyone_group or ("confluence-users",)
        )
        name = args.name or (urlsplit(config["url"]).hostname or "confluence")
        readers = "each page's Confluence readers (restrictions, else the space's permissions)"
    else:
        from ingest.sources.web import WebConnector

        config = WebConnector.config(args.sitemap, [a for a in args.acl.split(",") if a.strip()])
        name = args.name or (urlsplit(args.sitemap).hostname or "web")
        readers = ", ".join(config["acl"]) or "admins only (no --acl given)"
    if not re.fullmatch(r"[\w.-]+", name):
        raise ConfigError(f"--name {name!r}: use letters, digits, '.', '-' or '_'")
    state.add_source(name, args.kind, config)
    console.print(plain(f"added {args.kind} source {name}, readable by {readers}"))
    creds = settings.confluence
    if args.kind == "confluence" and not (creds and creds.email and creds.api_token):
        console.print(
            plain(
                "before syncing, set FOOTNOTE_CONFLUENCE__EMAIL and FOOTNOTE_CONFLUENCE__API_TOKEN "
                "(kept in the environment, never stored with the source)",
                "dim",
            )
        )
    graph = settings.graph
    if args.kind == "sharepoint" and not (
        graph and graph.tenant_id and graph.client_id and graph.client_secret
    ):
        console.print(
            plain(
                "before syncing, set FOOTNOTE_GRAPH__TENANT_ID, FOOTNOTE_GRAPH__CLIENT_ID and "
                "FOOTNOTE_GRAPH__CLIENT_SECRET (an Entra ID app registration; kept in the "
                "environment, never stored with the source)",
                "dim",
            )
        )
    console.print(plain(f"next: footnote sync --source {name}", "dim"))
    return 0


def print_sources(records) -> None:
    from rich.table import Table

    from ingest.sources.state import now

    if not records:
        console.print(plain("no sources yet: footnote sources add web --sitemap URL"))
        return
    table = Table("source", "kind", "documents", "last sync", "cursor age", "errors")
    for r in records:
        error = f"{r.errors} · {r.last_error}" if r.last_error else str(r.errors)
        table.add_row(
            safe(r.name),
            r.kind,
            str(r.documents),
            r.last_sync or "never",
            age(r.cursor_at, now()) if r.cursor_at else "—",
            safe(error),
        )
    console.print(table)


def age(then: str, now: str) -> str:
    """How long ago ``then`` was, in the two largest units: ``1h 30m``, ``2d 4h``."""
    import datetime as dt

    seconds = int(
        (dt.datetime.fromisoformat(now) - dt.datetime.fromisoformat(then)).total_seconds()
    )
    if seconds < 3600:
        return f"{seconds // 60}m" if seconds >= 60 else f"{seconds}s"
    if seconds < 86400:
        return f"{seconds // 3600}h {seconds // 60 % 60}m"
    return f"{seconds // 86400}d {seconds // 3600 % 24}h"


def cmd_sync(args, settings: Settings) -> int:
    from bot.app import build_deps
    from ingest.sources.connector import ConnectorEnv
    from ingest.sources.sync import IndexSink, Shard, open_connector, sync

    shard = Shard.parse(args.shard) if args.shard else None
    if shard is not None and shard.count > 1 and not settings.qdrant.url:
        raise ConfigError(
            "--shard splits a sync over several processes writing one index: that needs a Qdrant "
            "server (set FOOTNOTE_QDRANT__URL); Qdrant Edge opens its folder in one process only "
            "(use --workers N there)"
        )
    if shard is not None and shard.count > 1 and not settings.database.url:
        raise ConfigError(
            "--shard needs the sync state every shard shares: set FOOTNOTE_DATABASE__URL to a "
            "PostgreSQL database (postgresql://user:password@host:5432/db)"
        )
    state = open_state(settings)
    deps = build_deps(settings)
    pool = None
    try:
        names = [args.source] if args.source else [r.name for r in state.sources()]
        if not names:
            raise ConfigError("no sources to sync: footnote sources add web --sitemap URL")
        pool = deps.ingester.pool = deps.worker_pool(args.workers)
        sink = IndexSink(deps.ingester, settings.admin_groups)
        env = ConnectorEnv(
            int(settings.ingest.max_file_mb * 2**20),
            max_expanded_bytes=int(settings.ingest.max_expanded_mb * 2**20),
            fetch_timeout_s=settings.ingest.fetch_timeout_s,
            confluence=settings.confluence,
            graph=settings.graph,
            gdrive=settings.gdrive,
        )
        status = 0
        for name in names:
            record = state.source(name)
            if record is None:
                raise ConfigError(f"no source named {name!r}; see footnote sources list")
            try:
                connector = open_connector(record.kind, record.config, env)
            except ConfigError as exc:
                stderr.print(Text("configuration error: ", style="red") + plain(f"{name}: {exc}"))
                status = 2
                continue
            try:
                progress = IngestProgress(
                    console, f"syncing {name}", None, lambda: deps.ingester.chunks_written
                )
                sink.on_file = progress.advance
                with progress:
                    report = sync(name, state, connector, sink, shard)
            except ConfigError as exc:  # e.g. credentials refused: the fix is in the settings
                stderr.print(Text("configuration error: ", style="red") + plain(f"{name}: {exc}"))
                status = 2
                continue
            except FootnoteError as exc:
                stderr.print(Text("error: ", style="red") + plain(f"{name}: {exc}"))
                status = status or 1
                continue
            finally:
                connector.close()
            for key, reason in report.failed:
                console.print(Text("skipped ", style="yellow") + plain(f"{key}: {reason}"))
            for warning in getattr(connector, "warnings", []):
                console.print(Text("note ", style="yellow") + plain(f"{name}: {warning}"))
            requests = getattr(connector, "requests", None)
            sharded = ""
            if shard is not None:
                moved = "cursor moved" if report.cursor_advanced else "cursor waits for the others"
                sharded = f"shard {shard.index}/{shard.count} ({moved}) "
            summary = getattr(connector, "summary", None)
            detail = summary() if callable(summary) else ""
            console.print(
                plain(
                    f"{name}: {sharded}written {len(report.written)} · "
                    f"unchanged {len(report.unchanged)} · "
                    f"deleted {len(report.deleted)} · failed {len(report.failed)}  "
                    f"({report.seconds:.1f}s"
                    + (f", {requests} requests)" if requests is not None else ")")
                    + (f"; {detail}" if detail else "")
                )
            )
            status = status or (1 if report.failed else 0)
    finally:
        if pool is not None:
            pool.close()
        deps.close()
        state.close()
    return status


def cmd_search(args, settings: Settings) -> int:
    from bot.app import build_deps

    deps = build_deps(settings)
    try:
        groups = groups_for(args, deps)
        require_documents(deps)
        print_passages(deps.retriever.search(args.query, groups, top_k=args.top_k))
    finally:
        deps.close()
    return 0


def print_passages(passages) -> None:
    if not passages:
        console.print("[dim]no passages you may read match that[/dim]")
    for i, p in enumerate(passages, 1):
        line = Text(f"{i}. ", style="bold")
        line.append(safe(p.breadcrumbs), style="cyan")
        line.append(safe(f"  score {p.score:.4f} · updated {p.updated}"), style="dim")
        console.print(line, highlight=False)
        body = " ".join(p.body.split())
        console.print(plain(f"   {body[:300]}{'…' if len(body) > 300 else ''}"), highlight=False)
        console.print(Text("   ") + Text(safe(p.link), style=Style(link=safe(p.link), dim=True)))


def cmd_demo(args, settings: Settings) -> int:
    from bot.app import build_deps

    deps = build_deps(settings, metrics=False)
    try:
        person = person_for(args, deps, announce=False)
        run_ingest(deps, EXAMPLES / "handbook", [])
        return chat(deps, person, args)
    finally:
        deps.close()


def cmd_ask(args, settings: Settings) -> int:
    from bot.app import build_deps

    deps = build_deps(settings, metrics=False)  # a one-shot process: nothing scrapes it
    ends = getattr(args, "process_ends", False)  # set by bot.arguments.main, not by tests
    try:
        person = person_for(args, deps)  # a mistyped user stops here, before any model loads
        preload_models(deps)  # then the models load while the rest is imported and opened
        require_documents(deps)
        terminal = TerminalChat(
            deps, person, show_trace=args.trace, as_json=args.json, auto_yes=args.yes
        )
        set_up_done()
        try:
            answer = terminal.ask(args.question)
        finally:
            terminal.close()
    finally:
        # Only reading was done: a process about to end leaves the index to its end.
        deps.close(index=not ends)
    code = 0 if answer.status != "error" else 1
    if ends:
        end_process(code)
    return code


def cmd_chat(args, settings: Settings) -> int:
    from bot.app import build_deps

    deps = build_deps(settings, metrics=False)  # nothing scrapes a terminal chat
    ends = getattr(args, "process_ends", False)  # set by bot.arguments.main, not by tests
    try:
        person = person_for(args, deps, announce=False)  # a mistyped user stops here
        preload_models(deps)  # then the models load while the rest is imported and opened
        require_documents(deps)
        code = chat(deps, person, args)
    finally:
        # Only reading was done (tickets go to their own store): a process about to end,
        # Ctrl-C included, leaves the index to its end.
        deps.close(index=not ends)
    if ends:
        end_process(code)
    return code


def chat(deps, person: Person, args) -> int:
    """Questions until an empty line, Ctrl-D or Ctrl-C; every prompt is read on the main thread."""
    terminal = TerminalChat(deps, person, show_trace=args.trace, prompt_for_tickets=True)
    set_up_done()
    console.print(
        plain(
            f"Chatting as {who(person)}{other_user_hint(args)}. Empty line, Ctrl-D or Ctrl-C quits."
        )
    )
    try:
        while True:
            text = terminal.next_question or read_line(Text("you> ", style="bold green"))
            terminal.next_question = None
            if not text:
                return 0
            terminal.ask(text)
    finally:
        terminal.close()


def cmd_eval(args, settings: Settings) -> int:
    if args.dataset:
        return eval_datasets(args, settings)
    for flag, given in (("--json", args.json), ("--eval-dir", args.eval_dir)):
        if given:
            raise ConfigError(f"{flag} goes with --dataset NAME")
    report = golden_report(args, settings)
    console.print(report.table())
    console.print(report.kind_table())
    if args.failures:
        for line in report.failures():
            console.print(line, markup=False, highlight=False)
    return 0


def golden_report(args, settings: Settings):
    """The golden set (or --cases) asked of the data dir's index, the handbook ingested first
    when the index is empty."""
    from agent.assistant import build_assistant
    from agent.evaluation import load_golden, run_eval
    from bot.app import build_deps
    from bot.directory import groups_of

    path = args.cases or args.golden or EXAMPLES / "golden.yaml"
    if not path.is_file():
        raise ConfigError(f"no such file: {path}")
    golden = load_golden(path)
    if not golden:
        raise ConfigError(f"{path} holds no cases")
    kinds = {k.strip() for k in args.kind.split(",") if k.strip()}
    if kinds:
        unknown = kinds - {item.kind for item in golden}
        if unknown:
            raise ConfigError(
                f"no golden items of kind {', '.join(sorted(unknown))}; "
                f"known kinds: {', '.join(sorted({item.kind for item in golden}))}"
            )
        golden = [item for item in golden if item.kind in kinds]
    if not args.dataset:
        golden = golden[: args.limit]
    deps = build_deps(settings)
    try:
        if args.cases:
            require_documents(deps)  # cases are asked of the company's documents, not the sample
        elif not deps.index.count():
            run_ingest(deps, EXAMPLES / "handbook", [])
        with console.status("asking the golden questions…"):
            return asyncio.run(run_eval(build_assistant(deps), golden, groups_of(deps.directory)))
    finally:
        deps.close()


def eval_datasets(args, settings: Settings) -> int:
    """``footnote eval --dataset NAME|all``: each set's split asked of its own scratch index,
    one table; with all, the golden set's row under the sets'."""
    import json

    from agent.answer_model import build_answer_model
    from agent.assistant import build_assistant
    from agent.corpora import answers_dir, default_eval_dir, load_corpus, sample
    from agent.evaluation import datasets_table, run_corpus_eval

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit takes a number of questions >= 1, got {args.limit}")
    names = CORPORA if args.dataset == "all" else (args.dataset,)
    eval_dir = args.eval_dir or default_eval_dir()
    for name in names:
        answers_dir(eval_dir, name)  # every set is there before the first one is ingested
    # piped or logged, the table keeps its columns whole (a terminal gives its own width)
    out = console if console.is_terminal else Console(width=140)
    reports = []
    embedders = shared_embedders(settings)  # each model loads once for every set
    model = build_answer_model(settings.embedding.threads, settings.data_dir / "cache")  # and this
    for name in names:
        asked = sample(
            [q for q in load_corpus(eval_dir, name) if q.split == args.split], args.limit
        )
        deps, ingest = corpus_deps(settings, eval_dir, name, embedders=embedders)
        deps.__dict__["answer_model"] = model  # the cached property, given
        try:
            preload_models(deps)
            with Progress(
                TextColumn(f"[bold]{name}[/] {args.split}"),
                BarColumn(),
                MofNCompleteColumn(),
                console=console,
                transient=True,
            ) as bar:
                task = bar.add_task("", total=len(asked))
                report = asyncio.run(
                    run_corpus_eval(
                        build_assistant(deps),
                        name,
                        args.split,
                        asked,
                        on_item=partial(bar.advance, task),
                    )
                )
        finally:
            deps.close()
        report.ingest = ingest
        reports.append(report)
        if len(names) > 1:
            out.print(datasets_table([report]))
        if args.failures:
            for o in report.outcomes:
                if not o.correct:
                    out.print(
                        f"{name} {o.failure()}", markup=False, highlight=False, soft_wrap=True
                    )
    golden = golden_report(args, settings) if args.dataset == "all" else None
    out.print(datasets_table(reports, golden))
    if args.json:
        written = {
            "split": args.split,
            "limit": args.limit,
            "datasets": [r.as_json() for r in reports],
        }
        if golden is not None:
            written["golden"] = {
                "metrics": golden.metrics,
                "items": [
                    {"id": r.item.id, "status": r.answer.status, "correct": r.correct}
                    for r in golden.results
                ],
            }
        args.json.write_text(json.dumps(written, indent=1, default=str) + "\n", encoding="utf-8")
        stderr.print(plain(f"wrote {shown(args.json)}", "dim"))
    return 0


def shared_embedders(settings: Settings):
    """The embedders as the data dir's own commands build them (loaded when first used)."""
    from ingest.backends import build_embedders

    return build_embedders(
        settings.embedding, settings.cohere, cache_dir=settings.data_dir / "cache"
    )


def corpus_deps(settings: Settings, eval_dir: Path, name: str, files=None, embedders=None):
    """Deps over the set's scratch index (``<data dir>/eval/<name>-<key>``, readable by everyone,
    on Qdrant Edge whatever the settings say), ingesting the corpus (or just ``files`` of it)
    the first time; the key covers the files and what of the settings and the ingest code shapes
    the index. ``embedders``: models already built (every set of a run, and tests, share one
    set). Returns the deps and the ingest's figures (chunks, seconds, reused)."""
    import hashlib
    import json

    from agent.corpora import corpus_dir, corpus_key
    from bot.app import build_deps
    from ingest.settings import QdrantSettings

    folder = corpus_dir(eval_dir, name)
    chosen = sorted(files) if files is not None else sorted(folder.glob("*.md"))
    shaping = {
        "ingest": settings.ingest.model_dump(exclude={"default_acl"}),
        "embedding": settings.embedding.model_dump(),
        "bm25": [
            settings.retrieval.bm25_k1,
            settings.retrieval.bm25_b,
            settings.retrieval.bm25_avgdl,
        ],
        "cohere": settings.cohere.model_dump(exclude={"api_key"}) if settings.cohere else None,
        "code": [
            hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(INGEST_CODE.glob("*.py"))
        ],
    }
    scratch = settings.data_dir / "eval" / f"{name}-{corpus_key(chosen, shaping)}"
    done = scratch / "ingested.json"
    deps = build_deps(
        settings.model_copy(
            update={"data_dir": scratch, "qdrant": QdrantSettings(), "fallback": None}
        )
    )
    # the models and their compiled cache are the data dir's own, not one copy per set
    deps.__dict__["embedders"] = embedders or shared_embedders(settings)
    if done.is_file():
        info = json.loads(done.read_text(encoding="utf-8")) | {"reused": True}
        stderr.print(
            plain(
                f"{name}: reusing {shown(scratch)} ({info['chunks']} chunks, ingested in "
                f"{info['seconds']:.0f}s)",
                "dim",
            )
        )
        return deps, info
    try:
        stderr.print(
            plain(f"{name}: ingesting {len(chosen)} documents into {shown(scratch)}", "dim")
        )
        report = run_ingest(deps, folder, ["*"], files=chosen)
    except BaseException:
        deps.close()
        raise
    info = {
        "documents": len(chosen),
        "chunks": report.chunks,
        "seconds": round(report.seconds, 1),
        "cpu_seconds": round(report.cpu_seconds, 1),
        "failed": len(report.failed),
    }
    done.write_text(json.dumps(info) + "\n", encoding="utf-8")
    return deps, info | {"reused": False}


def open_records(settings: Settings):
    from bot.feedback import FeedbackStore

    return FeedbackStore.open(settings.database, settings.data_dir)


def _with_records(settings: Settings, fn):
    store = open_records(settings)
    try:
        return fn(store)
    finally:
        store.close()


def cmd_feedback(args, settings: Settings) -> int:
    from bot.app import build_deps
    from bot.cases import Reviewer, export_cases, parse_since

    try:
        since = parse_since(args.since)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if not (args.reviewer or "").strip():
        raise ConfigError(
            "say who will read the cases: footnote feedback export --reviewer USER (their user "
            "id or e-mail): what they may not read is left out. Cases name documents and quote "
            "askers, so there is no export for nobody in particular"
        )
    deps = build_deps(settings)
    try:
        directory = deps.directory
        person = directory.find(args.reviewer.strip())
        if person is None:
            raise ConfigError(
                f"--reviewer {args.reviewer.strip()!r} is not in the directory: give their user "
                "id or e-mail as the directory has it"
            )
        readable: dict[str, bool] = {}

        def may_read(doc_id: str) -> bool:
            if doc_id not in readable:
                readable[doc_id] = bool(deps.index.chunks(doc_id, person.principals))
            return readable[doc_id]

        store = open_records(settings)
        try:
            export = export_cases(
                store,
                directory,
                since,
                Reviewer(person, may_read),
                history_turns=settings.redis.history_turns,
                history_ttl_s=settings.redis.history_ttl_s,
            )
        finally:
            store.close()
    finally:
        deps.close()
    items = export.items
    down = sum(1 for i in items if i.verdict == "down")
    summary = (
        f"{len(items)} cases ({down} 👎, {len(items) - down} 👍) rated since {since}, "
        f"for {person.user_id}"
    )
    left_out = (
        f"left out for {person.user_id}: {export.cases_left_out} cases citing "
        f"{export.citations_left_out} documents they may not read, "
        f"{export.notes_left_out} askers' comments (the asker reads documents they may not)"
    )
    if args.out is None:
        sys.stdout.write(export.text)
        stderr.print(plain(summary, "dim"))
        stderr.print(plain(left_out, "dim"))
    else:
        args.out.write_text(export.text, encoding="utf-8")
        console.print(plain(f"wrote {summary} to {shown(args.out)}"))
        console.print(plain(left_out))
        if items:
            console.print(
                plain(
                    f"next: fill in their facts, then footnote eval --cases {shown(args.out)}",
                    "dim",
                )
            )
    return 0


def cmd_report(args, settings: Settings) -> int:
    import json

    from bot.app import build_deps
    from bot.cases import parse_since
    from bot.digest import report_builder
    from bot.gaps import report_lines

    deps = build_deps(settings)
    try:
        build = report_builder(settings, deps)
        if args.action == "gaps":
            try:
                since = parse_since(args.since)
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
            report = build(since, None)
            if args.json:
                sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
            else:
                for line in report_lines(report):
                    console.print(plain(line), highlight=False)
            return 0
        return report_digest(args, settings, build, deps.directory)
    finally:
        deps.close()


def report_digest(args, settings: Settings, build, directory) -> int:
    import datetime as dt

    from bot.digest import current_period, post_digest
    from bot.gaps import report_lines

    period = current_period(dt.datetime.now(dt.UTC), settings.digest)
    if not args.post:
        for line in report_lines(build(period.since, period.until)):
            console.print(plain(line), highlight=False)
        return 0
    if not settings.digest.enabled and not _with_records(settings, lambda s: s.routes()):
        raise ConfigError(
            "nowhere to post: set FOOTNOTE_DIGEST__SLACK_CHANNEL (a channel id) and/or "
            "FOOTNOTE_DIGEST__TEAMS_CONVERSATION with FOOTNOTE_DIGEST__TEAMS_SERVICE_URL, "
            "or route an owner's digest (footnote digest route)"
        )
    outcome = asyncio.run(
        post_digest(settings, lambda: open_records(settings), build, directory=directory)
    )
    if outcome.posted:
        console.print(plain(f"posted the digest of {period.key} to {', '.join(outcome.where)}"))
    else:
        console.print(plain(f"the digest of {period.key} is already posted (or being posted)"))
    return 0


SLACK_CHANNEL_ID = re.compile(r"[CG][A-Z0-9]{6,}")


def cmd_digest(args, settings: Settings) -> int:
    from bot.feedback import DigestRoute

    store = open_records(settings)
    try:
        if args.action == "routes":
            routes = store.routes()
            for r in routes:
                console.print(plain(f"{r.owner}\t{r.platform}\t{r.target}"), highlight=False)
            if not routes:
                console.print(
                    plain(
                        "no routes: every owner's documents are in the default digest "
                        "(add one with footnote digest route --owner … --slack-channel …)",
                        "dim",
                    )
                )
            return 0
        if args.remove:
            gone = store.remove_route(args.owner)
            console.print(
                plain(
                    f"removed the route of {args.owner.strip().lower()}: their documents go to "
                    "the default digest"
                    if gone
                    else f"{args.owner} has no route (footnote digest routes lists them)"
                )
            )
            return 0 if gone else 1
        if not args.owner.strip():
            raise ConfigError("--owner is empty: give the owner as the documents name it")
        if args.slack_channel is not None:
            channel = args.slack_channel.strip()
            if not SLACK_CHANNEL_ID.fullmatch(channel):
                raise ConfigError(
                    f"--slack-channel {channel!r} is not a channel id: use the id (C0123456789, "
                    "in the channel's details in Slack), not its #name"
                )
            r = DigestRoute(args.owner, "slack", channel)
        else:
            conversation = args.teams_conversation.strip()
            if not conversation:
                raise ConfigError("--teams-conversation is empty: give the conversation id")
            r = DigestRoute(args.owner, "teams", conversation)
        store.set_route(r)
        console.print(
            plain(
                f"{r.owner}'s digest goes to {r.platform} {r.target}: footnote serve posts the "
                "last period's at its next check (within 5 minutes), then one each period"
            )
        )
        if r.platform == "teams" and not settings.digest.teams_service_url:
            stderr.print(
                plain(
                    "note: set FOOTNOTE_DIGEST__TEAMS_SERVICE_URL (the conversation's serviceUrl) "
                    "or the post will fail",
                    "yellow",
                )
            )
    finally:
        store.close()
    return 0


def cmd_privacy(args, settings: Settings) -> int:
    from bot.directory import FileDirectory
    from bot.feedback import ago
    from bot.privacy import forget

    store = open_records(settings)
    try:
        if args.action == "purge":
            days = settings.privacy.retention_days
            turns, feedback = store.purge(ago(days))
            console.print(
                plain(
                    f"deleted {turns} turns and {feedback} feedback records older than {days} days"
                )
            )
            return 0
        person = FileDirectory.load(settings.directory_file).find(args.user)
        users = list(dict.fromkeys([args.user, *([person.user_id] if person else [])]))
        done = forget(settings, store, users)
    finally:
        store.close()
    console.print(plain(f"forgot {users[-1]}:"))
    for kind, n in done.removed.items():
        console.print(plain(f"  {n:>5}  {kind}"), highlight=False)
    for where in done.unreachable:
        stderr.print(plain(f"error: not forgotten everywhere: {where}", "red"))
    return 1 if done.unreachable else 0


def cmd_serve(args, settings: Settings) -> int:
    from bot.server import run

    return run(settings, socket_mode=args.socket_mode)


def cmd_bench(args, settings: Settings) -> int:
    try:
        from benchmarks import retrieval as bench
    except ModuleNotFoundError as exc:
        if exc.name != "benchmarks":
            raise
        raise ConfigError(
            "the benchmarks are not part of this install (the container image leaves them out); "
            "run `footnote bench` from a checkout of the repository after `make install`"
        ) from exc

    if args.what == "ingest" and args.profile:
        from benchmarks.ingest_profile import HANDBOOK, profile

        folder = args.folder or HANDBOOK
        if not folder.is_dir():
            raise ConfigError(f"--folder {folder} is not a folder of documents")
        return profile(settings, folder)
    if args.folder:
        raise ConfigError("--folder goes with `footnote bench ingest --profile`")
    if args.what == "ingest" and args.workers:
        from benchmarks import workers

        counts = [n.strip() for n in args.workers.split(",")]
        if not all(n.isdigit() and int(n) >= 1 for n in counts):
            raise ConfigError(f"--workers takes counts such as 1,2, got {args.workers!r}")
        return workers.run(settings, [int(n) for n in counts])
    if args.what == "ingest":
        from benchmarks.ingest_profile import profile

        return bench.ingest(settings, args.eval_dir, first=lambda: profile(settings))
    return bench.retrieval(settings, args.dataset, args.eval_dir, args.split, args.limit)


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

if __name__ == "__main__":
    sys.exit(main())
