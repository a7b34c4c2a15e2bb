"""What the conversation itself answers, before any search or model: the ticket filed earlier in
this chat ("what was the ticket number?"). The filing is in the history as Footnote said it
(``filed_text``), so the answer is read back from there, not guessed."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.phrasing import pattern
from agent.turns import Message

_FILED = re.compile(r"^Filed (\S+): (.*)$")


def filed_text(ticket_id: str, title: str) -> str:
    """How a filed ticket is said, in the chat and in its history (read back by ``filed``)."""
    return f"Filed {ticket_id}: {title}"


def filed(message: str, history: Sequence[Message]) -> tuple[str, str] | None:
    """(id, title) of the latest ticket filed in this conversation, when ``message`` asks for
    it; None when it asks something else, asks for a new ticket, or none was filed here."""
    if (
        len(message) > 120
        or not pattern("ticket_number_asked").search(message)
        or pattern("new_ticket_asked").search(message)
    ):
        return None
    for m in reversed(history):
        said = _FILED.match(m.text.strip()) if m.role == "assistant" else None
        if said:
            return said.group(1), said.group(2)
    return None
