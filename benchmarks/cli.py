"""``footnote bench``: the command's body, found by its entry point (``footnote.commands`` in
pyproject.toml) so that ``bot/`` never imports the benchmarks; an install without them (the
container image) says so instead of failing on an import."""

from __future__ import annotations

import argparse

from benchmarks import retrieval as bench
from bot.settings import Settings
from ingest.errors import ConfigError


def run(args: argparse.Namespace, settings: Settings) -> int:
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
