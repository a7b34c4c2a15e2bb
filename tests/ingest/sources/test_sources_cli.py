"""`footnote sources add` and `list`: what an admin types, against SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from bot.cli import main as cli_main
from bot.cli.sources import age


@pytest.fixture(params=["sqlite", "postgres"])
def env(request, tmp_path, monkeypatch):
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    if request.param == "postgres":
        monkeypatch.setenv("FOOTNOTE_DATABASE__URL", request.getfixturevalue("postgres_url"))
    return request.param


def test_add_then_list_shows_the_source_before_its_first_sync(env, capsys):
    assert cli_main(["sources", "list"]) == 0
    assert "no sources yet" in capsys.readouterr().out
    add = ["sources", "add", "web", "--sitemap", "https://intranet.example/sitemap.xml"]
    assert cli_main([*add, "--acl", "hr, user:Ann@Example.com"]) == 0
    out = capsys.readouterr().out
    assert "intranet.example" in out and "group:hr, user:ann@example.com" in out
    assert cli_main(["sources", "list"]) == 0
    out = capsys.readouterr().out
    assert "intranet.example" in out and "never" in out and "web" in out
    assert cli_main(add) == 2  # the name is taken
    assert "--name" in capsys.readouterr().err


def test_a_sitemap_that_is_no_url_is_refused_by_name(env, capsys):
    assert cli_main(["sources", "add", "web", "--sitemap", "intranet/sitemap.xml"]) == 2
    assert "--sitemap must be an http(s) URL" in capsys.readouterr().err


def test_sync_names_the_fix_when_there_is_nothing_to_sync(env, capsys):
    assert cli_main(["sync", "--source", "nope"]) == 2
    assert "footnote sources list" in capsys.readouterr().err


def test_age_reads_in_the_two_largest_units():
    now = "2026-12-01T05:00:00+00:00"
    assert age("2026-12-01T04:59:30+00:00", now) == "30s"
    assert age("2026-12-01T03:30:00+00:00", now) == "1h 30m"
    assert age("2026-11-28T01:00:00+00:00", now) == "3d 4h"
