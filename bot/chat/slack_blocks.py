"""An ``Answer`` as Slack Block Kit, beside the Slack adapter (``bot/chat/slack.py``). Pure
functions. The answer and its sources are ``rich_text`` blocks, whose ``text`` elements Slack
shows literally, so a document's ``<!channel>``, ``<url|label>`` or ``*bold*`` stays characters;
the notification ``text`` (mrkdwn) is escaped. What both platforms share (the button ids, the
answer cut into text and markers, the draft's inert Markdown) is in ``bot/chat/render.py``.
"""

from __future__ import annotations

import json

from agent.turns import Answer, Citation, PendingAction, as_searched
from bot.chat.render import (
    CANCEL,
    CONFIRM,
    FEEDBACK_DOWN,
    FEEDBACK_OTHER,
    FEEDBACK_REASON,
    FEEDBACK_UP,
    MAX_BUTTON_VALUE,
    TICKET_OFFER,
    Linker,
    default_link,
    pieces,
    reason_prompt,
    safe_url,
    shows_searched,
    source_label,
    split_text,
    visible,
)
from bot.reports.feedback import MAX_NOTE, REASONS

# Block Kit limits (https://api.slack.com/reference/block-kit/blocks).
MAX_BLOCKS = 50


MAX_SECTION_TEXT = 3000


MAX_CONTEXT_TEXT = 2000


MAX_RICH_TEXT = 2500  # characters of text per rich_text block (kept well under message limits)


MAX_BUTTON_TEXT = 75


MAX_MESSAGE_TEXT = 3900  # the notification / fallback ``text``; Slack truncates far later


