"""The chunker on hand-made Documents: structure first, then size with overlap."""

from __future__ import annotations

import re

import pytest

from ingest.chunk import chunk_document, count_tokens
from ingest.documents import Document, Section


def make_doc(sections: list[Section], title: str = "Handbook") -> Document:
    return Document(
        doc_id="hr/handbook.md",
        title=title,
        source="hr/handbook.md",
        sections=sections,
        updated="2024-05-01",
        owner="hr@example.com",
        acl=["staff"],
        lang="en",
        content_hash="abc123",
        url="https://wiki.example.com/handbook",
    )


def body(chunk) -> str:
    prefix = chunk.breadcrumbs + "\n\n"
    assert chunk.text.startswith(prefix)
    return chunk.text[len(prefix) :]


def sentences(n: int, start: int = 0) -> str:
    """n sentences of 10 tokens each, numbered so each one can be found again."""
    return " ".join(
        f"Sentence {i} says staff may take paid leave each year." for i in range(start, start + n)
    )


def test_count_tokens():
    assert count_tokens("Carry over five days.") == 4
    assert count_tokens("Перенесення днів відпустки") == 3
    assert count_tokens("员工每年享有带薪休假。") == 11  # ten characters and the full stop
    assert count_tokens("Use VPN 连接公司网络") == 8
    assert count_tokens("  \n ") == 0


def test_every_chunk_starts_with_breadcrumbs():
    doc = make_doc([Section(["Leave", "Carry-over"], sentences(60), anchor="carry-over")])
    chunks = chunk_document(doc)
    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.breadcrumbs == "Handbook > Leave > Carry-over"
        assert chunk.text.startswith("Handbook > Leave > Carry-over\n\n")


def test_top_heading_equal_to_title_is_not_repeated():
    doc = make_doc([Section(["Handbook", "Leave"], sentences(5))])
    assert chunk_document(doc)[0].breadcrumbs == "Handbook > Leave"


def test_sizes_stay_within_max_tokens():
    doc = make_doc([Section(["Leave"], sentences(100))])
    chunks = chunk_document(doc, max_tokens=55, overlap=15)
    assert len(chunks) > 5
    for chunk in chunks:
        assert count_tokens(body(chunk)) <= 55
        assert count_tokens(chunk.text) <= 55 + count_tokens(chunk.breadcrumbs)


def test_splits_at_sentence_ends_with_overlap_of_whole_sentences():
    doc = make_doc([Section(["Leave"], sentences(30))])
    chunks = chunk_document(doc, max_tokens=50, overlap=15)
    bodies = [body(c) for c in chunks]
    for previous, current in zip(bodies, bodies[1:], strict=False):
        assert previous.endswith(".")  # never cut mid-sentence
        last_sentence = previous[previous.rindex("Sentence") :]
        assert current.startswith(last_sentence)  # overlap: the last ~15 tokens, as whole sentences
    # Every sentence is somewhere, and nothing is invented.
    joined = " ".join(bodies)
    assert all(f"Sentence {i} " in joined for i in range(30))


def test_no_overlap_when_asked_for_none():
    doc = make_doc([Section(["Leave"], sentences(30))])
    bodies = [body(c) for c in chunk_document(doc, max_tokens=50, overlap=0)]
    assert " ".join(bodies) == sentences(30)


def test_cjk_is_split_at_full_stops():
    text = "".join(f"第{i}条规定员工每年享有带薪年假并可结转。" for i in range(30))
    doc = make_doc([Section(["休假政策"], text)], title="员工手册")
    chunks = chunk_document(doc, max_tokens=60, overlap=20)
    assert len(chunks) > 3
    for previous, current in zip(chunks, chunks[1:], strict=False):
        assert body(previous).endswith("。")
        assert count_tokens(body(previous)) <= 60
        last_sentence = body(previous).rstrip("。").rsplit("。", 1)[-1] + "。"
        assert body(current).startswith(last_sentence)
    assert chunks[0].breadcrumbs == "员工手册 > 休假政策"


def test_an_overlong_sentence_is_cut_by_tokens():
    long_sentence = " ".join(f"w{i}" for i in range(300))
    doc = make_doc([Section(["Legal"], f"Short intro. {long_sentence}. The end.")])
    chunks = chunk_document(doc, max_tokens=100, overlap=20)
    assert all(count_tokens(body(c)) <= 100 for c in chunks)
    words = " ".join(body(c) for c in chunks).split()
    assert {f"w{i}" for i in range(300)} <= {w.rstrip(".") for w in words}


def test_cjk_without_punctuation_is_cut_by_characters():
    doc = make_doc([Section([], "很" * 250)])
    chunks = chunk_document(doc, max_tokens=100, overlap=20)
    assert [len(body(c)) for c in chunks] == [100, 100, 90]  # 20 characters repeated each time


