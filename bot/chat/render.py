"""An ``Answer`` as chat UI: Slack Block Kit blocks and a Teams Adaptive Card. Pure functions.

Both renderings show the same things: the answer with its ``[n]`` markers as links, the sources
("[n] Title — breadcrumbs", updated date), the note, what was searched when the answer is
"I don't know", Confirm / Cancel for a pending ticket and 👍 / 👎 feedback. After a vote the asker
is offered its reasons (``slack_reason_blocks``, ``teams_reason_card``).

Everything that came from a document (quotes, titles, breadcrumbs, the queries built from them)
is data, never markup. So it never goes through a parser that could read it as markup:

- Slack: the answer and the sources are ``rich_text`` blocks, whose ``text`` elements are shown
  literally — a ``<!channel>``, ``<@U…>``, ``<url|label>`` or ``*bold*`` in a document stays
  characters. URLs inside document text become code-styled text (inert); the only ``link``
  elements are Footnote's own citation, source and ticket links. Other texts use ``plain_text``.
  The notification ``text`` (mrkdwn, no way around it) is escaped, its URLs put in code spans
  and its formatting characters replaced by look-alikes.
- Teams: the answer and the sources are ``RichTextBlock``s of ``TextRun``s (Adaptive Cards do not
  read Markdown there); URLs are monospace runs, ``{{`` (the card's date functions) is broken up;
  the only ``selectAction`` links are Footnote's own.
- A ``[1]`` written inside a document never becomes a marker: the agent shows it as ``［1］``
  (``agent.turns.quoted``), so ``MARKER`` only meets the loop's own markers.

Button ids and values are the contract with the adapters (``bot/chat/slack.py``, ``bot/chat/teams.py``):
Slack ``action_id`` is one of ``CONFIRM``, ``CANCEL``, ``FEEDBACK_UP``, ``FEEDBACK_DOWN``,
``FEEDBACK_REASON``, ``FEEDBACK_OTHER``, ``TICKET_OFFER``; Teams ``Action.Submit`` data carries
``{"action": …, "action_id": …}``. Feedback buttons carry the turn and its asker
(``{"t": turn_id, "u": asker}``): only the asker may rate their turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from urllib.parse import quote

from agent.turns import MARKER, Answer, Citation, PendingAction
from bot.reports.feedback import MAX_NOTE, REASONS

CONFIRM = "footnote_confirm"
CANCEL = "footnote_cancel"
FEEDBACK_UP = "footnote_feedback_up"
FEEDBACK_DOWN = "footnote_feedback_down"
FEEDBACK_REASON = "footnote_feedback_reason"
FEEDBACK_OTHER = "footnote_feedback_other"
TICKET_OFFER = "footnote_ticket_offer"

# Block Kit limits (https://api.slack.com/reference/block-kit/blocks).
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_CONTEXT_TEXT = 2000
MAX_RICH_TEXT = 2500  # characters of text per rich_text block (kept well under message limits)
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_MESSAGE_TEXT = 3900  # the notification / fallback ``text``; Slack truncates far later
TEAMS_MAX_TEXT = 20000  # Teams rejects messages over ~28 KB

PLACEHOLDER = "Looking through the docs…"
NOT_IN_DIRECTORY = (
    "Hi! I can only answer people listed in the company directory, and I couldn't find you there. "
    "Please ask your Footnote admin to add you."
)

Linker = Callable[[Citation], "str | None"]

# Schemes a chat client may turn into a link though no "//" follows them.
_BARE_SCHEMES = (
    "mailto|tel|sms|callto|facetime|skype|sip|sips|xmpp|news|urn|data|javascript|vbscript|file"
    "|blob|about|magnet|webcal|slack|msteams|matrix|intent"
)
# A URL inside text: any scheme with "//" (https, ldap, ftp, smb, …), a bare scheme above, or
# "www.". Trailing punctuation is not part of it.
_URL = re.compile(rf"(?:\b[a-z][a-z0-9+.-]*://|\b(?:{_BARE_SCHEMES}):|\bwww\.)[^\s<>\"'`]+", re.I)
_URL_TAIL = ".,;:!?)]}»”’"
# Characters that show as nothing: zero-width spaces and joiners, the word joiner and invisible
# operators, the byte-order mark, and the bidi controls that reorder what is shown. In a
# document's text they hide a URL from the pattern above, or make a line read otherwise than it
# is; they are dropped from every text that reaches Slack or Teams.
_INVISIBLE = re.compile(r"[\u180e\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def visible(text: str) -> str:
    """``text`` without the characters that show as nothing (``_INVISIBLE``)."""
    return _INVISIBLE.sub("", text)


def default_link(citation: Citation) -> str | None:
    """A citation's own web link; local paths have none until ``bot.web.links`` signs one."""
    return citation.link if citation.link.startswith(("http://", "https://")) else None


