"""What a feedback export tells its reviewer (hole 12 of the second attack): ``footnote feedback
export`` wrote the titles and ids of documents the reviewer may not read and the asker's comment
verbatim (one quoted salary figures). Cases are written for a named reviewer, as the real handbook
index lets that person read; what they may not read is left out and counted."""

from __future__ import annotations

import shutil

import pytest
from pydantic import SecretStr

from bot.cli import main as footnote
from bot.identity.directory import FileDirectory
from bot.reports.feedback import CitedDocument, FeedbackRecord, FeedbackStore, TurnRecord, ago
from ingest.settings import DatabaseSettings
from tests.security.conftest import DIRECTORY

SALARY = CitedDocument("handbook/hr/salary-bands.pdf", "Salary Bands 2026", "")
REVIEW = CitedDocument(
    "handbook/managers/performance-review-guide.pdf", "Performance Review Guide for Managers", ""
)
LEAVE = CitedDocument("handbook/hr/leave-policy-2026.md", "Leave Policy 2026", "")
SALARY_NOTE = "wrong: the L5 band is EUR 78,000 to 96,000, not what you said"
ALICE_ON_LEAVE = "outdated: HR told me it is 10 days now, see the bands memo"
BOB_ON_LEAVE = "it said 5 days but the page says 10"


def seed(store: FeedbackStore) -> None:
    rows = [
        ("s1", "alice", ("hr", "managers"), "What is the L5 salary band?", (SALARY,), SALARY_NOTE),
        ("r1", "alice", ("hr", "managers"), "How do calibrations work?", (LEAVE, REVIEW), ""),
        ("l1", "alice", ("hr", "managers"), "How many days carry over?", (LEAVE,), ALICE_ON_LEAVE),
        ("l2", "bob", ("engineering",), "How many vacation days carry over?", (LEAVE,), BOB_ON_LEAVE),
    ]  # fmt: skip
    for turn_id, user, groups, question, cited, note in rows:
        store.record_turn(
            TurnRecord(turn_id, "slack", f"slack:T:D{turn_id}", user, groups, "dm", question,
                       "answered", "the answer", cited, at=ago(0.01))
        )  # fmt: skip
        store.record_feedback(FeedbackRecord(turn_id, user, "down", "wrong", note))


@pytest.fixture
def records(tmp_path):
    database = DatabaseSettings(url=SecretStr(f"sqlite:///{tmp_path / 'records.db'}"))
    store = FeedbackStore.open(database, tmp_path)
    seed(store)
    yield store, database
    store.close()


def export_for(handbook, store: FeedbackStore, user: str):
    """What ``feedback export --reviewer USER`` writes, as the handbook's index lets them read."""
    from bot.reports.cases import Reviewer, export_cases

    person = FileDirectory.load(DIRECTORY).find(user)
    assert person is not None
    readable = lambda doc_id: bool(handbook.index.chunks(doc_id, person.principals))  # noqa: E731
    return export_cases(store, FileDirectory.load(DIRECTORY), ago(1), Reviewer(person, readable))


def test_an_export_for_bob_names_nothing_bob_may_not_read(handbook, records):
    store, _ = records
    export = export_for(handbook, store, "bob")
    text = export.text
    for secret in ("Salary Bands", "salary-bands", "Performance Review", "performance-review"):
        assert secret not in text, secret  # was: "# cited: Salary Bands 2026 (handbook/hr/…)"
    assert "78,000" not in text and "L5 salary band" not in text  # the case is left out whole
    assert "calibrations" not in text  # cited a managers-only guide beside the open policy
    # alice reads HR documents bob may not: her words stay out, even on an open document
    assert ALICE_ON_LEAVE not in text and "asker's words are left out" in text
    assert BOB_ON_LEAVE in text  # bob's own words, about what bob may read
    assert [i.id for i in export.items] == ["fb-l1", "fb-l2"]
    assert (export.cases_left_out, export.citations_left_out, export.notes_left_out) == (2, 2, 1)


def test_an_export_for_hr_keeps_what_hr_may_read(handbook, records):
    store, _ = records
    export = export_for(handbook, store, "alice")
    assert "Salary Bands 2026" in export.text and SALARY_NOTE in export.text
    assert ALICE_ON_LEAVE in export.text and len(export.items) == 4
    # bob reads engineering documents alice may not: his words could quote them
    assert BOB_ON_LEAVE not in export.text
    assert (export.cases_left_out, export.notes_left_out) == (0, 1)


def test_the_command_needs_a_reviewer_and_counts_what_it_left_out(
    few_documents, records, tmp_path, monkeypatch, capsys
):
    _, database = records
    data_dir = tmp_path / "data"
    shutil.copytree(few_documents, data_dir)  # an index this process does not hold open
    monkeypatch.setenv("FOOTNOTE_DATABASE__URL", database.url.get_secret_value())
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(data_dir))
    assert footnote(["feedback", "export", "--since", "1d"]) == 2
    assert "--reviewer USER" in capsys.readouterr().err
    assert footnote(["feedback", "export", "--since", "1d", "--reviewer", "nobody@x"]) == 2
    assert "not in the directory" in capsys.readouterr().err
    out = tmp_path / "cases.yaml"
    args = ["feedback", "export", "--since", "1d", "--reviewer", "bob@northwind.example"]
    assert footnote([*args, "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "wrote 2 cases" in said and "for bob" in said
    assert "left out for bob: 2 cases citing 2 documents they may not read" in said
    assert "1 askers' comments" in said
    written = out.read_text(encoding="utf-8")
    assert "Salary" not in written and "78,000" not in written and BOB_ON_LEAVE in written
