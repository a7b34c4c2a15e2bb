"""Every URL scheme in document text is inert, and invisible characters are gone (issue 23,
item 13).

Found: the Slack notification ``text`` (mrkdwn, which Slack links by itself) put only http(s),
ftp and www. URLs in code spans: ``ldap://…``, ``mailto:…``, ``javascript:…`` stayed live text,
and zero-width characters inside a URL (``h\\u200bttps://…``) hid it from the pattern, as did
bidi controls that make a line read otherwise than it is ("Trojan Source"). What an answer quotes
goes through the same renderers as here, in every form Slack and Teams get: the notification
text, the rich-text blocks, the plain-text notes, the sources, the streamed draft, the card.
"""

from __future__ import annotations

import json
import re

import pytest

from agent.turns import Answer, Citation
from bot.chat import render, slack_blocks, teams_cards

# What an attacker writes into a wiki page, one per line of the answer.
LIVE = [
    "ldap://evil.example/o=corp",
    "ldaps://evil.example:636/o=corp",
    "mailto:ceo@evil.example?subject=reset",
    "tel:+15551234567",
    "sms:+15551234567",
    "javascript:alert(document.cookie)",
    "data:text/html,hello",
    "file:///etc/passwd",
    "smb://fileserver.evil.example/share",
    "slack://channel?team=T1&id=C1",
    "sip:ceo@evil.example",
    "xmpp:ceo@evil.example",
    "webcal://evil.example/cal.ics",
    "HTTPS://EVIL.EXAMPLE/UPPER",
    "https://evil.example/control",  # already inert before: the control
]
INVISIBLE = {
    "zero-width space in the scheme": "h\u200bttps://evil.example/zw",
    "zero-width joiner before the colon": "ldap\u200d://evil.example/zwj",
    "word joiner in mailto": "mail\u2060to:ceo@evil.example",
    "soft break by BOM": "java\ufeffscript:alert(1)",
    "right-to-left override": "invoice\u202etxt.exe",
    "right-to-left isolate": "pay \u2067evil\u2069 now",
    "left-to-right mark": "a\u200eb",
    "Arabic letter mark": "a\u061cb",
}
SCHEME = re.compile(
    r"\b(?:[a-z][a-z0-9+.-]*://|(?:mailto|tel|sms|javascript|data|file|sip|xmpp):)", re.I
)
HIDDEN = re.compile("[\u180e\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
PROBES = LIVE + list(INVISIBLE.values())


def outside_code(mrkdwn: str) -> str:
    return re.sub(r"`[^`]*`", "", mrkdwn)


@pytest.mark.parametrize("text", PROBES)
def test_the_notification_text_has_every_scheme_in_a_code_span_and_nothing_invisible(text):
    line = slack_blocks.slack_text(Answer(f"See {text} for details [1].", "answered"))
    assert not SCHEME.search(outside_code(line)), line
    assert not HIDDEN.search(line), repr(line)


@pytest.mark.parametrize("text", PROBES)
def test_rich_text_shows_every_scheme_as_code_and_nothing_invisible(text):
    citation = Citation(
        n=1,
        doc_id="wiki/reset.md",
        title=f"Reset \u202e{text}",
        breadcrumbs="IT \u200b> Reset",
        source="wiki",
        link="https://intranet.example/reset",
        page=None,
        anchor="",
        quote="",
        updated="2026-03-01",
    )
    answer = Answer(
        f"See {text} for details [1].",
        "unknown",
        citations=[citation],
        note=f"Also {text}",
        searched=[f"{text} reset"],
    )
    blocks = slack_blocks.slack_blocks(answer, turn_id="t1", question="q")
    assert not HIDDEN.search(json.dumps(blocks, ensure_ascii=False)), blocks
    for block in blocks:
        for section in block.get("elements", []) if block["type"] == "rich_text" else []:
            for element in section["elements"]:
                if element["type"] == "text" and SCHEME.search(element["text"]):
                    assert element.get("style", {}).get("code"), element
    draft = render.draft_markdown(f"See {text} now")
    assert not SCHEME.search(outside_code(draft)) and not HIDDEN.search(draft), draft


@pytest.mark.parametrize("text", PROBES)
def test_the_teams_card_has_every_scheme_monospace_and_nothing_invisible(text):
    card = teams_cards.teams_card(Answer(f"See {text} for details.", "answered"))
    runs = [
        run
        for item in card["body"]
        if item.get("type") == "RichTextBlock"
        for run in item["inlines"]
    ]
    for run in runs:
        shown = run["text"].replace("{\u200b{", "{{")  # the card's own break of {{
        assert not HIDDEN.search(shown), repr(run)
        if SCHEME.search(shown):
            assert run.get("fontType") == "Monospace", run


def test_words_with_a_colon_stay_plain_text():
    """Only schemes are code: "Note: 5 days", "Ratio:3" and "data: 2 GB" read as written."""
    line = slack_blocks.slack_text(
        Answer("Note: 5 days. Ratio:3, data: 2 GB, metadata:x.", "answered")
    )
    assert "`" not in line, line
