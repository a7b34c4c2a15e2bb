"""The gap report over the real embedders and the sample handbook: unanswered questions grouped
by meaning across languages, stable names, closest documents every asker may read, outdated
answers, stale documents and conflicts the answers noted."""

from __future__ import annotations

import random

import pytest

from agent.assistant import build_assistant
from agent.turns import Turn
from bot.reports.feedback import (
    CitedDocument,
    ConflictNote,
    FeedbackRecord,
    FeedbackStore,
    TurnRecord,
    ago,
)
from bot.reports.gaps import build_report, index_access
from ingest.settings import DatabaseSettings

ALICE = ("hr", "managers")
BOB = ("engineering",)
VACATION = [
    "How many vacation days can I carry over to next year?",
    "Wie viele Urlaubstage kann ich ins nächste Jahr übertragen?",
    "Сколько дней отпуска можно перенести на следующий год?",
    "Скільки днів відпустки можна перенести на наступний рік?",
    "Чи можна перенести невикористані дні відпустки?",
]
PARKING = [
    "How do I get reimbursed for a parking ticket during a business trip?",
    "Wie bekomme ich Parkgebühren auf Dienstreisen erstattet?",
    "Как компенсировать оплату парковки в командировке?",
    "Як отримати компенсацію за парковку у відрядженні?",
]
OTHER = [
    "What is the wifi password in the Berlin office?",
    "Як налаштувати VPN на ноутбуці?",
    "Which VPN client should I install on Linux?",
    "Скільки коштує обід у їдальні?",
]


def record(
    store: FeedbackStore,
    question: str,
    *,
    status: str = "unknown",
    groups: tuple[str, ...] = ALICE,
    user: str = "alice",
    cited: tuple[CitedDocument, ...] = (),
    vote: str = "",
    reason: str = "",
    conflicts: tuple[ConflictNote, ...] = (),
    at: str = "",
) -> None:
    turn_id = f"t{store.counts()[0]}"
    store.record_turn(
        TurnRecord(
            turn_id, "slack", f"c-{user}", user, groups, "dm", question, status, "…", cited,
            at=at or ago(1), conflicts=conflicts,
        )
    )  # fmt: skip
    if vote:
        store.record_feedback(FeedbackRecord(turn_id, user, vote, reason))  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path):
    st = FeedbackStore.open(DatabaseSettings(), tmp_path)
    yield st
    st.close()


def report_of(store, deps, **kw):
    embed, search, lookup = index_access(deps)
    return build_report(
        store.turns_since(ago(7)), embed=embed, search=search, lookup=lookup, since=ago(7), **kw
    )


def groups_of(report) -> list[set[str]]:
    return [set(t.examples) for t in report.topics]


def test_unanswered_questions_group_by_meaning_across_languages(store, handbook_deps):
    questions = VACATION + PARKING + OTHER
    random.Random(7).shuffle(questions)
    for i, q in enumerate(questions):
        # unknown, partial, or answered but rated "didn't answer" / "incomplete": all are gaps
        kind = i % 3
        if kind == 0:
            record(store, q, status="unknown", user=f"u{i}")
        elif kind == 1:
            record(store, q, status="partial", user=f"u{i}")
        else:
            record(store, q, status="answered", user=f"u{i}", vote="down", reason="unanswered")
    record(store, "Where is the Kyiv office?", status="answered", user="x")  # answered: no gap
    report = report_of(store, handbook_deps, examples=10)
    assert report.unanswered == len(questions) and report.turns == len(questions) + 1
    grouped = {frozenset(t.examples): t for t in report.topics}
    assert frozenset(VACATION) in grouped, groups_of(report)
    assert frozenset(PARKING) in grouped, groups_of(report)
    vacation, parking = grouped[frozenset(VACATION)], grouped[frozenset(PARKING)]
    assert report.topics[:2] == [vacation, parking]  # by count
    assert (vacation.count, vacation.askers) == (5, 5)
    assert not any(frozenset(OTHER) <= g for g in grouped)  # unrelated questions stay apart
    # a name from its most characteristic words, as people typed them; the same every time
    words = " ".join(VACATION).lower()
    assert len(vacation.terms) == 3 and all(t in words for t in vacation.terms)
    assert vacation.name == " · ".join(vacation.terms)
    assert report_of(store, handbook_deps, examples=10).topics[0].name == vacation.name
    assert vacation.closest[0].doc_id.startswith("handbook/hr/")


def test_closest_documents_are_ones_every_asker_of_the_group_may_read(store, handbook_deps):
    salary = [
        "What is the salary band for a senior engineer?",
        "Welche Gehaltsspanne hat ein Senior Engineer?",
    ]
    record(store, salary[0], user="alice", groups=ALICE)
    record(store, salary[1], user="alice", groups=ALICE)
    alone = report_of(store, handbook_deps)
    assert "handbook/hr/salary-bands.pdf" in [d.doc_id for d in alone.topics[0].closest]
    record(store, salary[0], user="bob", groups=BOB)  # bob may not read HR's salary bands
    shared = report_of(store, handbook_deps)
    [topic] = shared.topics
    assert topic.askers == 2 and topic.closest
    for d in topic.closest:
        assert handbook_deps.index.chunks(d.doc_id, BOB), d.doc_id
        assert handbook_deps.index.chunks(d.doc_id, ALICE), d.doc_id


