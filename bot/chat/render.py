"""What the Slack and Teams renderings of an ``Answer`` share (``slack_blocks.py``, ``teams_cards.py``
beside each adapter): the button ids, the limits both keep, the answer cut into text and markers,
sources' labels, and the streamed draft's inert Markdown. Pure functions.

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

import re
from collections.abc import Callable, Iterator
from urllib.parse import quote

from agent.turns import MARKER, Answer, Citation, as_searched, quoted

CONFIRM = "footnote_confirm"


CANCEL = "footnote_cancel"


FEEDBACK_UP = "footnote_feedback_up"


FEEDBACK_DOWN = "footnote_feedback_down"


FEEDBACK_REASON = "footnote_feedback_reason"


FEEDBACK_OTHER = "footnote_feedback_other"


TICKET_OFFER = "footnote_ticket_offer"


MAX_BUTTON_VALUE = 2000


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


def pieces(text: str, markers: bool = True) -> Iterator[tuple[str, str]]:
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


def safe_url(url: str) -> str:
    return quote(url, safe=":/?#[]@!$&'()*+,;=%~-._")


def shows_searched(answer: Answer) -> bool:
    """On "I don't know", list the searches, unless the answer's text already does."""
    return (
        answer.status == "unknown"
        and bool(answer.searched)
        and not all(quoted(as_searched(q)) in answer.text for q in answer.searched[:8])
    )


def source_label(c: Citation) -> str:
    """ "[n] Title — breadcrumbs, p. N" (breadcrumbs left out when they are just the title)."""
    label = f"[{c.n}] {c.title}" + (
        f" — {c.breadcrumbs}" if c.breadcrumbs and c.breadcrumbs != c.title else ""
    )
    return label + (f", p. {c.page}" if c.page else "")


def reason_prompt(vote: str) -> str:
    return "Thanks! What was wrong with it?" if vote == "down" else "Thanks! Anything to add?"


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
