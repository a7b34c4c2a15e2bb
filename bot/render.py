"""An ``Answer`` as chat UI: Slack Block Kit blocks and a Teams Adaptive Card. Pure functions.

Both renderings show the same things: the answer with its ``[n]`` markers, the sources as links
("[n] Title — breadcrumbs", updated date), the channel note, what was searched when the answer
is "I don't know", Confirm / Cancel for a pending ticket and 👍 / 👎 feedback.

Button ids and values are the contract with the adapters (``bot/slack.py``, ``bot/teams.py``):
Slack ``action_id`` is one of ``CONFIRM``, ``CANCEL``, ``FEEDBACK_UP``, ``FEEDBACK_DOWN``,
``TICKET_OFFER``; Teams ``Action.Submit`` data carries ``{"action": …, "action_id": …}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from agent.turns import Answer, Citation, PendingAction

CONFIRM = "footnote_confirm"
CANCEL = "footnote_cancel"
FEEDBACK_UP = "footnote_feedback_up"
FEEDBACK_DOWN = "footnote_feedback_down"
TICKET_OFFER = "footnote_ticket_offer"

# Block Kit limits (https://api.slack.com/reference/block-kit/blocks).
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_CONTEXT_TEXT = 2000
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_MESSAGE_TEXT = 3900  # the notification / fallback ``text``; Slack truncates far later
TEAMS_MAX_TEXT = 20000  # Teams rejects messages over ~28 KB

PLACEHOLDER = "Looking through the docs…"
NOT_IN_DIRECTORY = (
    "Hi! I can only answer people listed in the company directory, and I couldn't find you there. "
    "Please ask your Footnote admin to add you."
)
SOMETHING_WENT_WRONG = (
    "Sorry — something went wrong on my side while answering. Please try again in a moment."
)
EMPTY_QUESTION = (
    "Hi! Ask me anything about the company docs — for example “How many vacation days carry over?”"
)

Linker = Callable[[Citation], "str | None"]

_MARKER = re.compile(r"\[(\d{1,3})\]")


def default_link(citation: Citation) -> str | None:
    """A citation's own web link; local paths have none until ``bot.links`` signs one."""
    return citation.link if citation.link.startswith(("http://", "https://")) else None


# ---------------------------------------------------------------------------------------------
# Slack


def slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_url(url: str) -> str:
    return url.replace("|", "%7C").replace(">", "%3E").replace("<", "%3C").replace(" ", "%20")


def slack_link(url: str | None, label: str) -> str:
    label = slack_escape(label).replace("|", "¦")
    return f"<{_slack_url(url)}|{label}>" if url else label


def _slack_markdown(text: str) -> str:
    """The answer's light Markdown in Slack mrkdwn: **bold** → *bold*, [t](u) → <u|t>."""
    text = re.sub(r"\*\*(.+?)\*\*", r"*\1*", text)
    text = re.sub(r"^#{1,6}\s+(.+)$", r"*\1*", text, flags=re.M)
    return text


def _linkify_slack(text: str, links: dict[int, str | None]) -> str:
    out = _slack_markdown(slack_escape(text))

    def repl(m: re.Match) -> str:
        url = links.get(int(m.group(1)))
        return f"<{_slack_url(url)}|[{m.group(1)}]>" if url else m.group(0)

    return _MARKER.sub(repl, out)


def split_text(text: str, limit: int) -> list[str]:
    """Cut text into pieces of at most ``limit`` characters at paragraph, line, sentence or word ends."""
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    pieces: list[str] = []
    while len(text) > limit:
        window = text[:limit]
        cut = -1
        for sep in ("\n\n", "\n", ". ", "。", "! ", "? ", " "):
            pos = window.rfind(sep)
            if pos > limit // 3:
                cut = pos + len(sep)
                break
        if cut <= 0:
            cut = limit
        pieces.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text:
        pieces.append(text)
    return pieces


def _sections(raw: str, render: Callable[[str], str], limit: int = MAX_SECTION_TEXT) -> list[str]:
    """Split raw text so that each rendered piece (escaped, links added) fits ``limit``."""
    out: list[str] = []
    for piece in split_text(raw, limit * 2 // 3):
        rendered = render(piece)
        if len(rendered) <= limit:
            out.append(rendered)
        elif len(piece) > 50:
            out += _sections(piece, render, limit // 2 if limit > 200 else limit)
        else:
            out.append(rendered[:limit])
    return out


def _section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text[:MAX_CONTEXT_TEXT]}]}


