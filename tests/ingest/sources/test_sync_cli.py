"""End to end through the CLI: connect a site, sync it, ask, delete the page, sync, ask again."""

from __future__ import annotations

import json
import re

import pytest

from bot.cli import main as cli_main
from testing.web import LoopbackSite, Page

pytestmark = [pytest.mark.models, pytest.mark.slow]  # `footnote` builds its own embedders

PAGE = """<html><head><title>Riverside office garage</title></head><body>
<h1>Riverside office garage</h1>
<h2>Opening hours</h2>
<p>The Riverside office garage closes at 22:00 on weekdays and stays shut on Sundays.</p>
<h2>Permits</h2>
<p>Garage permits are renewed every January through the facilities desk.</p>
</body></html>"""
OTHER = """<html><head><title>Printer rooms</title></head><body><h1>Printer rooms</h1>
<p>Colour printers are on the second floor, next to the kitchen.</p></body></html>"""
QUESTION = "When does the Riverside office garage close on weekdays?"


def ask(user: str, capsys) -> dict:
    capsys.readouterr()
    assert cli_main(["ask", QUESTION, "--user", user, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_synced_page_answers_for_its_group_and_stops_once_deleted(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    site = LoopbackSite(pages={"/facilities/garage": Page(PAGE), "/printers": Page(OTHER)}).start()
    try:
        assert (
            cli_main(
                [
                    "sources",
                    "add",
                    "web",
                    "--sitemap",
                    site.sitemap,
                    "--acl",
                    "engineering",
                    "--name",
                    "intranet",
                ]
            )
            == 0
        )
        assert cli_main(["sync"]) == 0
        out = capsys.readouterr().out
        assert "intranet: written 2" in out
        # not a terminal: the progress is a plain line (no total: a source's changes are not
        # counted beforehand), no bar redrawn
        assert re.search(
            r"^syncing intranet 1 documents · \d+ chunks · [\d.]+ chunks/s$", out, re.M
        )
        assert "\r" not in out and "\x1b[" not in out
        folder = tmp_path / "intranet"  # a folder that shares the source's name, same index
        folder.mkdir()
        (folder / "kitchen.md").write_text("---\nacl: ['*']\n---\n# Kitchen\n\nTea is free.\n")
        assert cli_main(["ingest", str(folder)]) == 0
        out = capsys.readouterr().out
        assert "deleted 0" in out  # the synced pages are not the folder's
        assert re.search(r"^indexing 1/1 documents · 1 chunks · [\d.]+ chunks/s", out, re.M)

        answer = ask("bob", capsys)  # engineering
        assert answer["status"] == "answered", answer["text"]
        assert "22:00" in answer["text"]
        links = [c["link"] for c in answer["citations"]]
        assert any(link.startswith(f"{site.url}/facilities/garage") for link in links), links
        assert not any("22:00" in c["quote"] for c in ask("dave", capsys)["citations"])  # sales

        assert cli_main(["sources", "list"]) == 0
        listed = capsys.readouterr().out
        assert "intranet" in listed and "web" in listed and " 2 " in listed

        del site.pages["/facilities/garage"]
        assert cli_main(["sync", "--source", "intranet"]) == 0
        assert "deleted 1" in capsys.readouterr().out
        after = ask("bob", capsys)
        assert "22:00" not in after["text"]
        assert not any(c["link"].startswith(f"{site.url}/facilities") for c in after["citations"])
    finally:
        site.close()
