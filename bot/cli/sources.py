"""``footnote sources`` (list, add) and ``footnote sync``: company sources and their syncs."""

from __future__ import annotations

import re

from rich.text import Text

from bot.chat.terminal import console, plain, safe
from bot.cli.process import stderr
from bot.progress import IngestProgress
from bot.settings import Settings
from ingest.errors import ConfigError, FootnoteError


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
