"""Answer → Block Kit / Adaptive Card: pure functions, checked against the platforms' limits."""

from __future__ import annotations

import json
import re

from agent.turns import Answer, Citation, PendingAction
from bot import render


def cite(n: int, link: str = "", **kw) -> Citation:
    base = dict(
        n=n,
        doc_id=f"handbook/hr/doc-{n}.md",
        title=f"Doc {n}",
        breadcrumbs=f"Doc {n} > Section {n}",
        source=f"handbook/hr/doc-{n}.md",
        link=link or f"/srv/handbook/hr/doc-{n}.md#section-{n}",
        page=None,
        anchor=f"section-{n}",
        quote="q",
        updated="2026-01-15T00:00:00",
    )
    base.update(kw)
    return Citation(**base)


def links(c: Citation) -> str:
    """Like ``LinkSigner.link``: a web source keeps its URL, a local file gets a signed /docs link."""
    return (
        c.link
        if c.link.startswith("https://")
        else f"https://bot.example/docs/{c.doc_id}?sig=x#{c.anchor}"
    )


def all_text(blocks: list[dict]) -> str:
    out = []
    for b in blocks:
        if isinstance(b.get("text"), dict):
            out.append(b["text"]["text"])
        out += [
            e["text"]["text"] if isinstance(e.get("text"), dict) else e.get("text", "")
            for e in b.get("elements", [])
        ]
    return "\n".join(out)


def test_markers_become_links_and_sources_show_title_breadcrumbs_and_date():
    answer = Answer(
        "You may carry over 10 days [1]. Older rule: 5 [2].",
        "answered",
        [cite(1), cite(2, link="https://wiki.example/leave", page=4)],
    )
    blocks = render.slack_blocks(answer, links=links, turn_id="t1")
    assert blocks[0]["text"]["text"] == (
        "You may carry over 10 days <https://bot.example/docs/handbook/hr/doc-1.md?sig=x#section-1|[1]>. "
        "Older rule: 5 <https://wiki.example/leave|[2]>."
    )
    text = all_text(blocks)
    assert (
        "<https://bot.example/docs/handbook/hr/doc-1.md?sig=x#section-1|[1] Doc 1 — Doc 1 &gt; Section 1> · updated 2026-01-15"
        in text
    )
    assert (
        "<https://wiki.example/leave|[2] Doc 2 — Doc 2 &gt; Section 2, p. 4> · updated 2026-01-15"
        in text
    )
    actions = [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert actions == [render.FEEDBACK_UP, render.FEEDBACK_DOWN]


def test_default_links_only_use_web_urls():
    answer = Answer(
        "See [1] and [2].", "answered", [cite(1), cite(2, link="https://wiki.example/x")]
    )
    blocks = render.slack_blocks(answer)
    assert blocks[0]["text"]["text"] == "See [1] and <https://wiki.example/x|[2]>."


def test_user_text_is_escaped_for_mrkdwn():
    answer = Answer("Use <script> & **bold** things [1]", "answered", [cite(1, title="A|B <c>")])
    blocks = render.slack_blocks(answer, links=links)
    assert blocks[0]["text"]["text"].startswith("Use &lt;script&gt; &amp; *bold* things <https://")
    assert "|[1] A¦B &lt;c&gt; —" in all_text(blocks)


def test_long_answers_and_many_sources_fit_block_kit_limits():
    sentence = "This sentence is part of a very long answer about the leave policy [1]. "
    answer = Answer(
        sentence * 700,
        "answered",
        [cite(n) for n in range(1, 80)],
        pending_action=PendingAction("act1", "create_ticket", "alice", "T", "B", 0.0),
    )
    blocks = render.slack_blocks(answer, links=links, turn_id="t")
    assert len(blocks) <= render.MAX_BLOCKS
    for b in blocks:
        if b["type"] == "section":
            assert len(b["text"]["text"]) <= render.MAX_SECTION_TEXT
            assert b["text"]["text"].count("<") == b["text"]["text"].count(
                ">"
            )  # no link cut in half
        if b["type"] == "context":
            assert len(b["elements"][0]["text"]) <= 3000
    assert {render.CONFIRM, render.CANCEL, render.FEEDBACK_UP} <= {
        e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]
    }
    assert len(render.slack_text(answer)) <= render.MAX_MESSAGE_TEXT


def test_split_text_prefers_paragraph_and_sentence_ends():
    text = "First paragraph. " * 10 + "\n\n" + "Second one. " * 10
    pieces = render.split_text(text, 200)
    assert all(len(p) <= 200 for p in pieces)
    assert pieces[0].endswith("First paragraph.")
    assert "".join(pieces).replace(" ", "") == text.replace(" ", "").replace("\n", "")


