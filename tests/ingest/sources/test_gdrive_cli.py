"""End to end through the CLI: connect a shared drive, sync, and check every affected asker's
answer as a doc shared with a group is narrowed to the drive's members, then opened to the
company's domain, and a doc shared with one person by e-mail is trashed."""

from __future__ import annotations

import pytest

from bot.cli import main as cli_main
from testing.gdrive import LoopbackDrive, domain, group, user
from tests.ingest.sources.conftest import ask, sees

pytestmark = [pytest.mark.models, pytest.mark.slow]  # `footnote` builds its own embedders

GARAGE = (
    '<p class="title"><span>Riverside office garage</span></p>'
    '<h2 id="h.4k2r9">Opening hours</h2><p><span>The Riverside office garage closes at 22:00 on '
    "weekdays and stays shut on Sundays.</span></p>"
    '<h2 id="h.8s1x0">Permits</h2><p>Garage permits are renewed every January.</p>'
)
RELOCATION = (
    '<h2 id="h.1a2b3">Housing</h2><p>The Lisbon relocation package pays a housing allowance of '
    "2,400 euros a month for the first year.</p>"
)
# Google groups are named by their e-mail: the directory names them so too (lower-cased)
DIRECTORY = """users:
  alice: {name: Alice Moreau, email: alice@northwind.example, groups: [hr@northwind.example]}
  bob:   {name: Bob Okafor, email: bob@northwind.example, groups: [engineering@northwind.example]}
  dave:  {name: Dave Kowalski, email: Dave@Northwind.example, groups: [sales@northwind.example]}
"""
GARAGE_Q = "When does the Riverside office garage close on weekdays?"
RELOCATION_Q = "How much housing allowance does the Lisbon relocation package pay?"


def test_drive_files_answer_exactly_their_readers_through_narrowing_and_widening(
    tmp_path, monkeypatch, capsys
):
    site = LoopbackDrive().start()
    directory = tmp_path / "directory.yaml"
    directory.write_text(DIRECTORY)
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FOOTNOTE_DIRECTORY_FILE", str(directory))
    monkeypatch.setenv("FOOTNOTE_GDRIVE__KEY_FILE", str(site.key_file(tmp_path)))
    monkeypatch.setenv("FOOTNOTE_GDRIVE__SUBJECT", "footnote-sync@northwind.example")
    monkeypatch.setenv("FOOTNOTE_GDRIVE__TOKEN_URI", site.token_uri)
    monkeypatch.setenv("FOOTNOTE_GDRIVE__API_URL", site.url)
    try:
        drive = site.shared_drive("Facilities", members=[group("hr@northwind.example")])
        garage = site.put(
            "Riverside office garage",
            GARAGE,
            drive,
            grants=[group("Engineering@northwind.example")],
        )
        relocation = site.put(
            "Relocation to Lisbon", RELOCATION, drive, grants=[user("dave@northwind.example")]
        )
        assert cli_main(["sources", "add", "gdrive", "--shared-drive", "Facilities"]) == 0
        assert "northwind.example" in capsys.readouterr().out  # the subject's domain
        assert cli_main(["sync"]) == 0
        assert "Facilities: written 2" in capsys.readouterr().out

        answer = ask(GARAGE_Q, "bob", capsys)  # engineering@, a group the doc is shared with
        assert answer["status"] == "answered" and "22:00" in answer["text"], answer["text"]
        links = [c["link"] for c in answer["citations"]]
        doc = f"https://docs.google.com/document/d/{garage}/edit?usp=drivesdk"
        assert f"{doc}#heading=h.4k2r9" in links, links  # opens the doc at its heading
        assert not sees(GARAGE_Q, "22:00", "dave", capsys)  # sales: not shared with
        assert sees(GARAGE_Q, "22:00", "alice", capsys)  # hr@: a member of the drive

        assert sees(RELOCATION_Q, "2,400", "dave", capsys)  # user:dave@northwind.example
        assert not sees(RELOCATION_Q, "2,400", "bob", capsys)

        site.share(garage, [])  # the group's grant removed: the drive's members only
        assert cli_main(["sync", "--source", "Facilities"]) == 0
        assert "written 1" in capsys.readouterr().out
        assert not sees(GARAGE_Q, "22:00", "bob", capsys)  # no leak after the narrowing
        assert sees(GARAGE_Q, "22:00", "alice", capsys)

        site.share(garage, [domain("northwind.example")])  # everyone at the company
        assert cli_main(["sync", "--source", "Facilities"]) == 0
        assert sees(GARAGE_Q, "22:00", "dave", capsys) and sees(GARAGE_Q, "22:00", "bob", capsys)

        site.trash(relocation)
        assert cli_main(["sync", "--source", "Facilities"]) == 0
        assert "deleted 1" in capsys.readouterr().out
        assert not sees(RELOCATION_Q, "2,400", "dave", capsys)
    finally:
        site.close()
