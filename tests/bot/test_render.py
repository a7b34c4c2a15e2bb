"""Answer → Block Kit / Adaptive Card: pure functions, checked against the platforms' limits."""

from __future__ import annotations

import json

from agent.turns import Answer, Citation, PendingAction, as_searched
from bot.chat import render, slack_blocks, teams_cards
from testing.slack import blocks_text


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
    return blocks_text(blocks)


def rich_elements(block: dict) -> list[dict]:
    assert block["type"] == "rich_text", block
    return [e for section in block["elements"] for e in section["elements"]]


def test_markers_become_links_and_sources_show_title_breadcrumbs_and_date():
    answer = Answer(
        "You may carry over 10 days [1]. Older rule: 5 [2].",
        "answered",
        [cite(1), cite(2, link="https://wiki.example/leave", page=4)],
    )
    blocks = slack_blocks.slack_blocks(answer, links=links, turn_id="t1")
    assert rich_elements(blocks[0]) == [
        {"type": "text", "text": "You may carry over 10 days "},
        {
            "type": "link",
            "url": "https://bot.example/docs/handbook/hr/doc-1.md?sig=x#section-1",
            "text": "[1]",
        },
        {"type": "text", "text": ". Older rule: 5 "},
        {"type": "link", "url": "https://wiki.example/leave", "text": "[2]"},
        {"type": "text", "text": "."},
    ]
    text = all_text(blocks)
    assert (
        "<https://bot.example/docs/handbook/hr/doc-1.md?sig=x#section-1|[1] Doc 1 — Doc 1 > Section 1> · updated 2026-01-15"
        in text
    )
    assert (
        "<https://wiki.example/leave|[2] Doc 2 — Doc 2 > Section 2, p. 4> · updated 2026-01-15"
        in text
    )
    actions = [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert actions == [render.FEEDBACK_UP, render.FEEDBACK_DOWN]


def test_default_links_only_use_web_urls():
    answer = Answer(
        "See [1] and [2].", "answered", [cite(1), cite(2, link="https://wiki.example/x")]
    )
    blocks = slack_blocks.slack_blocks(answer)
    assert all_text(blocks[:1]) == "See [1] and <https://wiki.example/x|[2]>."


def test_text_is_literal_in_blocks_and_inert_in_the_notification_text():
    answer = Answer(
        "Use <script> & **bold** <!channel> things [1]", "answered", [cite(1, title="A|B <c>")]
    )
    blocks = slack_blocks.slack_blocks(answer, links=links)
    first = rich_elements(blocks[0])
    assert first[0] == {"type": "text", "text": "Use <script> & **bold** <!channel> things "}
    assert "[1] A|B <c> —" in all_text(blocks)
    fallback = slack_blocks.slack_text(answer)
    assert "<" not in fallback and ">" not in fallback and "*" not in fallback
    assert "&lt;!channel&gt;" in fallback and "∗∗bold∗∗" in fallback


def test_long_answers_and_many_sources_fit_block_kit_limits():
    sentence = "This sentence is part of a very long answer about the leave policy [1]. "
    answer = Answer(
        sentence * 700,
        "answered",
        [cite(n) for n in range(1, 80)],
        pending_action=PendingAction("act1", "create_ticket", "alice", "T", "B", 0.0),
    )
    blocks = slack_blocks.slack_blocks(answer, links=links, turn_id="t")
    assert len(blocks) <= slack_blocks.MAX_BLOCKS
    for b in blocks:
        if b["type"] == "section":
            assert len(b["text"]["text"]) <= slack_blocks.MAX_SECTION_TEXT
        if b["type"] == "rich_text":
            assert sum(len(e["text"]) for e in rich_elements(b)) <= slack_blocks.MAX_SECTION_TEXT
            assert all(e["text"] for e in rich_elements(b))  # Slack rejects empty elements
        if b["type"] == "context":
            assert len(b["elements"][0]["text"]) <= 3000
    assert {render.CONFIRM, render.CANCEL, render.FEEDBACK_UP} <= {
        e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]
    }
    assert len(slack_blocks.slack_text(answer)) <= slack_blocks.MAX_MESSAGE_TEXT


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
    blocks = slack_blocks.slack_blocks(answer, asker="alice", turn_id="t")
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
    blocks = slack_blocks.slack_blocks(answer, question="How do I bake a cake?", turn_id="t")
    text = all_text(blocks)
    assert "I searched for “How do I bake a cake?”, “bake cake recipe”" in text
    assert "Open a ticket? How do I bake a cake?" in text
    # when the answer already lists the searches, they are not repeated
    answer.text = "I don't know: I searched for “How do I bake a cake?”, “bake cake recipe” and found nothing."
    assert all_text(slack_blocks.slack_blocks(answer)).count("bake cake recipe") == 1
    assert "🔎" not in json.dumps(teams_cards.teams_card(answer), ensure_ascii=False)
    # without a prefilled action, the adapter's "ask a person" button carries the question
    answer.pending_action = None
    offer = [
        e
        for b in slack_blocks.slack_blocks(answer, question="How do I bake a cake?")
        if b["type"] == "actions"
        for e in b["elements"]
    ]
    assert (
        offer[0]["action_id"] == render.TICKET_OFFER
        and offer[0]["value"] == "How do I bake a cake?"
    )


