"""What the conversation itself answers, before any search or model: the ticket filed earlier in
this chat ("what was the ticket number?"). The filing is in the history as Footnote said it
(``filed_text``), so the answer is read back from there, not guessed."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.turns import Message

# "what was the ticket number?", "ticket id?", "which ticket did you open", "my ticket's reference"
_ASKS_TICKET = re.compile(
    r"\bticket'?s?\b.{0,30}\b(?:number|no\b|id|reference|ref)\b"
    r"|\b(?:number|id|reference)\b.{0,30}\bticket\b"
    r"|\b(?:which|what)\s+ticket\b",
    re.IGNORECASE,
)
_ASKS_OTHER = re.compile(r"\b(?:open|file|create|raise|new)\b.{0,20}\bticket\b", re.IGNORECASE)
_FILED = re.compile(r"^Filed (\S+): (.*)$")


def filed_text(ticket_id: str, title: str) -> str:
    """How a filed ticket is said, in the chat and in its history (read back by ``filed``)."""
    return f"Filed {ticket_id}: {title}"


def filed(message: str, history: Sequence[Message]) -> tuple[str, str] | None:
    """(id, title) of the latest ticket filed in this conversation, when ``message`` asks for
    it; None when it asks something else, asks for a new ticket, or none was filed here."""
    if len(message) > 120 or not _ASKS_TICKET.search(message) or _ASKS_OTHER.search(message):
        return None
    for m in reversed(history):
        said = _FILED.match(m.text.strip()) if m.role == "assistant" else None
        if said:
            return said.group(1), said.group(2)
    return None
