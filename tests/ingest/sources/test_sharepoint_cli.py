"""End to end through the CLI: connect a SharePoint site, sync, and check every affected asker's
answer as a file is narrowed, widened, moved out of a shared folder and deleted."""

from __future__ import annotations

import pytest

from bot.cli import main as cli_main
from testing.graph import LoopbackGraph, entra_group, granted, link, person
from tests.ingest.sources.conftest import ask, sees

pytestmark = [pytest.mark.models, pytest.mark.slow]  # `footnote` builds its own embedders

GARAGE = (
    "<html><head><title>Riverside office garage</title></head><body>"
    "<h2>Opening hours</h2><p>The Riverside office garage closes at 22:00 on weekdays and stays "
    "shut on Sundays.</p><h2>Permits</h2><p>Garage permits are renewed every January.</p>"
    "</body></html>"
)
RELOCATION = (
    "<html><head><title>Relocation to Lisbon</title></head><body><h2>Housing</h2><p>The Lisbon "
    "relocation package pays a housing allowance of 2,400 euros a month for the first year.</p>"
    "</body></html>"
)
GARAGE_Q = "When does the Riverside office garage close on weekdays?"
RELOCATION_Q = "How much housing allowance does the Lisbon relocation package pay?"


def sync(capsys) -> str:
    capsys.readouterr()
    assert cli_main(["sync", "--source", "Support"]) == 0
    return capsys.readouterr().out


def test_sharepoint_files_answer_exactly_their_readers_as_sharing_changes(
    tmp_path, monkeypatch, capsys
):
    graph = LoopbackGraph().start()
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FOOTNOTE_GRAPH__TENANT_ID", graph.tenant)
    monkeypatch.setenv("FOOTNOTE_GRAPH__CLIENT_ID", graph.client_id)
    monkeypatch.setenv("FOOTNOTE_GRAPH__CLIENT_SECRET", graph.client_secret)
    monkeypatch.setenv("FOOTNOTE_GRAPH__AUTHORITY", graph.url)
    monkeypatch.setenv("FOOTNOTE_GRAPH__URL", f"{graph.url}/v1.0")
    try:
        site = graph.site("acme.sharepoint.com", "/sites/Support")
        docs = graph.drives[site.drives[0]]
        # the library is shared with two Entra ID groups (the demo directory names them so)
        graph.share(
            docs, docs.root, [granted(entra_group("engineering")), granted(entra_group("hr"))]
        )
        garage = graph.put(docs, "Garage.html", GARAGE)
        shared = graph.folder(
            docs, "For Alice", grants=[granted(person("Alice@Northwind.example"))], inherits=False
        )
        finance = graph.folder(
            docs, "Finance", grants=[granted(entra_group("finance"))], inherits=False
        )
        relocation = graph.put(docs, "Relocation.html", RELOCATION, parent=shared)
        assert cli_main(["sources", "add", "sharepoint", "--site", site.web_url]) == 0
        assert "Support: written 2" in sync(capsys)

        answer = ask(GARAGE_Q, "bob", capsys)  # engineering, through the library's root
        assert answer["status"] == "answered" and "22:00" in answer["text"], answer["text"]
        links = [c["link"] for c in answer["citations"]]
        url = "https://acme.sharepoint.com/sites/Support/Shared%20Documents/Garage.html"
        assert any(link.startswith(url) for link in links), links
        assert not sees(GARAGE_Q, "22:00", "dave", capsys)  # sales: not a reader

        assert sees(RELOCATION_Q, "2,400", "alice", capsys)  # user:alice@northwind.example
        assert not sees(RELOCATION_Q, "2,400", "carol", capsys)  # finance, not yet

        graph.share(docs, garage, [granted(entra_group("hr"))], inherits=False)  # narrowed
        assert "written 1" in sync(capsys)
        assert not sees(GARAGE_Q, "22:00", "bob", capsys)  # no leak after the narrowing
        assert sees(GARAGE_Q, "22:00", "alice", capsys)

        graph.share(docs, garage, [link("organization")])  # widened: everyone in the company
        sync(capsys)
        assert sees(GARAGE_Q, "22:00", "dave", capsys)

        graph.move(docs, relocation, finance)  # out of the folder shared with Alice
        sync(capsys)
        assert not sees(RELOCATION_Q, "2,400", "alice", capsys)  # gone for who lost access
        assert sees(RELOCATION_Q, "2,400", "carol", capsys)

        graph.delete(docs, relocation)
        assert "deleted 1" in sync(capsys)
        assert not sees(RELOCATION_Q, "2,400", "carol", capsys)
    finally:
        graph.close()