def _button(text: str, action_id: str, value: str, style: str | None = None) -> dict:
    b = {
        "type": "button",
        "text": {"type": "plain_text", "text": text[:MAX_BUTTON_TEXT], "emoji": True},
        "action_id": action_id,
        "value": value[:MAX_BUTTON_VALUE],
    }
    if style:
        b["style"] = style
    return b


def _show_searched(answer: Answer) -> bool:
    """On "I don't know", list the searches, unless the answer's text already does."""
    return (
        answer.status == "unknown"
        and bool(answer.searched)
        and not all(q in answer.text for q in answer.searched[:8])
    )


def source_line(c: Citation, url: str | None) -> str:
    label = f"[{c.n}] {c.title}" + (
        f" — {c.breadcrumbs}" if c.breadcrumbs and c.breadcrumbs != c.title else ""
    )
    if c.page:
        label += f", p. {c.page}"
    line = slack_link(url, label)
    if c.updated:
        line += f" · updated {c.updated[:10]}"
    return line


def pending_blocks(action: PendingAction, asker: str = "", summary: bool = True) -> list[dict]:
    """Confirm / Cancel for a proposed ticket; ``summary`` repeats its title when the answer did not."""
    value = json.dumps({"a": action.action_id, "u": asker or action.user_id})
    text = f"*Open a ticket?* {slack_escape(action.title)}" if summary else "*Open this ticket?*"
    return [
        {
            "type": "section",
            "block_id": f"pending-summary:{action.action_id}"[:255],
            "text": {"type": "mrkdwn", "text": text[:MAX_SECTION_TEXT]},
        },
        {
            "type": "actions",
            "block_id": f"pending:{action.action_id}"[:255],
            "elements": [
                _button("Confirm", CONFIRM, value, "primary"),
                _button("Cancel", CANCEL, value),
            ],
        },
    ]


def feedback_block(turn_id: str) -> dict:
    return {
        "type": "actions",
        "block_id": f"feedback:{turn_id}"[:255],
        "elements": [_button("👍", FEEDBACK_UP, turn_id), _button("👎", FEEDBACK_DOWN, turn_id)],
    }


def slack_blocks(
    answer: Answer,
    *,
    links: Linker = default_link,
    turn_id: str = "",
    question: str = "",
    asker: str = "",
    notice: str = "",
) -> list[dict]:
    """The whole reply as Block Kit, at most 50 blocks, every text inside Slack's limits.

    ``turn_id`` names the answer for the feedback buttons (none without it); ``question`` fills the
    "open a ticket" offer on an "I don't know"; ``notice`` is a line from the adapter (e.g. "I can't
    remember our conversation right now").
    """
    urls = {c.n: links(c) for c in answer.citations}
    tail: list[dict] = []
    if answer.note:
        tail.append(_context(f"ℹ️ {slack_escape(answer.note)}"))
    if answer.citations:
        tail.append(_context("*Sources*"))
        lines = [source_line(c, urls[c.n]) for c in answer.citations]
        chunk: list[str] = []
        for line in lines:
            if chunk and len("\n".join([*chunk, line])) > MAX_SECTION_TEXT:
                tail.append(_section("\n".join(chunk)))
                chunk = []
            chunk.append(line[:MAX_SECTION_TEXT])
        if chunk:
            tail.append(_section("\n".join(chunk)))
    if _show_searched(answer):
        searched = ", ".join(f"“{slack_escape(q)}”" for q in answer.searched[:8])
        tail.append(_context(f"🔎 I searched for {searched}"))
    if answer.ticket:
        tail.append(
            _section(
                f"🎫 Ticket {slack_link(answer.ticket.get('link'), str(answer.ticket.get('id', '')))} filed."
            )
        )
    if answer.pending_action:
        tail += pending_blocks(
            answer.pending_action, asker, summary=answer.status != "needs_confirmation"
        )
    elif answer.status == "unknown" and question:
        tail.append(
            {
                "type": "actions",
                "block_id": "ticket_offer",
                "elements": [_button("🎫 Ask a person (open a ticket)", TICKET_OFFER, question)],
            }
        )
    if notice:
        tail.append(_context(f"⚠️ {slack_escape(notice)}"))
    if turn_id and answer.status not in ("error", "smalltalk"):
        tail.append(feedback_block(turn_id))

    if len(tail) > MAX_BLOCKS - 1:  # an absurd number of sources: keep the head and say so
        tail = tail[: MAX_BLOCKS - 2] + [_context("…more sources left out")]
    budget = MAX_BLOCKS - len(tail)
    body = [_section(s) for s in _sections(answer.text or "…", lambda t: _linkify_slack(t, urls))]
    if len(body) > budget:
        body = body[: budget - 1] + [
            _context("…the answer was too long for one message and was cut here.")
        ]
    return body + tail


