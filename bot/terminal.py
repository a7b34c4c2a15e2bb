"""The terminal adapter: a Turn from what was typed, the Answer printed with sources and progress."""

from __future__ import annotations

import json
import sys

from rich.console import Console

from agent.assistant import build_assistant
from agent.turns import Answer, Message, Turn
from ingest.errors import ConfigError

console = Console()


class TerminalChat:
    def __init__(
        self,
        deps,
        user: str,
        show_trace: bool = False,
        as_json: bool = False,
        auto_yes: bool = False,
    ):
        person = deps.directory.find(user)
        if person is None:
            raise ConfigError(f"unknown user {user!r}; add them to {deps.settings.directory_file}")
        self.person, self.deps = person, deps
        self.assistant = build_assistant(deps)
        self.history: list[Message] = []
        self.show_trace, self.as_json, self.auto_yes = show_trace, as_json, auto_yes

    async def turn(self, text: str) -> Answer:
        turn = Turn(
            user_id=self.person.user_id,
            text=text,
            groups=self.person.groups,
            display_name=self.person.name,
            email=self.person.email,
            channel_kind="cli",
            conversation_id="terminal",
            history=tuple(self.history),
        )
        with console.status("thinking…") as status:

            async def progress(message: str) -> None:
                status.update(message)

            answer = await self.assistant.answer(turn, progress if not self.as_json else None)
        self.history = [*self.history, Message("user", text), Message("assistant", answer.text)][
            -20:
        ]
        if self.as_json:
            print(json.dumps(answer.to_dict(), ensure_ascii=False, indent=2, default=str))
        else:
            print_answer(answer, self.show_trace)
        if answer.pending_action is not None and not self.as_json:
            await self._offer_ticket(answer)
        return answer

    async def _offer_ticket(self, answer: Answer) -> None:
        action = answer.pending_action
        if action is None:
            return
        if answer.status == "unknown":
            console.print(f"[dim]I can open a ticket: “{action.title}”.[/dim]")
        if self.auto_yes:
            yes = True
        elif sys.stdin.isatty():
            yes = console.input("File the ticket? [y/N] ").strip().lower() in ("y", "yes")
        else:
            console.print("[dim](run with --yes to file it)[/dim]")
            return
        done = await self.assistant.confirm(action.action_id, self.person.user_id, approve=yes)
        console.print(done.text + (f"  {done.ticket['link']}" if done.ticket else ""))


def print_answer(answer: Answer, show_trace: bool = False) -> None:
    colour = {
        "answered": "green",
        "partial": "yellow",
        "unknown": "red",
        "needs_confirmation": "cyan",
    }.get(answer.status, "white")
    console.print(answer.text, highlight=False)
    if answer.note:
        console.print(f"[dim]{answer.note}[/dim]")
    if answer.citations:
        console.print("[bold]Sources[/bold]")
        for c in answer.citations:
            where = f" · p. {c.page}" if c.page else ""
            console.print(
                f"  [{c.n}] [link={c.link}]{c.breadcrumbs or c.title}[/link]{where} · updated {c.updated}",
                highlight=False,
            )
            console.print(f"      [dim]{c.link}[/dim]", highlight=False)
    console.print(f"[{colour}]{answer.status}[/{colour}] · [dim]{answer.trace_summary()}[/dim]")
    if show_trace:
        console.print("[bold]Trace[/bold]")
        for s in answer.trace:
            console.print(
                f"  r{s.round} [bold]{s.step:<8}[/bold] {s.decision} [dim]{s.ms:.0f} ms[/dim]"
                + (f"  hits {s.hits}" if s.hits else "")
                + (f"  kept {len(s.kept)} dropped {len(s.dropped)}" if s.kept or s.dropped else ""),
                highlight=False,
            )
            for q in s.queries:
                console.print(f"       query: {q}", style="dim", highlight=False)
            if s.reason:
                console.print(f"       why: {s.reason}", style="dim", highlight=False)
            for d in s.dropped[:5]:
                console.print(f"       dropped {d}", style="dim", highlight=False)