def test_a_long_search_is_shown_shortened_and_not_repeated_when_the_answer_shows_it():
    long = "word " * 60 + "so may I take the day off?"
    shown = as_searched(long)
    assert len(shown) <= 170 and shown.startswith("word") and shown.endswith("take the day off?")
    assert " … " in shown and as_searched("short question?") == "short question?"
    answer = Answer(f"I don't know: I searched for “{shown}” and found nothing.", "unknown", [])
    answer.searched = [long]
    assert not render.shows_searched(answer)  # the text already lists it
    answer.text = "I don't know."
    assert shown in all_text(slack_blocks.slack_blocks(answer)) and long not in all_text(
        slack_blocks.slack_blocks(answer)
    )
    assert shown in json.dumps(teams_cards.teams_card(answer), ensure_ascii=False)
    # a search holding a marker is listed with the marker shown as text ("［1］"), as the loop does
    answer.searched = ["What does footnote [1] of the policy mean?"]
    answer.text = "I don't know: I searched for “What does footnote ［1］ of the policy mean?”."
    assert not render.shows_searched(answer)


def test_note_notice_and_filed_ticket_are_shown():
    answer = Answer(
        "OK [1]",
        "answered",
        [cite(1)],
        note="Some documents only you can read may answer this better — ask me in a DM.",
        ticket={"id": "HELP-1001", "link": "https://desk.example/tickets/HELP-1001"},
    )
    text = all_text(slack_blocks.slack_blocks(answer, notice="I can't remember"))
    assert "ask me in a DM" in text and "⚠️ I can't remember" in text
    assert "🎫 Ticket <https://desk.example/tickets/HELP-1001|HELP-1001> filed." in text
    # the note for the asker alone is never part of the message
    answer.private_note = "only for you"
    assert "only for you" not in json.dumps(slack_blocks.slack_blocks(answer), ensure_ascii=False)
    assert "only for you" not in json.dumps(teams_cards.teams_card(answer), ensure_ascii=False)


def test_smalltalk_and_errors_get_no_feedback_buttons():
    for status in ("smalltalk", "error", "rejected"):
        blocks = slack_blocks.slack_blocks(Answer("Hi!", status), turn_id="t")
        assert not [b for b in blocks if b["type"] == "actions"]


def test_feedback_buttons_carry_the_turn_and_its_asker():
    blocks = slack_blocks.slack_blocks(Answer("Ten days.", "answered"), turn_id="t9", asker="alice")
    (feedback,) = [b for b in blocks if b.get("block_id", "").startswith("feedback:")]
    assert [json.loads(e["value"]) for e in feedback["elements"]] == [{"t": "t9", "u": "alice"}] * 2


