"""Language detection: by script, then, for Latin script, by function words."""

from __future__ import annotations

import pytest

from ingest.languages import detect_lang, tokenize


@pytest.mark.parametrize(
    "text, lang",
    [
        ("Wie viele Urlaubstage kann ich übertragen?", "de"),
        ("Combien de jours de congé puis-je reporter ?", "fr"),
        ("¿Cuántos días de vacaciones puedo trasladar al año siguiente?", "es"),
        ("Quanti giorni di ferie posso riportare?", "it"),
        ("Hoeveel vakantiedagen kan ik meenemen?", "nl"),
        ("公司的年假政策是什么？", "zh"),
        ("Как оформить командировку?", "ru"),
        ("Як оформити відрядження?", "uk"),
    ],
)
def test_questions_in_other_languages_are_not_english(text, lang):
    assert detect_lang(text) == lang


@pytest.mark.parametrize(
    "text",
    [
        "What are the opening hours of Café de la Paix?",
        "Café de la Paix hours",  # one French function word is not enough
        "Is the Berlin office open on 1 May?",
        "0-dimensional biomaterials show inductive properties.",  # no function word at all
        "expense policy",
        "v2.3.1",
    ],
)
def test_english_questions_stay_english_despite_foreign_names(text):
    assert detect_lang(text) == "en"


def test_a_ukrainian_name_is_one_lower_cased_lemma_in_every_case():
    """The lemmatizer tells "Київ" (Kyiv) from "київ" (a form of "кий", a cue) by its capital:
    every form of the city is one term, lower-cased like every other term."""
    assert tokenize("Київ", "uk") == tokenize("Києві", "uk") == tokenize("Києва", "uk") == ["київ"]
    assert tokenize("Години роботи", "uk") == ["година", "робота"]
