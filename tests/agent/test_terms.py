"""Term statistics: question words in every language, and statistics kept between processes."""

from __future__ import annotations

import json

import pytest

from agent import terms
from agent.terms import TermStats, is_question_word, question_word_forms

TEXTS = [
    "Unused vacation days carry over until March 31 of the next year.",
    "Employees may carry over up to five days of annual leave.",
    "公司的年假政策：员工每年有十五天带薪休假。",
    "Працівники київського офісу мають п'ять додаткових днів відновлення.",
]


@pytest.mark.parametrize("lang", ["en", "de", "uk", "ru", "zh", "ja"])
def test_every_form_of_every_question_word_is_one(lang):
    # Looked up by the script a term is written in: a language filed under the wrong script
    # would lose its question words here.
    forms = question_word_forms(lang)
    assert forms
    assert [f for f in forms if not is_question_word(f)] == []


def test_topic_words_are_not_question_words():
    assert not any(is_question_word(t) for t in ("vacat", "відпустка", "年假", "hotel"))


def test_statistics_are_kept_and_read_back_for_the_same_texts(tmp_path):
    path = tmp_path / "cache" / "term-stats.json"
    built = TermStats.cached(TEXTS, frozenset({"hand"}), path)
    assert path.is_file()
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["n_docs"] == 4 and saved["df"] == dict(built.df)
    path.write_text(json.dumps({**saved, "n_docs": 40}), encoding="utf-8")  # tell them apart
    again = TermStats.cached(list(reversed(TEXTS)), frozenset({"hand"}), path)
    assert again.n_docs == 40  # read back, in whatever order the index gave the texts
    assert again.df == built.df and again.speller.counts == built.speller.counts
    assert again.speller.known == frozenset({"hand"})
    assert again.speller.word("vacatoin") == "vacation"


def test_other_texts_or_a_damaged_file_build_them_again(tmp_path):
    path = tmp_path / "term-stats.json"
    TermStats.cached(TEXTS, frozenset(), path)
    fewer = TermStats.cached(TEXTS[:2], frozenset(), path)
    assert fewer.n_docs == 2 and json.loads(path.read_text())["n_docs"] == 2
    path.write_text("{not json", encoding="utf-8")
    assert TermStats.cached(TEXTS, frozenset(), path).n_docs == 4
    assert json.loads(path.read_text())["n_docs"] == 4


def test_changed_tokenizing_code_builds_them_again(tmp_path, monkeypatch):
    path = tmp_path / "term-stats.json"
    TermStats.cached(TEXTS, frozenset(), path)
    path.write_text(json.dumps({**json.loads(path.read_text()), "n_docs": 40}), encoding="utf-8")
    changed = tmp_path / "languages.py"
    changed.write_text("# a new stop-word list\n", encoding="utf-8")
    monkeypatch.setattr(terms, "_TOKENIZING_SOURCES", (*terms._TOKENIZING_SOURCES[:-1], changed))
    assert TermStats.cached(TEXTS, frozenset(), path).n_docs == 4


def test_by_index_version_the_texts_are_read_only_when_it_moved(tmp_path):
    path = tmp_path / "term-stats.json"
    reads = []

    def read():
        reads.append(1)
        return TEXTS[: 2 + len(reads)]  # what the index holds at each read

    first = TermStats.cached_for("seg-a:7", read, frozenset(), path)
    again = TermStats.cached_for("seg-a:7", read, frozenset(), path)
    assert len(reads) == 1 and first.n_docs == again.n_docs == 3
    assert again.df == first.df and again.speller.counts == first.speller.counts
    moved = TermStats.cached_for("seg-a:8", read, frozenset(), path)
    assert len(reads) == 2 and moved.n_docs == 4


def test_a_chinese_word_and_its_parts_are_weighed_once():
    stats = TermStats.from_texts(["上海办公室的地址", "柏林办公室", "上海的会议室"])
    weights = stats.key_terms("上海办公室的地址是什么？", "zh")
    assert "办公室" in weights
    assert not {"办公", "公室"} & set(weights)  # jieba's parts of 办公室


