"""What a citation quotes of its passage: what ``footnote ask --json`` and the adapters show."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from agent.turns import QUOTE_CHARS, Answer, Citation

WHERE = SimpleNamespace(
    doc_id="studio/kiln.md",
    title="Kiln rules",
    breadcrumbs="Kiln rules",
    source="kiln.md",
    link="",
    page=None,
    anchor="",
    updated="2026-01-01",
)
SENTENCES = [
    "The kiln is loaded by the studio lead on Thursday mornings.",
    "Pieces must be bone dry, signed on the base and placed on the cart by Wednesday night.",
    "Glazed pieces go on the top shelf, away from the elements, with a finger's width between.",
    "Anything left on the cart after the firing is kept for a week and then recycled into clay.",
]


def quote_of(text: str) -> str:
    citation = Citation.of(1, WHERE, text)  # type: ignore[arg-type]
    answer = Answer(text="[1]", status="answered", citations=[citation])
    return json.loads(json.dumps(answer.to_dict(), default=str))["citations"][0]["quote"]


def test_a_long_passage_is_quoted_up_to_its_last_whole_sentence():
    text = " ".join(SENTENCES)
    assert len(text) > QUOTE_CHARS
    quote = quote_of(text)
    assert quote == " ".join(SENTENCES[:3])  # no half of the fourth


@pytest.mark.parametrize("long_sentence", [True, False])
def test_a_passage_with_no_sentence_end_in_reach_is_cut_at_a_word_with_an_ellipsis(
    long_sentence,
):
    words = "clay " if long_sentence else "the glaze bucket by the sink "
    text = "Bring " + words * 80 + "and aprons."
    quote = quote_of(text)
    assert quote.endswith("…") and len(quote) <= QUOTE_CHARS
    kept = quote.removesuffix("…")
    assert text.startswith(kept) and re.match(r"\s", text[len(kept)])  # a whole word, no stub


def test_a_short_passage_is_quoted_whole():
    assert quote_of(SENTENCES[0]) == SENTENCES[0]
