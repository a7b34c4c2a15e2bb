"""The sync state's schema, migrations and settings, on SQLite and the real PostgreSQL."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from ingest.errors import ConfigError
from ingest.settings import DatabaseSettings
from ingest.sources.state import MIGRATIONS, SCHEMA_VERSION, SyncState


def test_opening_again_applies_no_migration_twice(state):
    state.add_source("s", "web", {"sitemap": "http://x/sitemap.xml"})
    state.migrate()
    assert state.schema_version() == SCHEMA_VERSION
    assert [s.name for s in state.sources()] == ["s"]


def test_a_new_migration_is_applied_in_place_once(state):
    state.add_source("s", "web", {})
    extra = (SCHEMA_VERSION + 1, ["ALTER TABLE sources ADD COLUMN note TEXT"])
    state.migrate([*MIGRATIONS, extra])
    state.migrate([*MIGRATIONS, extra])  # a second ALTER would fail: the column exists
    assert state.schema_version() == extra[0]
    assert state.source("s")  # the data survived


def test_a_state_newer_than_this_code_is_refused(state):
    state.migrate([*MIGRATIONS, (SCHEMA_VERSION + 1, [])])  # as a newer Footnote would
    with pytest.raises(ConfigError, match="upgrade Footnote"):
        state.migrate()


def test_a_source_name_is_taken_once(state):
    state.add_source("s", "web", {})
    with pytest.raises(ConfigError, match="--name"):
        state.add_source("s", "web", {})


def test_a_batch_is_recorded_whole_or_not_at_all(state):
    state.add_source("s", "web", {})
    state.record("s", "c1", {"k1": ("v1", "s/k1")}, [])
    with pytest.raises(Exception):  # noqa: B017 — the second row breaks the NOT NULL rule
        state.record("s", "c2", {"k2": ("v2", "s/k2"), "k3": (None, "s/k3")}, [])  # type: ignore[dict-item]
    assert state.versions("s") == {"k1": "v1"} and state.source("s").cursor == "c1"


def test_the_database_url_names_the_variable_when_wrong(tmp_path):
    with pytest.raises(ConfigError, match="FOOTNOTE_DATABASE__URL"):
        SyncState.open(DatabaseSettings(url=SecretStr("mysql://x")), tmp_path)
    with pytest.raises(ConfigError, match="FOOTNOTE_DATABASE__URL"):
        SyncState.open(
            DatabaseSettings(url=SecretStr("postgresql://nobody@127.0.0.1:1/none")), tmp_path
        )


def test_answering_a_question_imports_no_database_code():
    """`footnote ask` starts cold on every call: the sync state's code is not its to load."""
    import subprocess
    import sys

    code = (
        "import sys, bot.cli, bot.app, bot.chat.terminal, agent.assistant, agent.loop; "
        "print(sorted({m.split('.')[0] for m in sys.modules "
        "if m.startswith(('ingest.sources', 'psycopg', 'sqlalchemy'))}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, encoding="utf-8", check=True
    )
    assert out.stdout.strip() == "[]", out.stdout