def test_ids_parents_and_fields():
    doc = make_doc(
        [
            Section(["Leave"], sentences(30), anchor="leave"),
            Section(["Travel"], sentences(30, start=100), anchor="travel"),
        ]
    )
    chunks = chunk_document(doc, max_tokens=120, overlap=20)
    assert [c.seq for c in chunks] == list(range(len(chunks)))
    assert [c.chunk_id for c in chunks] == [f"hr/handbook.md#{i}" for i in range(len(chunks))]
    leave = [c for c in chunks if c.anchor == "leave"]
    travel = [c for c in chunks if c.anchor == "travel"]
    assert leave and travel and len(leave) + len(travel) == len(chunks)
    assert {c.parent_id for c in leave} == {"hr/handbook.md#s0"}
    assert {c.parent_id for c in travel} == {"hr/handbook.md#s1"}
    # Sections with different paths are never mixed in one chunk.
    assert all(int(n) < 100 for c in leave for n in re.findall(r"Sentence (\d+)", body(c)))
    assert all(int(n) >= 100 for c in travel for n in re.findall(r"Sentence (\d+)", body(c)))
    c = chunks[0]
    assert (
        c.doc_id,
        c.title,
        c.source,
        c.updated,
        c.owner,
        c.acl,
        c.lang,
        c.content_hash,
        c.url,
    ) == (
        "hr/handbook.md",
        "Handbook",
        "hr/handbook.md",
        "2024-05-01",
        "hr@example.com",
        ["staff"],
        "en",
        "abc123",
        "https://wiki.example.com/handbook",
    )
    assert c.page is None


def test_pages_are_kept_and_never_merged():
    doc = make_doc(
        [
            Section([], "Tiny page one.", page=1, anchor="page=1"),
            Section([], "Tiny page two.", page=2, anchor="page=2"),
        ]
    )
    chunks = chunk_document(doc)
    assert [(c.page, c.anchor, body(c)) for c in chunks] == [
        (1, "page=1", "Tiny page one."),
        (2, "page=2", "Tiny page two."),
    ]


def test_deterministic():
    doc = make_doc(
        [
            Section(["Leave"], sentences(80)),
            Section(["Travel"], "Short."),
            Section(["Travel", "Rail"], sentences(3)),
        ]
    )
    first = [c.payload() for c in chunk_document(doc, max_tokens=60, overlap=20)]
    again = [c.payload() for c in chunk_document(doc, max_tokens=60, overlap=20)]
    assert first == again


def test_tiny_sections_merge_into_the_next_one():
    doc = make_doc(
        [
            Section(["Leave"], "Rules for time off.", anchor="leave"),
            Section(["Leave", "Annual"], "You get 25 days.", anchor="annual"),
            Section(["Leave", "Sick"], sentences(6), anchor="sick"),
        ]
    )
    chunks = chunk_document(doc)
    assert len(chunks) == 1
    chunk = chunks[0]
    assert chunk.breadcrumbs == "Handbook > Leave"  # the headings they share
    assert (chunk.anchor, chunk.parent_id) == ("leave", "hr/handbook.md#s0")  # from the first one
    assert body(chunk) == f"Rules for time off.\n\nAnnual\nYou get 25 days.\n\nSick\n{sentences(6)}"


def test_tiny_sections_do_not_merge_when_too_big_or_elsewhere():
    doc = make_doc(
        [
            Section(["Leave", "Annual"], "You get 25 days.", anchor="annual"),
            Section(
                ["Leave", "Sick"], sentences(22), anchor="sick"
            ),  # 220 tokens: no room for more
            Section(["Leave", "Parental"], "Ask HR.", anchor="parental"),
            Section(["Travel"], "Book early.", anchor="travel"),  # not under "Leave"
        ]
    )
    chunks = chunk_document(doc, max_tokens=220)
    assert [c.anchor for c in chunks] == ["annual", "sick", "parental", "travel"]


def test_empty_sections_and_documents():
    assert chunk_document(make_doc([])) == []
    doc = make_doc([Section(["A"], "  \n"), Section(["B"], sentences(5), anchor="b")])
    assert [(c.anchor, c.parent_id) for c in chunk_document(doc)] == [("b", "hr/handbook.md#s1")]


def test_overlap_must_be_smaller_than_chunks():
    with pytest.raises(ValueError):
        chunk_document(make_doc([]), max_tokens=40, overlap=40)


def test_a_log_record_is_never_parted_from_its_first_line():
    """A plain-text log: each record is an id line of fields between pipes, then lines about it
    up to a blank line. A chunk boundary falls between records, so every summary and note is
    read with the id, customer and status of the case it is about."""
    records = [
        f"TCK-{1000 + i} | 2026-09-{i + 1:02d} | {4000 + i} (Customer {i} Ltd) | Person {i} | P3 | "
        f"resolved\nSummary: Problem number {i} reported by the customer today.\n"
        f"Notes: Fixed after a long investigation of problem {i} by the team."
        for i in range(12)
    ]
    doc = make_doc([Section(["Log"], "\n\n".join(records))])
    chunks = chunk_document(doc, max_tokens=80, overlap=20)
    assert len(chunks) > 3
    for chunk in chunks:
        lines = [ln for ln in body(chunk).split("\n") if ln.strip()]
        assert re.match(r"TCK-\d+ \| ", lines[0]), lines[0]  # starts with a record's id line
        for n in re.findall(r"Summary: Problem number (\d+)", body(chunk)):
            assert f"TCK-{1000 + int(n)} | " in body(chunk)


def test_is_record_wants_three_short_fields_between_pipes():
    from ingest.chunk import is_record

    assert is_record("TCK-1103 | 2026-09-08 | 4502 (Brightline Logistics GmbH) | Jonas | P2")
    assert not is_record("Use a | b for alternatives.")
    assert not is_record("Summary: CSV export times out for large ticket volumes.")