def test_chinese_how_many_with_a_measure_word_is_a_question_word():
    assert all(is_question_word(t) for t in ("几间", "几个", "多久", "哪位", "哪里"))
    assert not any(is_question_word(t) for t in ("会议室", "多媒体", "几何"))


def test_the_answer_loops_statistics_follow_an_edit_that_keeps_the_count(tmp_path):
    """A long-running bot sees a document edited in place (same number of chunks): its words
    count from the next question on, and a new process reads them back from the cache."""
    from agent.assistant import _LazyStats
    from ingest.edge_index import EdgeIndex
    from ingest.index import PointData
    from ingest.languages import tokenize
    from ingest.sparse import BM25Encoder

    enc = BM25Encoder()

    def point(i: int, text: str) -> PointData:
        payload = {"doc_id": "hr", "seq": i, "text": text, "acl": ["*"], "doc_chunks": 2}
        return PointData(i, {"minilm": [1.0, 0.0]}, enc.encode_document(text), payload)

    index = EdgeIndex(tmp_path / "index", {"minilm": 2})
    cache = tmp_path / "term-stats.json"
    try:
        index.upsert_document("hr", [point(0, TEXTS[0]), point(1, TEXTS[1])], [])
        stats = _LazyStats(index, cache=cache)
        (word,) = tokenize("sabbatical")
        assert stats().df[word] == 0
        index.set_payloads([(1, {"text": "A sabbatical follows five years of service."})])
        assert stats().df[word] == 1
        assert _LazyStats(index, cache=cache)().df[word] == 1
    finally:
        index.close()


FERRY_AND_LICENCE = [
    "The winter ferry to the island leaves the mainland at 7:15 every morning.",
    "A glimber keeping licence can be renewed at the island office.",
    "The island office opens at nine.",
]


def test_a_long_lead_weighs_no_more_than_the_part_it_leads():
    """The asker's story before a short question ("… — can I renew my licence?") says which
    case they are in; its words together weigh at most ``situation`` times the question's."""
    stats = TermStats.from_texts(FERRY_AND_LICENCE)
    message = "Each winter morning I take the ferry from the mainland to my glimbers — Can I renew my licence?"
    own = {"renew", "licenc"}
    plain = stats.key_terms(message, "en")
    assert own <= plain.keys()
    assert sum(w for t, w in plain.items() if t not in own) > sum(plain[t] for t in own)
    for share in (0.5, 1.0):
        capped = stats.key_terms(message, "en", situation=share)
        assert capped.keys() == plain.keys()
        assert {t: capped[t] for t in own} == {t: plain[t] for t in own}
        lead = sum(w for t, w in capped.items() if t not in own)
        assert lead == pytest.approx(share * sum(plain[t] for t in own))


def test_a_part_with_no_word_of_its_own_leaves_its_lead_as_the_question():
    """ "… — yes, I am" asks nothing itself: the lead is what is asked, weighed whole."""
    stats = TermStats.from_texts(FERRY_AND_LICENCE)
    message = "Can I renew my glimber keeping licence at the island office — yes, I am"
    assert stats.key_terms(message, "en", situation=1.0) == stats.key_terms(message, "en")


def test_a_short_lead_keeps_its_weight():
    """A lead that weighs less than the part it leads is not raised to it."""
    stats = TermStats.from_texts(FERRY_AND_LICENCE)
    message = "My licence — When does the winter ferry leave the mainland?"
    assert stats.key_terms(message, "en", situation=1.0) == stats.key_terms(message, "en")


def test_a_part_that_points_back_at_its_lead_weighs_the_lead_whole():
    """ "… — Does the office pay for any of that?": "that" is the story; the story is asked."""
    stats = TermStats.from_texts(FERRY_AND_LICENCE)
    message = "Each winter morning I take the ferry from the mainland to my glimbers — Does the office pay for any of that?"
    assert stats.key_terms(message, "en", situation=1.0) == stats.key_terms(message, "en")
