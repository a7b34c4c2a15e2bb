"""``footnote serve`` (the bot's HTTP server) and ``footnote bench``, which the benchmarks
register through an entry point so that bot/ never imports them."""

from __future__ import annotations

from bot.settings import Settings
from ingest.errors import ConfigError


def cmd_serve(args, settings: Settings) -> int:
    from bot.web.server import run

    return run(settings, socket_mode=args.socket_mode)


def cmd_bench(args, settings: Settings) -> int:
    """The benchmarks register this verb's body (``footnote.commands`` in pyproject.toml): the
    bot finds it by name and never imports them, so the image can leave them out."""
    from importlib.metadata import entry_points

    found = entry_points(group="footnote.commands", name="bench")
    try:
        run = next(iter(found)).load()
    except (StopIteration, ModuleNotFoundError) as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name != "benchmarks":
            raise
        raise ConfigError(
            "the benchmarks are not part of this install (the container image leaves them out); "
            "run `footnote bench` from a checkout of the repository after `make install`"
        ) from exc
    return run(args, settings)