def test_outdated_stale_and_conflicting_documents(store, handbook_deps):
    faq = CitedDocument("handbook/hr/faq-2024.html", "HR FAQ (2024)")
    leave = CitedDocument("handbook/hr/leave-policy-2026.md", "Leave Policy 2026")
    conflict = ConflictNote(
        faq.doc_id, faq.title, "2024-02-10", leave.doc_id, leave.title, "2026-01-15", "Note: …"
    )
    for i in range(3):
        record(store, f"question {i}", status="answered", cited=(faq, leave), conflicts=(conflict,))
    record(store, "How much is the mileage rate?", status="answered", cited=(faq,), vote="down",
           reason="outdated")  # fmt: skip
    record(store, "Can I bring my dog?", status="answered", cited=(leave,), vote="down",
           reason="wrong")  # fmt: skip
    report = report_of(store, handbook_deps)
    assert [(o.question, [d.doc_id for d in o.cited]) for o in report.outdated] == [
        ("How much is the mileage rate?", [faq.doc_id])
    ]
    # cited 4 times, updated 2024: stale; the 2026 policy, cited 4 times too, is not
    assert [(s.doc.doc_id, s.citations, s.doc.updated) for s in report.stale] == [
        (faq.doc_id, 4, "2024-02-10")
    ]
    assert [(c.older.doc_id, c.newer.doc_id, c.count) for c in report.conflicts] == [
        (faq.doc_id, leave.doc_id, 3)
    ]
    assert not report.topics  # nothing went unanswered
    # each document's owner, as the index holds it now: what routes an item to their digest
    assert [d.owner for d in report.outdated[0].cited] == ["people@northwind.example"]
    assert report.stale[0].doc.owner == "people@northwind.example"
    [c] = report.conflicts
    assert (c.older.owner, c.newer.owner) == ("people@northwind.example", "alice@northwind.example")


async def test_an_answer_that_notes_a_conflict_carries_it(handbook_deps):
    assistant = build_assistant(handbook_deps)
    answer = await assistant.answer(
        Turn("bob", "After how many sick days do I need a medical certificate?", BOB)
    )
    assert answer.conflicts, answer.text
    [c] = answer.conflicts
    assert c.older_updated < c.newer_updated and c.note in answer.text


async def test_the_digest_as_posted_to_slack(tmp_path, handbook_deps):
    """The handbook's report, posted through the loopback Slack Web API; ``pytest -s`` prints
    it as it reads in the channel (docs/feedback.md shows one)."""
    import datetime as dt

    from pydantic import SecretStr

    from bot.reports.digest import post_digest, report_builder
    from bot.settings import DigestSettings, Settings, SlackSettings
    from testing.slack import FakeSlackAPI, blocks_text

    AT = "2026-11-25T10:00:00.000+00:00"
    from bot.identity.directory import FileDirectory
    from bot.settings import HANDBOOK_DIRECTORY

    # the owners' channel: alice (hr, managers), who asked what is reported here, looked up like
    # any channel's members (what a channel of mixed readers is shown: tests/security/)
    slack = await FakeSlackAPI({"U0ALICE01": {}}, {"COWNERS": ["U0ALICE01"]}).start()
    settings = Settings(
        data_dir=tmp_path,
        slack=SlackSettings(
            bot_token=SecretStr("xoxb-digest"), signing_secret=SecretStr("s" * 32),
            api_url=slack.api_url,
        ),
        digest=DigestSettings(slack_channel="COWNERS"),
    )  # fmt: skip
    store = FeedbackStore.open(settings.database, tmp_path)
    for i, q in enumerate(VACATION + PARKING + OTHER):
        record(store, q, user=f"u{i}", status="unknown" if i % 2 else "partial", at=AT)
    record(store, "Can I expense a <!channel> *team* dinner? https://evil.example/x",
           status="answered", vote="down", reason="incomplete", at=AT)  # fmt: skip
    faq = CitedDocument("handbook/hr/faq-2024.html", "HR FAQ (2024)")
    leave = CitedDocument("handbook/hr/leave-policy-2026.md", "Leave Policy 2026")
    note = ConflictNote(faq.doc_id, faq.title, "2024-02-10", leave.doc_id, leave.title,
                        "2026-01-15", "Note: HR FAQ (2024) (updated 2024-02-10) gives 3 days; "
                        "Leave Policy 2026 (updated 2026-01-15) is newer and applies.")  # fmt: skip
    for user in ("bob", "carol", "dave"):
        record(store, "After how many sick days do I need a medical certificate?", user=user,
               status="answered", cited=(leave, faq), conflicts=(note,), at=AT)  # fmt: skip
    record(store, "Is the parental leave still 12 weeks?", status="answered", cited=(faq,),
           vote="down", reason="outdated", at=AT)  # fmt: skip
    store.close()
    try:
        outcome = await post_digest(
            settings,
            lambda: FeedbackStore.open(settings.database, tmp_path),
            report_builder(settings, handbook_deps),
            now=dt.datetime(2026, 12, 1, 7, tzinfo=dt.UTC),  # the week of Nov 23 is due
            directory=FileDirectory.load(HANDBOOK_DIRECTORY),
        )
        [post] = slack.of("chat.postMessage", "COWNERS")
    finally:
        await slack.close()
    assert outcome.posted and outcome.report is not None
    shown = blocks_text(post.args["blocks"])
    print("\n" + post.args["text"] + "\n" + shown)
    assert "5 questions, 5 people" in shown
    assert "left out" not in shown  # alice may read everything her own questions were about
    assert "HR FAQ (2024) — cited 4 times, updated 2024-02-10" in shown
    assert "Is the parental leave still 12 weeks?" in shown
    assert "HR FAQ (2024) (2024-02-10) vs Leave Policy 2026 (2026-01-15)" in shown
    elements = [
        e
        for b in post.args["blocks"]
        if b["type"] == "rich_text"
        for s in b["elements"]
        for e in s["elements"]
    ]
    assert {e["type"] for e in elements} == {"text"}  # no mention, no link
    assert any(e["text"].startswith("https://evil") and e["style"]["code"] for e in elements)
