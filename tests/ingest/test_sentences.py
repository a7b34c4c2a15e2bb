"""One sentence splitter for chunks, sentence vectors and quotes: whole sentences in every
language Footnote reads."""

from __future__ import annotations

import pytest

from ingest.sentences import sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Dr. Smith paid 4.99 EUR on 1.2.2026. See v2.3.1 for the fix. It works e.g. here.",
            [
                "Dr. Smith paid 4.99 EUR on 1.2.2026.",
                "See v2.3.1 for the fix.",
                "It works e.g. here.",
            ],
        ),
        (
            "Approx. five days. No. 5 is fine! Is it? Yes (see p. 4). J. Smith agrees.",
            [
                "Approx. five days.",
                "No. 5 is fine!",
                "Is it?",
                "Yes (see p. 4).",
                "J. Smith agrees.",
            ],
        ),
        (
            "Офіс відкритий з 9:00 до 18:00. Адреса: вул. Хрещатик, 22. Тел. +380 44 000.",
            ["Офіс відкритий з 9:00 до 18:00.", "Адреса: вул. Хрещатик, 22.", "Тел. +380 44 000."],
        ),
        ("上海办公室在浦东。电话是021-1234。", ["上海办公室在浦东。", "电话是021-1234。"]),
        ("ホテルはいくらですか？はい。", ["ホテルはいくらですか？", "はい。"]),
        (
            "Mit z. B. Urlaub geht das. Danach nicht.",
            ["Mit z. B. Urlaub geht das.", "Danach nicht."],
        ),
        ('"Really?" she asked. Yes.', ['"Really?" she asked.', "Yes."]),
        (
            "- item one.\n- item two\nLevel: L4 · Range: 1 – 2",
            ["- item one.", "- item two", "Level: L4 · Range: 1 – 2"],
        ),
    ],
)
def test_sentences_are_whole(text, expected):
    assert sentences(text) == expected


def test_the_word_before_a_full_stop_is_the_run_of_non_spaces_that_ends_there():
    """What the abbreviation check reads, walked back from the stop instead of searched for
    from the start of the line (which was quadratic in a paragraph's length): the same run."""
    import random
    import re

    from ingest.sentences import _word_before

    pieces = ["Dr.", "e.g.", " ", "\u00a0", "\n", "x", "«J.»", "五", "approx.", "\t", "3.5"]
    rng = random.Random(7)
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        for end in range(len(text) + 1):
            found = re.search(r"(\S+)\Z", text[:end])
            assert _word_before(text, end) == (found.group(1) if found else "")
