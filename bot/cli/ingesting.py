"""``footnote ingest FOLDER``: a folder into the index, with a progress bar and what changed."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from bot.chat.terminal import console, plain
from bot.progress import IngestProgress
from bot.settings import Settings
from ingest.errors import ConfigError


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
