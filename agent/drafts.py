"""The answer's draft as it is written: text deltas for a chat that can show them at once.

An LLM's answer step writes JSON (``{"sentences": [{"text": …, "citations": […]}, …]}``) and
takes seconds; a chat that streams (Slack's ``chat.appendStream``, Teams' streaming activities)
can show the sentences while they come. ``DraftText`` reads the JSON received so far with
pydantic-core's partial parser (``from_json(allow_partial="trailing-strings")``: an unfinished
string is kept as far as it goes) and hands the plain text on as deltas, each the continuation of
the ones before.

A draft is unchecked: the loop still checks it, drops unsupported sentences and places its own
citation markers, and the final answer replaces whatever was shown. Deltas are plain text from a
model that quotes documents: the adapter that shows them makes them inert first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine
from typing import Any

from pydantic_core import from_json

# Told every continuation of the draft's plain text; the bot may run it on another event loop.
Drafting = Callable[[str], Coroutine[Any, Any, None]]

# A citation marker, whole ("[2]", "[1, 3]") or still being written at the end ("[", "[1,").
_MARKER = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")
_OPEN_MARKER = re.compile(r"\s*\[[\d,;\s]*$")


def sentences_so_far(content: str) -> list[str]:
    """The sentence texts in an answer's JSON as far as it has arrived (the last one may be cut)."""
    if not content.strip():
        return []
    try:
        parsed = from_json(content, allow_partial="trailing-strings")
    except ValueError:  # not JSON (yet): nothing to show
        return []
    sentences = parsed.get("sentences") if isinstance(parsed, dict) else None
    if not isinstance(sentences, list):
        return []
    return [s["text"] for s in sentences if isinstance(s, dict) and isinstance(s.get("text"), str)]


def plain_draft(sentences: list[str]) -> str:
    """The sentences as one line of text, citation markers out (the final answer places its own),
    with a marker still being written held back."""
    parts = []
    for text in sentences:
        text = _OPEN_MARKER.sub("", _MARKER.sub("", text))
        text = re.sub(r"\s+", " ", text).strip()
        if text:
            parts.append(text)
    return " ".join(parts)


class DraftText:
    """Feeds ``drafting`` the deltas of a draft from the JSON text received so far.

    Text that does not continue what was sent (a marker that became something else) is held back
    until it does again; the final answer replaces the draft anyway. Sentences before the last are
    complete: their plain text is kept, so each chunk costs the last sentence's work only.
    """

    def __init__(self, drafting: Drafting):
        self.drafting = drafting
        self.sent = ""
        self._done = 0  # sentences known complete
        self._done_text = ""  # their plain text

    async def update(self, content: str) -> None:
        await self.sentences(sentences_so_far(content))

    async def sentences(self, texts: list[str]) -> None:
        """The same from sentences already parsed (a reply read as objects, not as text)."""
        complete = len(texts) - 1
        if complete > self._done:
            more = plain_draft(texts[self._done : complete])
            self._done_text = " ".join(t for t in (self._done_text, more) if t)
            self._done = complete
        last = plain_draft(texts[self._done :])
        text = " ".join(t for t in (self._done_text, last) if t)
        if len(text) > len(self.sent) and text.startswith(self.sent):
            delta, self.sent = text[len(self.sent) :], text
            await self.drafting(delta)
