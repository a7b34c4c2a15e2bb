"""``footnote`` starts here: ``--help``, a mistyped command or option answer before any of
Footnote's own modules (pydantic, rich, the models) are imported, which is most of a second.
Only a parsed command goes on to ``bot.cli.run``. Its own module, apart from the parser, so
that ``bot.cli`` (which builds the parser for ``main(argv)``) and the entry do not import each
other.
"""

from __future__ import annotations

import gc
import sys

from bot.arguments import build_parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # No cyclic garbage collection while the command starts: what a start makes (modules,
    # classes, settings, clients) lives as long as the process, yet the collector would walk it
    # ~150 times before the first answer, a tenth of a cold ``ask``'s main thread. The command
    # turns it back on once it is set up (``bot.cli.process.set_up_done``).
    gc.disable()
    args.process_ends = (
        True  # a one-shot command may end the process itself (bot.cli.process.end_process)
    )
    from bot.cli import run

    return run(args)


if __name__ == "__main__":
    sys.exit(main())