def slack_text(answer: Answer) -> str:
    """The plain fallback text Slack shows in notifications."""
    text = answer.text or "…"
    return text if len(text) <= MAX_MESSAGE_TEXT else text[: MAX_MESSAGE_TEXT - 1] + "…"


def slack_progress_blocks(text: str) -> list[dict]:
    return [_context(f"⏳ {slack_escape(text)}")]


def slack_message_blocks(text: str) -> list[dict]:
    """A plain message (not an answer) as blocks, split to fit."""
    return [_section(s) for s in _sections(text, lambda t: _slack_markdown(slack_escape(t)))][
        :MAX_BLOCKS
    ]


# ---------------------------------------------------------------------------------------------
# Teams


def _md_escape_label(text: str) -> str:
    return text.replace("[", "(").replace("]", ")")


def _md_url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _text_block(text: str, **kw) -> dict:
    return {"type": "TextBlock", "text": text, "wrap": True, **kw}


def teams_card(
    answer: Answer,
    *,
    links: Linker = default_link,
    turn_id: str = "",
    question: str = "",
    asker: str = "",
    notice: str = "",
) -> dict:
    """The reply as an Adaptive Card (schema 1.4, what Teams renders everywhere)."""
    text = answer.text or "…"
    if len(text) > TEAMS_MAX_TEXT:
        text = text[: TEAMS_MAX_TEXT - 1] + "…"
    body: list[dict] = [_text_block(text)]
    actions: list[dict] = []
    if answer.note:
        body.append(_text_block(f"ℹ️ {answer.note}", isSubtle=True, size="Small"))
    if answer.citations:
        body.append(_text_block("Sources", weight="Bolder", spacing="Medium"))
        for c in answer.citations:
            label = c.title + (
                f" — {c.breadcrumbs}" if c.breadcrumbs and c.breadcrumbs != c.title else ""
            )
            if c.page:
                label += f", p. {c.page}"
            url = links(c)
            line = f"[{c.n}] " + (f"[{_md_escape_label(label)}]({_md_url(url)})" if url else label)
            if c.updated:
                line += f" · updated {c.updated[:10]}"
            body.append(_text_block(line, spacing="None", size="Small"))
    if _show_searched(answer):
        searched = ", ".join(f"“{q}”" for q in answer.searched[:8])
        body.append(_text_block(f"🔎 I searched for {searched}", isSubtle=True, size="Small"))
    if answer.ticket:
        tid = str(answer.ticket.get("id", ""))
        link = answer.ticket.get("link")
        body.append(
            _text_block(
                f"🎫 Ticket [{tid}]({_md_url(link)}) filed." if link else f"🎫 Ticket {tid} filed."
            )
        )
    if answer.pending_action:
        pa = answer.pending_action
        prompt = (
            "Open this ticket?"
            if answer.status == "needs_confirmation"
            else f"Open a ticket? {pa.title}"
        )
        body.append(_text_block(prompt, weight="Bolder", spacing="Medium"))
        data = {"action_id": pa.action_id, "asker": asker or pa.user_id}
        actions += [
            {
                "type": "Action.Submit",
                "title": "Confirm",
                "style": "positive",
                "data": {"action": "confirm", **data},
            },
            {"type": "Action.Submit", "title": "Cancel", "data": {"action": "cancel", **data}},
        ]
    elif answer.status == "unknown" and question:
        actions.append(
            {
                "type": "Action.Submit",
                "title": "Ask a person (open a ticket)",
                "data": {"action": "ticket_offer", "question": question[:MAX_BUTTON_VALUE]},
            }
        )
    if notice:
        body.append(_text_block(f"⚠️ {notice}", isSubtle=True, size="Small"))
    if turn_id and answer.status not in ("error", "smalltalk"):
        actions += [
            {
                "type": "Action.Submit",
                "title": "👍",
                "data": {"action": "feedback", "value": "up", "turn_id": turn_id},
            },
            {
                "type": "Action.Submit",
                "title": "👎",
                "data": {"action": "feedback", "value": "down", "turn_id": turn_id},
            },
        ]
    card = {
        "type": "AdaptiveCard",
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "version": "1.4",
        "body": body,
    }
    if actions:
        card["actions"] = actions
    return card


ADAPTIVE_CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
