"""The lexicon is data: a language is a file, and a file it cannot read names the fix."""

from __future__ import annotations

import pytest

from agent.messages import audience_name
from ingest.errors import ConfigError
from ingest.lexicon import read_lexicon

STAFF = "audience:\n  staff:\n    crew: [crew, crew member]\n"


def test_a_language_file_names_its_audiences_for_replies(tmp_path):
    (tmp_path / "en.yaml").write_text(
        STAFF + "  people:\n    pilots: [pilot, pilots]\n", encoding="utf-8"
    )
    (tmp_path / "xx.yaml").write_text(
        "audience:\n  people:\n    pilots: [pilota, pilotae]\n  named:\n    pilots: pilotis\n",
        encoding="utf-8",
    )
    lex = read_lexicon(tmp_path)
    assert lex.staff == "crew"
    assert lex.named == {("xx", "pilots"): "pilotis"}
    assert lex.forms["pilotae"] == "pilots"


def test_a_name_for_an_audience_no_file_lists_names_the_fix(tmp_path):
    (tmp_path / "en.yaml").write_text(STAFF + "  named:\n    pilots: Pilots\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"named names \['pilots'\].*staff, outside_staff or"):
        read_lexicon(tmp_path)


def test_a_name_that_is_not_one_word_names_the_fix(tmp_path):
    (tmp_path / "en.yaml").write_text(STAFF + "  named:\n    crew: [a, b]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="map an audience to one word"):
        read_lexicon(tmp_path)


def test_replies_name_an_audience_in_the_askers_language_else_as_the_documents_do():
    assert audience_name("uk", "contractors") == "підрядників"
    assert audience_name("uk", "interns") == "стажистів"  # any group a language file names
    assert audience_name("en", "interns") == "interns"
    assert audience_name("fr", "contractors") == "contractors"  # no file for the language
    assert audience_name("uk", "pilots") == "pilots"  # a group no file knows: as written