def test_reasons_after_a_down_vote_are_buttons_and_a_line_of_text_sent_with_enter():
    blocks = slack_blocks.slack_reason_blocks("t9", "down", "alice")
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    reasons = [json.loads(e["value"])["r"] for e in actions["elements"]]
    assert reasons == ["wrong", "outdated", "incomplete", "unanswered"]
    assert all(e["action_id"] == render.FEEDBACK_REASON for e in actions["elements"])
    (other,) = [b for b in blocks if b["type"] == "input"]
    # Block Kit: an input block in a message must dispatch its action
    assert other["dispatch_action"] is True
    assert other["element"]["type"] == "plain_text_input"
    assert slack_blocks.parse_other_block(other["block_id"]) == ("down", "t9", "alice")
    assert slack_blocks.parse_other_block("feedback_other:sideways:t9:alice") is None
    # after a 👍 only the asker's own words are asked for
    assert [b["type"] for b in slack_blocks.slack_reason_blocks("t9", "up", "alice")] == [
        "section",
        "input",
    ]
    card = teams_cards.teams_reason_card("t9", "down", "alice")
    assert [a["data"]["reason"] for a in card["actions"]] == [
        "wrong",
        "outdated",
        "incomplete",
        "unanswered",
        "other",
    ]
    assert {a["data"]["action"] for a in card["actions"]} == {"feedback_reason"}
    assert [b["id"] for b in card["body"] if b["type"] == "Input.Text"] == ["note"]


def card_runs(card: dict) -> list[dict]:
    return [r for b in card["body"] if b["type"] == "RichTextBlock" for r in b["inlines"]]


def card_text(card: dict) -> str:
    return "\n".join("".join(r["text"] for r in b["inlines"]) for b in card["body"])


def test_teams_card_has_answer_sources_and_submit_actions():
    action = PendingAction("a-7", "create_ticket", "alice", "Printer jams", "Question: ...", 0.0)
    answer = Answer(
        "Ten days [1].",
        "needs_confirmation",
        [cite(1, page=3)],
        pending_action=action,
        note="ask me in a DM",
    )
    card = teams_cards.teams_card(answer, links=links, turn_id="t9", asker="alice")
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    assert card["body"][0] == {
        "type": "RichTextBlock",
        "inlines": [
            {"type": "TextRun", "text": "Ten days "},
            {
                "type": "TextRun",
                "text": "[1]",
                "selectAction": {
                    "type": "Action.OpenUrl",
                    "url": "https://bot.example/docs/handbook/hr/doc-1.md?sig=x#section-1",
                },
            },
            {"type": "TextRun", "text": "."},
        ],
    }
    source = next(r for r in card_runs(card) if r["text"].startswith("[1] Doc 1"))
    assert source["text"] == "[1] Doc 1 — Doc 1 > Section 1, p. 3"
    assert source["selectAction"]["url"].startswith("https://bot.example/docs/")
    assert "· updated 2026-01-15" in card_text(card)
    assert "ask me in a DM" in card_text(card)
    data = [a["data"] for a in card["actions"]]
    assert {"action": "confirm", "action_id": "a-7", "asker": "alice"} in data
    assert {"action": "cancel", "action_id": "a-7", "asker": "alice"} in data
    assert {"action": "feedback", "value": "up", "turn_id": "t9", "asker": "alice"} in data
    assert all(a["type"] == "Action.Submit" for a in card["actions"])
    assert json.dumps(card)  # serialisable as is


def test_teams_card_never_reads_document_text_as_markdown():
    card = teams_cards.teams_card(
        Answer(
            "**Urgent** [Verify now](https://evil.example) {{DATE(2026-01-01T00:00:00Z)}} x [1]",
            "answered",
            [cite(1, title="Rules [draft](https://evil.example)")],
        ),
        links=lambda c: "https://x.example/a b(c)",
    )
    assert not [b for b in card["body"] if b["type"] == "TextBlock"]  # TextBlocks read Markdown
    links_to = [r["selectAction"]["url"] for r in card_runs(card) if "selectAction" in r]
    assert links_to and all(u == "https://x.example/a%20b(c)" for u in links_to)
    # a URL in document text is a monospace run that links nowhere; the source line's label is
    # only the label of our own link
    urls = [r for r in card_runs(card) if r["text"] == "https://evil.example"]
    assert urls and all("selectAction" not in r and r["fontType"] == "Monospace" for r in urls)
    assert "{{" not in json.dumps(card)
