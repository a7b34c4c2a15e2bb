"""End to end through the CLI: connect Confluence, sync, and check every affected asker's answer
as a page is shared with one person, narrowed to a group, then widened again."""

from __future__ import annotations

import pytest

from bot.cli import main as cli_main
from testing.confluence import LoopbackConfluence, User
from tests.ingest.sources.conftest import ask, sees

pytestmark = [pytest.mark.models, pytest.mark.slow]  # `footnote` builds its own embedders

GARAGE = (
    "<h2>Opening hours</h2><p>The Riverside office garage closes at 22:00 on weekdays and stays "
    "shut on Sundays.</p><h2>Permits</h2><p>Garage permits are renewed every January.</p>"
)
RELOCATION = (
    "<h2>Housing</h2><p>The Lisbon relocation package pays a housing allowance of 2,400 euros a "
    "month for the first year.</p>"
)
ALICE = User("acc-alice", "Alice Moreau", "Alice@Northwind.example")
GARAGE_Q = "When does the Riverside office garage close on weekdays?"
RELOCATION_Q = "How much housing allowance does the Lisbon relocation package pay?"


def test_confluence_pages_answer_exactly_their_readers_through_narrowing_and_widening(
    tmp_path, monkeypatch, capsys
):
    site = LoopbackConfluence().start()
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FOOTNOTE_CONFLUENCE__EMAIL", site.email)
    monkeypatch.setenv("FOOTNOTE_CONFLUENCE__API_TOKEN", site.token)
    try:
        site.space("FAC", groups=["engineering", "hr"])
        site.space("HR", groups=["hr", "managers"])
        garage = site.put("FAC", "Riverside office garage", GARAGE)
        relocation = site.put("HR", "Relocation to Lisbon", RELOCATION)
        site.restrict(relocation, users=[ALICE])  # shared with Alice alone, by e-mail
        add = ["sources", "add", "confluence", "--url", site.url, "--name", "wiki"]
        assert cli_main([*add, "--space", "FAC", "--space", "HR"]) == 0
        assert cli_main(["sync"]) == 0
        assert "wiki: written 2" in capsys.readouterr().out

        answer = ask(GARAGE_Q, "bob", capsys)  # engineering
        assert answer["status"] == "answered" and "22:00" in answer["text"], answer["text"]
        links = [c["link"] for c in answer["citations"]]
        page = f"{site.url}/wiki/spaces/FAC/pages/{garage}/Riverside+office+garage"
        assert any(link.startswith(page + "#") for link in links), links
        assert not sees(GARAGE_Q, "22:00", "dave", capsys)  # sales: not a reader of the space

        assert sees(RELOCATION_Q, "2,400", "alice", capsys)  # user:alice@northwind.example
        assert not sees(RELOCATION_Q, "2,400", "carol", capsys)  # managers, like alice

        site.restrict(garage, groups=["hr"])  # narrowed on Confluence; no new version
        assert cli_main(["sync", "--source", "wiki"]) == 0
        assert "written 1" in capsys.readouterr().out
        assert not sees(GARAGE_Q, "22:00", "bob", capsys)  # no leak after the narrowing
        assert sees(GARAGE_Q, "22:00", "alice", capsys)

        site.restrict(garage)  # widened again
        assert cli_main(["sync", "--source", "wiki"]) == 0
        assert sees(GARAGE_Q, "22:00", "bob", capsys)

        site.pages[relocation].status = "trashed"
        assert cli_main(["sync", "--source", "wiki"]) == 0
        assert "deleted 1" in capsys.readouterr().out
        assert not sees(RELOCATION_Q, "2,400", "alice", capsys)
    finally:
        site.close()


PER_DIEM_Q = "What is the per diem for Tokyo business trips?"


def test_a_pages_pdf_attachment_answers_the_pages_readers_only_until_restricted_or_deleted(
    tmp_path, monkeypatch, capsys
):
    from tests.ingest.sources.test_confluence_attachments import pdf

    site = LoopbackConfluence().start()
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FOOTNOTE_CONFLUENCE__EMAIL", site.email)
    monkeypatch.setenv("FOOTNOTE_CONFLUENCE__API_TOKEN", site.token)
    try:
        site.space("FIN", groups=["engineering", "hr"])
        page = site.put("FIN", "Travel", "<p>The travel rules are in the attached file.</p>")
        policy = pdf(
            "Travel expenses",
            "The per diem for Tokyo business trips is 9,500 yen a day.",
            "Receipts are kept for seven years.",
        )
        aid = site.attach(page, "travel-policy.pdf", policy)
        site.attach(page, "receipts.zip", b"PK\x03\x04", "application/zip")
        add = ["sources", "add", "confluence", "--url", site.url, "--name", "wiki"]
        assert cli_main([*add, "--space", "FIN"]) == 0
        assert cli_main(["sync"]) == 0
        out = capsys.readouterr().out
        assert "wiki: written 2" in out and "receipts.zip" in out, out
        assert "attachments: 1 pages listed, full pass, 1 downloaded, 1 skipped" in out, out

        answer = ask(PER_DIEM_Q, "bob", capsys)  # engineering, a reader of the space
        assert answer["status"] == "answered" and "9,500" in answer["text"], answer["text"]
        links = [c["link"] for c in answer["citations"]]
        number = aid.removeprefix("att")
        preview = f"{site.url}/wiki/spaces/FIN/pages/{page}/Travel?preview=%2F{page}%2F{number}"
        assert any(link.startswith(preview) for link in links), links
        assert not sees(PER_DIEM_Q, "9,500", "dave", capsys)  # sales: not a reader

        site.restrict(page, groups=["hr"])  # the page narrowed: its attachment with it
        assert cli_main(["sync", "--source", "wiki"]) == 0
        assert "written 2" in capsys.readouterr().out
        assert not sees(PER_DIEM_Q, "9,500", "bob", capsys)  # no leak through the file
        assert sees(PER_DIEM_Q, "9,500", "alice", capsys)  # hr

        del site.attachments[aid]
        site.edit(page, "<p>The travel rules moved to the finance portal.</p>")
        assert cli_main(["sync", "--source", "wiki"]) == 0
        assert "deleted 1" in capsys.readouterr().out
        assert not sees(PER_DIEM_Q, "9,500", "alice", capsys)
    finally:
        site.close()
