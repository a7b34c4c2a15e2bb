"""The terminal adapter: a Turn from what was typed, the Answer printed with sources and progress.

Document text is data here too: it is printed as plain ``Text`` (never parsed as Rich markup),
with control characters (escape sequences that could draw links or move the cursor) and
bidirectional overrides removed. The only terminal hyperlinks are the citations' own links.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys

from rich.console import Console
from rich.style import Style
from rich.text import Text

from agent.turns import Answer, Message, Turn, TurnFailed
from bot.chat.failure import failure_reply
from bot.identity.directory import Person

console = Console()

# C0/C1 controls (ESC starts every terminal escape sequence) and bidi overrides, but not \t \n.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def safe(text: object) -> str:
    """Text that prints as the characters it is, whatever a document put in it."""
    return _UNSAFE.sub("", str(text))


def plain(text: object, style: str = "") -> Text:
    return Text(safe(text), style=style)


def as_json(answer: Answer) -> str:
    """The Answer as JSON; JSON escapes C0 controls itself, and C1 controls are escaped here."""
    text = json.dumps(answer.to_dict(), ensure_ascii=False, indent=2, default=str)
    return re.sub(
        r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]", lambda m: f"\\u{ord(m.group()):04x}", text
    )


TICKET_PROMPT = "File the ticket? [y/N] "
_YES, _NO = ("y", "yes"), ("", "n", "no")


def read_line(prompt: str | Text) -> str:
    """A line typed at ``prompt`` ("" at end of input). Runs on the main thread, so Ctrl-C raises
    KeyboardInterrupt at once; an ``input()`` in a worker thread would keep the process waiting."""
    try:
        return console.input(Text(prompt) if isinstance(prompt, str) else prompt).strip()
    except EOFError:
        return ""


class TerminalChat:
    """One person's conversation in the terminal, turn by turn.

    Synchronous on purpose: every prompt is read on the main thread between turns, and each turn
    runs on one event loop that lives as long as the conversation."""

    def __init__(
        self,
        deps,
        person: Person,
        show_trace: bool = False,
        as_json: bool = False,
        auto_yes: bool = False,
        prompt_for_tickets: bool | None = None,
    ):
        from agent.assistant import build_assistant  # LlamaIndex: ~1.5 s, only once a turn is near

        self.person, self.deps = person, deps
        self.assistant = build_assistant(deps, pending_ttl_s=deps.settings.redis.pending_ttl_s)
        self.history: list[Message] = []
        self.show_trace, self.as_json, self.auto_yes = show_trace, as_json, auto_yes
        # chat reads its answers from the conversation; a one-off ask only from a terminal
        self.prompt_for_tickets = (
            sys.stdin.isatty() if prompt_for_tickets is None else prompt_for_tickets
        )
        # A reply to the ticket prompt that was neither yes nor no: the next question.
        self.next_question: str | None = None
        self._loop = asyncio.Runner()

    def ask(self, text: str) -> Answer:
        answer = self._loop.run(self._answer(text))
        if answer.pending_action is not None and not self.as_json:
            self._offer_ticket(answer)
        return answer

    def close(self) -> None:
        self._loop.close()

    async def _answer(self, text: str) -> Answer:
        turn = Turn(
            user_id=self.person.user_id,
            text=text,
            groups=self.person.principals,
            display_name=self.person.name,
            email=self.person.email,
            channel_kind="cli",
            conversation_id="terminal",
            history=tuple(self.history),
        )
        with console.status("thinking…") as status:

            async def progress(message: str) -> None:
                status.update(message)

            try:
                answer = await self.assistant.answer(turn, progress if not self.as_json else None)
            except TurnFailed as exc:  # the trace is kept; the person reads the one sorry
                answer = exc.answer
                answer.text = failure_reply("terminal turn", answer.lang)
        self.history = [*self.history, Message("user", text), Message("assistant", answer.text)][
            -20:
        ]
        if self.as_json:
            print(as_json(answer))
        else:
            print_answer(answer, self.show_trace)
        return answer

    def _offer_ticket(self, answer: Answer) -> None:
        action = answer.pending_action
        if action is None:
            return
        if answer.status == "unknown":
            console.print(plain(f"I can open a ticket: “{action.title}”.", "dim"))
        if self.auto_yes:
            yes = True
        elif self.prompt_for_tickets:
            reply = read_line(TICKET_PROMPT)
            yes = reply.lower() in _YES
            if not yes and reply.lower() not in _NO:
                self.next_question = reply  # not an answer to the prompt: ask it next
        else:
            console.print("[dim](run with --yes to file it)[/dim]")
            return
        done = self._loop.run(
            self.assistant.confirm(action.action_id, self.person.user_id, approve=yes)
        )
        if done.ticket:  # the next question may ask for its number
            self.history = [*self.history, Message("assistant", done.text)][-20:]
        console.print(plain(done.text + (f"  {done.ticket['link']}" if done.ticket else "")))


def print_answer(answer: Answer, show_trace: bool = False) -> None:
    colour = {
        "answered": "green",
        "partial": "yellow",
        "unknown": "red",
        "needs_confirmation": "cyan",
    }.get(answer.status, "white")
    console.print(plain(answer.text), highlight=False)
    for note in (answer.note, answer.private_note):
        if note:
            console.print(plain(note, "dim"), highlight=False)
    if answer.citations:
        console.print(Text("Sources", style="bold"))
        for c in answer.citations:
            where = f" · p. {c.page}" if c.page else ""
            line = Text(f"  [{c.n}] ")
            line.append(safe(c.breadcrumbs or c.title), style=Style(link=safe(c.link)))
            line.append(safe(f"{where} · updated {c.updated}"))
            console.print(line, highlight=False)
            console.print(plain(f"      {c.link}", "dim"), highlight=False)
    status = Text(answer.status, style=colour)
    status.append(" · ")
    status.append(safe(answer.trace_summary()), style="dim")
    console.print(status)
    if show_trace:
        console.print(Text("Trace", style="bold"))
        for s in answer.trace:
            line = Text(f"  r{s.round} ")
            line.append(f"{s.step:<8}", style="bold")
            line.append(safe(f" {s.decision} "))
            line.append(f"{s.ms:.0f} ms", style="dim")
            line.append(f"  hits {s.hits}" if s.hits else "")
            if s.kept or s.dropped:
                line.append(f"  kept {len(s.kept)} dropped {len(s.dropped)}")
            console.print(line, highlight=False)
            for q in s.queries:
                console.print(plain(f"       query: {q}", "dim"), highlight=False)
            if s.reason:
                console.print(plain(f"       why: {s.reason}", "dim"), highlight=False)
            if s.llm_fallback:
                console.print(plain(f"       offline: {s.llm_fallback}", "yellow"), highlight=False)
            for d in s.dropped[:5]:
                console.print(plain(f"       dropped {d}", "dim"), highlight=False)