def _pieces(text: str, markers: bool = True) -> Iterator[tuple[str, str]]:
    """``("text", s)``, ``("url", s)`` and ``("marker", n)`` pieces of an answer's text, in order
    (the invisible characters dropped first, so none can hide a URL)."""
    text = visible(text)
    pos = 0
    found = []
    for m in _URL.finditer(text):
        url = m.group(0).rstrip(_URL_TAIL)
        found.append((m.start(), m.start() + len(url), "url"))
    if markers:
        found += [
            (m.start(), m.end(), "marker")
            for m in MARKER.finditer(text)
            if not any(s <= m.start() < e for s, e, _ in found)
        ]
    for start, end, kind in sorted(found):
        if start < pos:
            continue
        if start > pos:
            yield "text", text[pos:start]
        yield kind, (text[start + 1 : end - 1] if kind == "marker" else text[start:end])
        pos = end
    if pos < len(text):
        yield "text", text[pos:]


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


# ---------------------------------------------------------------------------------------------
# Slack


def slack_escape(text: str) -> str:
    """The three characters Slack's mrkdwn reads as control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# Formatting characters of mrkdwn and look-alikes that are only characters.
_MRKDWN_LOOKALIKES = str.maketrans({"*": "∗", "_": "ˍ", "~": "∼", "`": "ˋ"})


def slack_inert(text: str) -> str:
    """Text for a mrkdwn field that shows as the characters it is: escaped, URLs in code spans,
    formatting characters replaced by look-alikes."""
    out = []
    for kind, piece in _pieces(text, markers=False):
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
    element: dict = {"type": "link", "url": _safe_url(url), "text": visible(text)}
    if style:
        element["style"] = style
    return element


def _safe_url(url: str) -> str:
    return quote(url, safe=":/?#[]@!$&'()*+,;=%~-._")


def _rich_inline(text: str, urls: dict[int, str | None], style: dict | None = None) -> list[dict]:
    """Answer text as rich_text elements: literal text, inert (code) URLs, markers as links."""
    elements: list[dict] = []
    for kind, piece in _pieces(text):
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


def _show_searched(answer: Answer) -> bool:
    """On "I don't know", list the searches, unless the answer's text already does."""
    return (
        answer.status == "unknown"
        and bool(answer.searched)
        and not all(q in answer.text for q in answer.searched[:8])
    )


def source_label(c: Citation) -> str:
    """ "[n] Title — breadcrumbs, p. N" (breadcrumbs left out when they are just the title)."""
    label = f"[{c.n}] {c.title}" + (
        f" — {c.breadcrumbs}" if c.breadcrumbs and c.breadcrumbs != c.title else ""
    )
    return label + (f", p. {c.page}" if c.page else "")


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


def reason_prompt(vote: str) -> str:
    return "Thanks! What was wrong with it?" if vote == "down" else "Thanks! Anything to add?"


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
    if _show_searched(answer):
        searched = ", ".join(f"“{q}”" for q in answer.searched[:8])
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


# ---------------------------------------------------------------------------------------------
# A streamed draft (Slack's markdown_text, Teams' streaming text): Markdown that shows as the
# characters it is. Every control character of Markdown, mrkdwn and Slack's <…> syntax becomes a
# look-alike (so no mention, link, heading or emphasis can form, even across two chunks), and a
# word that a client would turn into a link (a URL, a bare domain) goes in a code span. It works
# word by word, so chunks cut at whitespace come out the same as the whole text.

_DRAFT_LOOKALIKES = str.maketrans(
    {
        "<": "‹",
        ">": "›",
        "&": "＆",
        "@": "＠",
        "*": "∗",
        "_": "ˍ",
        "~": "∼",
        "`": "ˋ",
        "[": "［",
        "]": "］",
        "#": "＃",
        "|": "｜",
        "\\": "＼",
        "{": "｛",
        "}": "｝",
    }
)
_LINKISH = re.compile(rf"://|^www\.|[A-Za-z0-9-]\.[A-Za-z]{{2,}}\b|^(?:{_BARE_SCHEMES}):", re.I)


def draft_markdown(text: str) -> str:
    """``text`` (whole words and the whitespace between them) as inert Markdown, one line."""
    out = []
    for piece in re.split(r"(\s+)", visible(text)):
        if not piece or piece.isspace():
            out.append(" " if piece else "")
        elif _LINKISH.search(piece):
            inner = piece.replace("`", "").translate(_DRAFT_LOOKALIKES)
            out.append(f"`{inner}`")
        else:
            out.append(piece.translate(_DRAFT_LOOKALIKES))
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Teams


def _teams_inert(text: str) -> str:
    """Adaptive Cards read ``{{DATE(…)}}`` / ``{{TIME(…)}}`` even in text runs: break the braces."""
    return visible(text).replace("{{", "{\u200b{")


def _run(text: str, **style) -> dict:
    return {"type": "TextRun", "text": _teams_inert(text), **style}


def _link_run(text: str, url: str, **style) -> dict:
    return {
        "type": "TextRun",
        "text": _teams_inert(text),
        "selectAction": {"type": "Action.OpenUrl", "url": _safe_url(url)},
        **style,
    }


def _teams_runs(text: str, urls: dict[int, str | None], **style) -> list[dict]:
    runs: list[dict] = []
    for kind, piece in _pieces(text):
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
    if _show_searched(answer):
        searched = ", ".join(f"“{q}”" for q in answer.searched[:8])
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
