"""An ``Answer`` as a Teams Adaptive Card, beside the Teams adapter (``bot/chat/teams.py``). Pure
functions. The answer and its sources are ``RichTextBlock``s of ``TextRun``s (Adaptive Cards do
not read Markdown there); URLs are monospace runs and ``{{`` (the card's date functions) is
broken up. What both platforms share is in ``bot/chat/render.py``.
"""

from __future__ import annotations

import re

from agent.turns import Answer, as_searched
from bot.chat.render import (
    MAX_BUTTON_VALUE,
    Linker,
    default_link,
    pieces,
    reason_prompt,
    safe_url,
    shows_searched,
    source_label,
    visible,
)
from bot.reports.feedback import MAX_NOTE, REASONS

TEAMS_MAX_TEXT = 20000  # Teams rejects messages over ~28 KB


def _teams_inert(text: str) -> str:
    """Adaptive Cards read ``{{DATE(…)}}`` / ``{{TIME(…)}}`` even in text runs: break the braces."""
    return visible(text).replace("{{", "{\u200b{")


def _run(text: str, **style) -> dict:
    return {"type": "TextRun", "text": _teams_inert(text), **style}


def _link_run(text: str, url: str, **style) -> dict:
    return {
        "type": "TextRun",
        "text": _teams_inert(text),
        "selectAction": {"type": "Action.OpenUrl", "url": safe_url(url)},
        **style,
    }


def _teams_runs(text: str, urls: dict[int, str | None], **style) -> list[dict]:
    runs: list[dict] = []
    for kind, piece in pieces(text):
        if kind == "marker":
            url = urls.get(int(piece))
            label = f"[{piece}]"
            runs.append(_link_run(label, url, **style) if url else _run(label, **style))
        elif kind == "url":
            runs.append(_run(piece, fontType="Monospace", **style))
        elif piece:
            runs.append(_run(piece, **style))
    return runs


def _rich_block(inlines: list[dict], **kw) -> dict:
    return {"type": "RichTextBlock", "inlines": inlines, **kw}


def teams_plain(text: str, **style) -> dict:
    """Any text as an inert RichTextBlock (for notices and our own messages alike)."""
    return _rich_block([_run(text, **style)])


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
    urls = {c.n: links(c) for c in answer.citations}
    text = answer.text or "…"
    if len(text) > TEAMS_MAX_TEXT:
        text = text[: TEAMS_MAX_TEXT - 1] + "…"
    body: list[dict] = [
        _rich_block(_teams_runs(paragraph, urls)) for paragraph in re.split(r"\n{2,}", text)
    ]
    actions: list[dict] = []
    if answer.note:
        body.append(_rich_block(_teams_runs(f"ℹ️ {answer.note}", {}, isSubtle=True, size="Small")))
    if answer.citations:
        body.append(teams_plain("Sources", weight="Bolder"))
        for c in answer.citations:
            url = urls[c.n]
            label = source_label(c)
            runs = [_link_run(label, url, size="Small") if url else _run(label, size="Small")]
            if c.updated:
                runs.append(_run(f" · updated {c.updated[:10]}", size="Small"))
            body.append(_rich_block(runs, spacing="None"))
    if shows_searched(answer):
        searched = ", ".join(f"“{as_searched(q)}”" for q in answer.searched[:8])
        body.append(teams_plain(f"🔎 I searched for {searched}", isSubtle=True, size="Small"))
    if answer.ticket:
        tid = str(answer.ticket.get("id", ""))
        link = answer.ticket.get("link")
        body.append(
            _rich_block(
                [_run("🎫 Ticket "), _link_run(tid, link) if link else _run(tid), _run(" filed.")]
            )
        )
    if answer.pending_action:
        pa = answer.pending_action
        runs = [
            _run(
                "Open this ticket?" if answer.status == "needs_confirmation" else "Open a ticket?",
                weight="Bolder",
            )
        ]
        if answer.status != "needs_confirmation":
            runs.append(_run(" " + pa.title))
        body.append(_rich_block(runs, spacing="Medium"))
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
        body.append(teams_plain(f"⚠️ {notice}", isSubtle=True, size="Small"))
    if turn_id and answer.status not in ("error", "smalltalk", "rejected"):
        actions += [
            {
                "type": "Action.Submit",
                "title": "👍",
                "data": {"action": "feedback", "value": "up", "turn_id": turn_id, "asker": asker},
            },
            {
                "type": "Action.Submit",
                "title": "👎",
                "data": {
                    "action": "feedback",
                    "value": "down",
                    "turn_id": turn_id,
                    "asker": asker,
                },
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


def teams_reason_card(turn_id: str, vote: str, asker: str) -> dict:
    """The reasons after a vote as an Adaptive Card: a 👎's reasons as buttons, and a line of the
    asker's own words sent with "Other" (Teams merges the input into the submitted data)."""
    data = {"action": "feedback_reason", "turn_id": turn_id, "value": vote, "asker": asker}
    reasons = [r for r in REASONS if r != "other"] if vote == "down" else []
    return {
        "type": "AdaptiveCard",
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "version": "1.4",
        "body": [
            teams_plain(reason_prompt(vote)),
            {
                "type": "Input.Text",
                "id": "note",
                "placeholder": "Other: in your words" if vote == "down" else "In your words",
                "maxLength": MAX_NOTE,
            },
        ],
        "actions": [
            {
                "type": "Action.Submit",
                "title": REASONS[r] if vote == "down" else "Send",
                "data": {**data, "reason": r},
            }
            for r in [*reasons, "other"]
        ],
    }


ADAPTIVE_CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
