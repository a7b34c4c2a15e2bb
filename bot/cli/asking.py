"""``footnote search``, ``ask``, ``chat`` and ``demo``: questions from a terminal."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from bot.chat.terminal import TerminalChat, console, plain, read_line, safe
from bot.cli.asker import EXAMPLES, groups_for, other_user_hint, person_for, require_documents, who
from bot.cli.ingesting import run_ingest
from bot.cli.process import end_process, preload_models, set_up_done
from bot.identity.directory import Person
from bot.settings import Settings


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
    ends = getattr(args, "process_ends", False)  # set by bot.entry.main, not by tests
    try:
        person = person_for(args, deps)  # a mistyped user stops here, before any model loads
        preload_models(deps, answer_model=False)  # models load while the rest is opened
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
    ends = getattr(args, "process_ends", False)  # set by bot.entry.main, not by tests
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
