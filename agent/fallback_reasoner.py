"""``FallbackReasoner``: the LLM makes each step, the offline reasoner makes the ones it fails.

A step falls back when the primary (the LLM reasoner)

- takes longer than that step's timeout (``FOOTNOTE_LLM__STEP_TIMEOUT_S``),
- raises one of the ``recoverable`` errors its provider's SDK raises (HTTP 5xx / 429 / 401, a
  refused connection; ``agent.llms.provider_errors``), or
- raises ``UnusableReply`` (the model answered, but with nothing the step can use).

Anything else is our bug or our configuration (a ``ConfigError``, a ``KeyError`` in a prompt, a
test fake running dry) and is raised, as the loop's style asks: errors the model caused are
handled, errors in our code are not hidden.

After a timeout or a provider error the LLM is skipped for ``pause_s`` seconds (every turn's
steps go offline at once), so a hanging provider costs one step timeout, not one per step: five
steps of 20 s would outlast the answer loop's own 90 s limit.

A slow provider that never fails would outlast it too (six steps of 15 s, more with rewrites), so
a turn also gives the LLM a budget (``turn_budget_s``, ``FOOTNOTE_LLM__TURN_BUDGET_S``): each
step waits at most what is left of it, and once it is spent the turn's other steps are made
offline. The assistant marks a turn's start (``turn_starts``); calls outside a turn have no budget.

The trace: the wrapper keeps why its last step fell back in a context variable that
``take_llm_fallback`` reads and clears, and ``Run.record`` puts it on the step's ``TraceStep``
(``llm_fallback``). The loop awaits each reasoner call inside its step and records that step
before it calls the reasoner again, all in the same task, so concurrent turns never see each
other's notes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal, TypeVar

from agent.drafts import Drafting
from agent.passages import Passage
from agent.reasoning import (
    Check,
    Draft,
    Grade,
    Reasoner,
    Route,
    ToolCall,
    ToolShelf,
    UnusableReply,
)
from agent.turns import Message

log = logging.getLogger(__name__)

T = TypeVar("T")
Step = Literal["route", "tools", "plan", "grade", "rewrite", "answer", "check"]

# Why the current task's last reasoner call was made offline; "" when the primary made it.
_LAST_FALLBACK: ContextVar[str] = ContextVar("footnote_llm_fallback", default="")
# When the current turn started (the reasoner's clock); None outside a turn.
_TURN_STARTED: ContextVar[float | None] = ContextVar("footnote_turn_started", default=None)


def turn_starts(now: float | None = None) -> None:
    """Mark the start of a turn in this context: the LLM's budget for it runs from here. Tasks
    started after this call (the answer loop's steps) inherit the mark."""
    _TURN_STARTED.set(time.monotonic() if now is None else now)


def take_llm_fallback() -> str:
    """Why the reasoner call this task made last fell back ("" if it did not), once."""
    reason = _LAST_FALLBACK.get()
    if reason:
        _LAST_FALLBACK.set("")
    return reason


@dataclass(frozen=True)
class StepTimeouts:
    """Seconds each step may wait for the primary before the fallback makes it."""

    route: float
    plan: float
    grade: float
    rewrite: float
    answer: float
    check: float
    tools: float

    @classmethod
    def every(cls, seconds: float) -> StepTimeouts:
        return cls(seconds, seconds, seconds, seconds, seconds, seconds, seconds)


class FallbackReasoner:
    """A ``Reasoner`` that asks ``primary`` and, for a step it fails, ``fallback`` (module doc)."""

    def __init__(
        self,
        primary: Reasoner,
        fallback: Reasoner,
        timeouts: StepTimeouts,
        *,
        recoverable: tuple[type[Exception], ...] = (),
        pause_s: float = 0.0,
        turn_budget_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.primary, self.fallback, self.timeouts = primary, fallback, timeouts
        self.recoverable, self.pause_s, self.clock = recoverable, pause_s, clock
        self.turn_budget_s = turn_budget_s
        self._failed_at: float | None = None
        self._failure = ""

    @property
    def streams(self) -> bool:
        return self.primary.streams

    async def route(self, text: str, history: Sequence[Message]) -> Route:
        return await self._step("route", lambda r: r.route(text, history))

    async def pick_tools(
        self, question: str, history: Sequence[Message], offered: ToolShelf
    ) -> list[ToolCall]:
        return await self._step("tools", lambda r: r.pick_tools(question, history, offered))

    async def plan(self, question: str) -> list[str]:
        return await self._step("plan", lambda r: r.plan(question))

    async def grade(self, question: str, passages: Sequence[Passage]) -> list[Grade]:
        return await self._step("grade", lambda r: r.grade(question, passages))

    async def rewrite(
        self,
        question: str,
        passages: Sequence[Passage],
        mode: Literal["rewrite", "broaden"],
        tried: Sequence[str],
    ) -> str:
        return await self._step("rewrite", lambda r: r.rewrite(question, passages, mode, tried))

    async def answer(
        self,
        question: str,
        subquestions: Sequence[str],
        passages: Sequence[Passage],
        facts: Sequence[str],
        *,
        asker: frozenset[str] = frozenset(),
        said: str = "",
        draft: Drafting | None = None,
        topic: str = "",
    ) -> Draft:
        """The primary's draft streams; a fallback's answer, whole at once, does not (the
        final answer replaces what the primary streamed before it failed)."""
        return await self._step(
            "answer",
            lambda r: r.answer(
                question,
                subquestions,
                passages,
                facts,
                asker=asker,
                said=said,
                draft=draft if r is self.primary else None,
                topic=topic,
            ),
        )

    async def check(
        self, question: str, draft: Draft, passages: Sequence[Passage], facts: Sequence[str] = ()
    ) -> Check:
        return await self._step("check", lambda r: r.check(question, draft, passages, facts))

    async def _step(self, step: Step, call: Callable[[Reasoner], Awaitable[T]]) -> T:
        reason = self._paused()
        seconds: float = getattr(self.timeouts, step)
        left = self._budget_left()
        if not reason and left is not None:
            if left <= 0:
                reason = f"llm skipped: the turn's {self.turn_budget_s:g} s for the llm are spent"
            seconds = min(seconds, left)
        if not reason:
            try:
                async with asyncio.timeout(seconds):
                    result = await call(self.primary)
            except TimeoutError:
                reason = self._failed(f"llm timeout after {seconds:.1f} s")
            except UnusableReply as e:  # this reply only: the next step asks the LLM again
                reason = f"llm reply unusable: {e}"
            except self.recoverable as e:
                status = getattr(e, "status_code", None)
                reason = self._failed(
                    f"llm error: {type(e).__name__}" + (f" (HTTP {status})" if status else "")
                )
            else:
                _LAST_FALLBACK.set("")
                return result
            log.warning("%s: made by the offline reasoner (%s)", step, reason)
        result = await call(self.fallback)
        _LAST_FALLBACK.set(reason)
        return result

    def _budget_left(self) -> float | None:
        """Seconds the LLM may still take in this turn; None without a budget or a turn."""
        started = _TURN_STARTED.get()
        if self.turn_budget_s is None or started is None:
            return None
        return self.turn_budget_s - (self.clock() - started)

    def _failed(self, reason: str) -> str:
        if self.pause_s > 0:
            self._failed_at, self._failure = self.clock(), reason
        return reason

    def _paused(self) -> str:
        """Why the LLM is skipped right now, or "" when it may be asked."""
        if self._failed_at is None:
            return ""
        ago = self.clock() - self._failed_at
        if ago >= self.pause_s:
            self._failed_at = None
            return ""
        return f"llm skipped for {self.pause_s:.0f} s after a failure {ago:.1f} s ago ({self._failure})"