def slack_escape(text: str) -> str:
    """The three characters Slack's mrkdwn reads as control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# Formatting characters of mrkdwn and look-alikes that are only characters.
_MRKDWN_LOOKALIKES = str.maketrans({"*": "∗", "_": "ˍ", "~": "∼", "`": "ˋ"})


def slack_inert(text: str) -> str:
    """Text for a mrkdwn field that shows as the characters it is: escaped, URLs in code spans,
    formatting characters replaced by look-alikes."""
    out = []
    for kind, piece in pieces(text, markers=False):
        if kind == "url":
            out.append("`" + slack_escape(piece.replace("`", "")) + "`")
        else:
            out.append(slack_escape(piece).translate(_MRKDWN_LOOKALIKES))
    return "".join(out)


def _rich(elements: list[dict], block_id: str | None = None) -> dict:
    block = {
        "type": "rich_text",
        "elements": [{"type": "rich_text_section", "elements": elements}],
    }
    if block_id:
        block["block_id"] = block_id
    return block


def _rich_text(text: str, style: dict | None = None) -> dict:
    element: dict = {"type": "text", "text": visible(text)}
    if style:
        element["style"] = style
    return element


def _rich_link(url: str, text: str, style: dict | None = None) -> dict:
    element: dict = {"type": "link", "url": safe_url(url), "text": visible(text)}
    if style:
        element["style"] = style
    return element


def _rich_inline(text: str, urls: dict[int, str | None], style: dict | None = None) -> list[dict]:
    """Answer text as rich_text elements: literal text, inert (code) URLs, markers as links."""
    elements: list[dict] = []
    for kind, piece in pieces(text):
        if kind == "marker":
            url = urls.get(int(piece))
            label = f"[{piece}]"
            elements.append(_rich_link(url, label, style) if url else _rich_text(label, style))
        elif kind == "url":
            elements.append(_rich_text(piece, {**(style or {}), "code": True}))
        elif piece:
            elements.append(_rich_text(piece, style))
    return elements


def slack_literal(text: str, style: dict | None = None) -> list[dict]:
    """Any text (a question, a document's title) as rich_text elements shown as typed: never a
    mention, a link or markup; URLs in it are inert code spans."""
    return _rich_inline(text, {}, style)


def slack_rich_block(elements: list[dict]) -> dict:
    return _rich(elements)


def _plain_context(text: str) -> dict:
    return {
        "type": "context",
        "elements": [
            {"type": "plain_text", "text": visible(text)[:MAX_CONTEXT_TEXT], "emoji": True}
        ],
    }


def _plain_section(text: str) -> dict:
    return {
        "type": "section",
        "text": {"type": "plain_text", "text": visible(text)[:MAX_SECTION_TEXT], "emoji": True},
    }


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


def _source_elements(c: Citation, url: str | None) -> list[dict]:
    label = source_label(c)
    elements = [_rich_link(url, label) if url else _rich_text(label)]
    if c.updated:
        elements.append(_rich_text(f" · updated {c.updated[:10]}"))
    return elements


def pending_blocks(action: PendingAction, asker: str = "", summary: bool = True) -> list[dict]:
    """Confirm / Cancel for a proposed ticket; ``summary`` repeats its title when the answer did not."""
    value = json.dumps({"a": action.action_id, "u": asker or action.user_id})
    elements = [_rich_text("Open a ticket?" if summary else "Open this ticket?", {"bold": True})]
    if summary:
        elements.append(_rich_text(" " + action.title[:MAX_SECTION_TEXT]))
    return [
        _rich(elements, block_id=f"pending-summary:{action.action_id}"[:255]),
        {
            "type": "actions",
            "block_id": f"pending:{action.action_id}"[:255],
            "elements": [
                _button("Confirm", CONFIRM, value, "primary"),
                _button("Cancel", CANCEL, value),
            ],
        },
    ]


def feedback_block(turn_id: str, asker: str = "") -> dict:
    value = json.dumps({"t": turn_id, "u": asker})
    return {
        "type": "actions",
        "block_id": f"feedback:{turn_id}"[:255],
        "elements": [_button("👍", FEEDBACK_UP, value), _button("👎", FEEDBACK_DOWN, value)],
    }


def slack_reason_blocks(turn_id: str, vote: str, asker: str) -> list[dict]:
    """The reasons after a 👎 (buttons), and a line of the asker's own words after either vote:
    an input block in a message must dispatch its action (Enter sends it)."""
    blocks: list[dict] = [_plain_section(reason_prompt(vote))]
    if vote == "down":
        blocks.append(
            {
                "type": "actions",
                "block_id": f"feedback_reason:{turn_id}"[:255],
                "elements": [
                    _button(label, FEEDBACK_REASON, json.dumps({"t": turn_id, "u": asker, "r": r}))
                    for r, label in REASONS.items()
                    if r != "other"
                ],
            }
        )
    blocks.append(
        {
            "type": "input",
            "block_id": f"feedback_other:{vote}:{turn_id}:{asker}"[:255],
            "dispatch_action": True,
            "optional": True,
            "label": {
                "type": "plain_text",
                "text": ("Other" if vote == "down" else "In your words") + " (Enter sends it)",
            },
            "element": {
                "type": "plain_text_input",
                "action_id": FEEDBACK_OTHER,
                "max_length": MAX_NOTE,
                "dispatch_action_config": {"trigger_actions_on": ["on_enter_pressed"]},
            },
        }
    )
    return blocks


def parse_other_block(block_id: str) -> tuple[str, str, str] | None:
    """(vote, turn id, asker) from the block id of ``slack_reason_blocks``' text input."""
    parts = block_id.split(":", 3)
    if len(parts) != 4 or parts[0] != "feedback_other" or parts[1] not in ("up", "down"):
        return None
    return parts[1], parts[2], parts[3]


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
    remember our conversation right now"). ``answer.private_note`` is never shown here.
    """
    urls = {c.n: links(c) for c in answer.citations}
    tail: list[dict] = []
    if answer.note:
        tail.append(_rich(_rich_inline(f"ℹ️ {answer.note}", {})))
    if answer.citations:
        tail.append(_plain_context("Sources"))
        lines: list[dict] = []
        size = 0
        for c in answer.citations:
            line = _source_elements(c, urls[c.n])
            length = sum(len(e["text"]) for e in line)
            if lines and size + length > MAX_RICH_TEXT:
                tail.append(_rich(lines))
                lines, size = [], 0
            if lines:
                lines.append(_rich_text("\n"))
            lines += line
            size += length
        if lines:
            tail.append(_rich(lines))
    if shows_searched(answer):
        searched = ", ".join(f"“{as_searched(q)}”" for q in answer.searched[:8])
        tail.append(_plain_context(f"🔎 I searched for {searched}"))
    if answer.ticket:
        tid = str(answer.ticket.get("id", ""))
        link = answer.ticket.get("link")
        tail.append(
            _rich(
                [
                    _rich_text("🎫 Ticket "),
                    _rich_link(link, tid) if link else _rich_text(tid),
                    _rich_text(" filed."),
                ]
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
        tail.append(_plain_context(f"⚠️ {notice}"))
    if turn_id and answer.status not in ("error", "smalltalk", "rejected"):
        tail.append(feedback_block(turn_id, asker))

    if len(tail) > MAX_BLOCKS - 1:  # an absurd number of sources: keep the head and say so
        tail = tail[: MAX_BLOCKS - 2] + [_plain_context("…more sources left out")]
    budget = MAX_BLOCKS - len(tail)
    body = [
        _rich(_rich_inline(piece, urls)) for piece in split_text(answer.text or "…", MAX_RICH_TEXT)
    ]
    if len(body) > budget:
        body = body[: budget - 1] + [
            _plain_context("…the answer was too long for one message and was cut here.")
        ]
    return body + tail


def slack_text(answer: Answer) -> str:
    """The fallback text Slack shows in notifications: the answer, inert."""
    text = slack_inert(answer.text or "…")
    return text if len(text) <= MAX_MESSAGE_TEXT else text[: MAX_MESSAGE_TEXT - 1] + "…"


def slack_progress_blocks(text: str) -> list[dict]:
    return [_plain_context(f"⏳ {text}")]


def slack_message_blocks(text: str) -> list[dict]:
    """A plain message (not an answer) as blocks, split to fit; never read as markup."""
    return [_plain_section(s) for s in split_text(text, MAX_SECTION_TEXT)][:MAX_BLOCKS]