def test_pending_ticket_buttons_carry_the_action_and_the_asker():
    action = PendingAction("a-123", "create_ticket", "alice", "VPN crashes", "Question: ...", 0.0)
    answer = Answer(
        "I can open this ticket for you:\n*VPN crashes*",
        "needs_confirmation",
        pending_action=action,
    )
    blocks = render.slack_blocks(answer, asker="alice", turn_id="t")
    confirm = next(
        e
        for b in blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == render.CONFIRM
    )
    assert json.loads(confirm["value"]) == {"a": "a-123", "u": "alice"}
    assert confirm["style"] == "primary"
    assert any(b.get("block_id") == "pending:a-123" for b in blocks)


def test_i_dont_know_shows_the_searches_and_the_prefilled_ticket():
    action = PendingAction(
        "a-9", "create_ticket", "bob", "How do I bake a cake?", "Question: ...", 0.0
    )
    answer = Answer(
        "I don't know: I searched for …",
        "unknown",
        [],
        pending_action=action,
        searched=["How do I bake a cake?", "bake cake recipe"],
    )
    blocks = render.slack_blocks(answer, question="How do I bake a cake?", turn_id="t")
    text = all_text(blocks)
    assert "I searched for “How do I bake a cake?”, “bake cake recipe”" in text
    assert "*Open a ticket?* How do I bake a cake?" in text
    # when the answer already lists the searches, they are not repeated
    answer.text = "I don't know: I searched for “How do I bake a cake?”, “bake cake recipe” and found nothing."
    assert all_text(render.slack_blocks(answer)).count("bake cake recipe") == 1
    assert "🔎" not in json.dumps(render.teams_card(answer), ensure_ascii=False)
    # without a prefilled action, the adapter's "ask a person" button carries the question
    answer.pending_action = None
    offer = [
        e
        for b in render.slack_blocks(answer, question="How do I bake a cake?")
        if b["type"] == "actions"
        for e in b["elements"]
    ]
    assert (
        offer[0]["action_id"] == render.TICKET_OFFER
        and offer[0]["value"] == "How do I bake a cake?"
    )


def test_note_notice_and_filed_ticket_are_shown():
    answer = Answer(
        "OK [1]",
        "answered",
        [cite(1)],
        note="Some documents only you can read may answer this better — ask me in a DM.",
        ticket={"id": "HELP-1001", "link": "https://desk.example/tickets/HELP-1001"},
    )
    text = all_text(render.slack_blocks(answer, notice="I can't remember"))
    assert "ask me in a DM" in text and "⚠️ I can't remember" in text
    assert "🎫 Ticket <https://desk.example/tickets/HELP-1001|HELP-1001> filed." in text


def test_smalltalk_and_errors_get_no_feedback_buttons():
    for status in ("smalltalk", "error"):
        blocks = render.slack_blocks(Answer("Hi!", status), turn_id="t")
        assert not [b for b in blocks if b["type"] == "actions"]


def test_teams_card_has_answer_sources_and_submit_actions():
    action = PendingAction("a-7", "create_ticket", "alice", "Printer jams", "Question: ...", 0.0)
    answer = Answer(
        "Ten days [1].",
        "needs_confirmation",
        [cite(1, page=3)],
        pending_action=action,
        note="ask me in a DM",
    )
    card = render.teams_card(answer, links=links, turn_id="t9", asker="alice")
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    assert card["body"][0] == {"type": "TextBlock", "text": "Ten days [1].", "wrap": True}
    texts = [b["text"] for b in card["body"]]
    assert (
        "[1] [Doc 1 — Doc 1 > Section 1, p. 3](https://bot.example/docs/handbook/hr/doc-1.md?sig=x#section-1) · updated 2026-01-15"
        in texts
    )
    assert any("ask me in a DM" in t for t in texts)
    data = [a["data"] for a in card["actions"]]
    assert {"action": "confirm", "action_id": "a-7", "asker": "alice"} in data
    assert {"action": "cancel", "action_id": "a-7", "asker": "alice"} in data
    assert {"action": "feedback", "value": "up", "turn_id": "t9"} in data
    assert all(a["type"] == "Action.Submit" for a in card["actions"])
    assert json.dumps(card)  # serialisable as is


def test_teams_card_link_labels_cannot_break_markdown():
    card = render.teams_card(
        Answer("x [1]", "answered", [cite(1, title="Rules [draft]")]),
        links=lambda c: "https://x.example/a b(c)",
    )
    line = card["body"][-1]["text"]
    assert re.fullmatch(
        r"\[1\] \[Rules \(draft\) — Doc 1 > Section 1\]\(https://x\.example/a%20b%28c%29\) · updated 2026-01-15",
        line,
    )
