"""Confluence attachments: each a document of its own, read by exactly its page's readers,
listed only for pages that changed (and in a daily full pass), downloaded through the redirect
Confluence answers — against the loopback Confluence."""

from __future__ import annotations

import io
import json

import pytest
from pydantic import SecretStr
from reportlab.pdfgen import canvas

from ingest.sources.confluence import ConfluenceConnector
from ingest.sources.state import SyncState
from ingest.sources.sync import IndexSink, sync
from testing.confluence import LoopbackConfluence
from tests.ingest.sources.conftest import Killed, MemorySink

DAY = 86400.0


def pdf(*lines: str) -> bytes:
    """A real one-page PDF holding ``lines``."""
    out = io.BytesIO()
    c = canvas.Canvas(out)
    for n, line in enumerate(lines):
        c.drawString(72, 720 - 16 * n, line)
    c.showPage()
    c.save()
    return out.getvalue()


POLICY = pdf("Travel policy", "The per diem for Tokyo business trips is 9,500 yen.")


@pytest.fixture
def site():
    s = LoopbackConfluence().start()
    s.space("HR", groups=["hr"])
    yield s
    s.close()


@pytest.fixture
def sqlite(tmp_path):
    st = SyncState.sqlite(tmp_path / "state.db")
    st.add_source("wiki", "confluence", {})
    yield st
    st.close()


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def wiki(site: LoopbackConfluence, clock: Clock | None = None, **kw) -> ConfluenceConnector:
    kw.setdefault("sleep", lambda s: None)
    kw.setdefault("spaces", ("HR",))
    kw.setdefault("token", SecretStr(site.token))
    return ConfluenceConnector(site=site.url, email=site.email, clock=clock or Clock(), **kw)


def test_a_pdf_attachment_is_a_document_read_by_its_pages_readers(site, sqlite):
    pid = site.put("HR", "Travel", "<p>See the attached policy.</p>")
    aid = site.attach(pid, "travel policy.pdf", POLICY)
    conn = wiki(site)
    sink = MemorySink()
    report = sync("wiki", sqlite, conn, sink)
    key = f"attachment:{aid}"
    assert sorted(report.written) == sorted([pid, key]) and not report.failed
    doc = sink.docs[key]
    assert doc.content == POLICY and doc.media_type == "application/pdf"
    assert doc.title == "travel policy.pdf" and doc.owner == "Page Owner"
    assert doc.principals == sink.docs[pid].principals == ("group:hr",)
    page_url = f"{site.url}/wiki/spaces/HR/pages/{pid}/Travel"
    number = aid.removeprefix("att")
    assert doc.url == f"{page_url}?preview=%2F{pid}%2F{number}%2Ftravel%20policy.pdf"
    assert json.loads(doc.version) == {"number": 1, "page": pid, "principals": ["group:hr"]}
    assert site.downloads(aid) == 1 and site.media_auth == 0  # the token stays on the site
    assert conn.summary() == "attachments: 1 pages listed, full pass, 1 downloaded, 0 skipped"


def test_restricting_the_page_relabels_its_attachment_and_widening_it_again(site, sqlite):
    pid = site.put("HR", "Travel", "<p>See the attached policy.</p>")
    aid = site.attach(pid, "policy.pdf", POLICY)
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    site.restrict(pid, groups=["payroll"])  # no new page version, as on Confluence
    report = sync("wiki", sqlite, wiki(site), sink)
    assert sorted(report.written) == sorted([pid, f"attachment:{aid}"])
    assert sink.docs[f"attachment:{aid}"].principals == ("group:payroll",)
    site.restrict(pid)
    sync("wiki", sqlite, wiki(site), sink)
    assert sink.docs[f"attachment:{aid}"].principals == ("group:hr",)


def test_a_restricted_parent_narrows_the_attachments_of_the_pages_below(site, sqlite):
    parent = site.put("HR", "Salaries", "<p>Bands.</p>")
    site.restrict(parent, groups=["payroll"])
    child = site.put("HR", "Bands 2027", "<p>See the file.</p>", parent=parent)
    aid = site.attach(child, "bands.pdf", pdf("L4 band: 80,000"))
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    assert sink.docs[f"attachment:{aid}"].principals == ("group:payroll",)


def test_attachments_are_listed_for_changed_pages_and_for_all_pages_once_a_day(site, sqlite):
    a, b = site.put("HR", "A", "<p>a</p>"), site.put("HR", "B", "<p>b</p>")
    on_a = site.attach(a, "a.pdf", pdf("Alpha file"))
    on_b = site.attach(b, "b.pdf", pdf("Bravo file"))
    clock = Clock()
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site, clock), sink)
    assert sorted(site.listings()) == sorted([a, b])

    site.requests.clear()
    del site.attachments[on_b]  # deleting an attachment moves no page version
    site.replace_file(on_a, pdf("Alpha file, second version"))
    clock.now += 3600
    report = sync("wiki", sqlite, wiki(site, clock), sink)
    assert site.listings() == [] and not report.written and not report.deleted
    assert sorted(report.unchanged) == sorted([a, b, f"attachment:{on_a}", f"attachment:{on_b}"])

    site.edit(a, "<p>a, edited</p>")  # a changed page: its attachments are listed again
    report = sync("wiki", sqlite, wiki(site, clock), sink)
    assert site.listings() == [a]
    assert sorted(report.written) == sorted([a, f"attachment:{on_a}"])
    assert f"attachment:{on_b}" in sink.docs  # b's page did not change: not looked at yet

    site.requests.clear()
    clock.now += DAY  # the full pass: every page's attachments
    conn = wiki(site, clock)
    report = sync("wiki", sqlite, conn, sink)
    assert sorted(site.listings()) == sorted([a, b]) and conn.counts.full_pass
    assert report.deleted == [f"attachment:{on_b}"] and f"attachment:{on_b}" not in sink.docs
    assert not report.written and site.downloads(on_a) == 0  # unchanged: not downloaded again
    site.requests.clear()
    sync("wiki", sqlite, wiki(site, clock), sink)
    assert site.listings() == []  # the pass was recorded


def test_a_deleted_attachment_on_an_edited_page_goes_at_once(site, sqlite):
    pid = site.put("HR", "Travel", "<p>policy</p>")
    aid = site.attach(pid, "policy.pdf", POLICY)
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    del site.attachments[aid]
    site.edit(pid, "<p>policy removed</p>")
    report = sync("wiki", sqlite, wiki(site), sink)
    assert report.deleted == [f"attachment:{aid}"] and f"attachment:{aid}" not in sink.docs
    assert f"attachment:{aid}" not in sqlite.versions("wiki")


def test_a_trashed_page_takes_its_attachments_with_it(site, sqlite):
    pid = site.put("HR", "Travel", "<p>policy</p>")
    aid = site.attach(pid, "policy.pdf", POLICY)
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    site.pages[pid].status = "trashed"
    report = sync("wiki", sqlite, wiki(site), sink)
    assert sorted(report.deleted) == sorted([pid, f"attachment:{aid}"]) and not sink.docs
    assert sqlite.versions("wiki") == {}


def test_a_zip_is_skipped_and_said_and_a_word_file_is_kept(site, sqlite):
    pid = site.put("HR", "Forms", "<p>forms</p>")
    zipped = site.attach(pid, "forms.zip", b"PK\x03\x04 not read", "application/zip")
    docx = site.attach(
        pid, "form.docx", b"not really a docx", "application/octet-stream"
    )  # Confluence's generic type: the file name says what it is
    conn = wiki(site)
    sink = MemorySink()
    report = sync("wiki", sqlite, conn, sink)
    assert f"attachment:{zipped}" not in sink.docs and site.downloads(zipped) == 0
    assert not report.failed  # skipped for good, not retried
    assert any("forms.zip" in w and "application/zip" in w for w in conn.warnings)
    assert conn.counts.skipped == 1 and "1 skipped" in conn.summary()
    assert sink.docs[f"attachment:{docx}"].media_type.endswith("wordprocessingml.document")


def test_an_attachment_over_the_size_limit_is_skipped_and_one_grown_past_it_leaves(site, sqlite):
    pid = site.put("HR", "Manuals", "<p>manuals</p>")
    small = site.attach(pid, "small.pdf", POLICY)
    big = site.attach(pid, "big.pdf", POLICY + b" " * 4000)
    limit = len(POLICY) + 100
    conn = wiki(site, max_bytes=limit)
    sink = MemorySink()
    report = sync("wiki", sqlite, conn, sink)
    assert f"attachment:{small}" in sink.docs and f"attachment:{big}" not in sink.docs
    assert site.downloads(big) == 0 and not report.failed  # its listed size said so
    assert any("big.pdf" in w and "too large" in w for w in conn.warnings)
    site.replace_file(small, POLICY + b" " * 4000)
    site.edit(pid, "<p>manuals, edited</p>")
    report = sync("wiki", sqlite, wiki(site, max_bytes=limit), sink)
    assert report.deleted == [f"attachment:{small}"] and f"attachment:{small}" not in sink.docs


def test_a_download_longer_than_its_listed_size_is_cut_off_at_the_limit(site, sqlite):
    pid = site.put("HR", "Manuals", "<p>manuals</p>")
    aid = site.attach(pid, "big.pdf", POLICY + b" " * 100_000)
    site.attachments[aid].listed_size = 10
    conn = wiki(site, max_bytes=len(POLICY) + 100)
    sink = MemorySink()
    report = sync("wiki", sqlite, conn, sink)
    assert site.downloads(aid) == 1 and f"attachment:{aid}" not in sink.docs
    assert not report.failed and any("big.pdf" in w and "too large" in w for w in conn.warnings)


def test_a_throttled_download_waits_for_retry_after_then_goes_on(site, sqlite):
    pid = site.put("HR", "Travel", "<p>policy</p>")
    aid = site.attach(pid, "policy.pdf", POLICY)
    site.throttle(2, "3", page=aid)
    waits: list[float] = []
    sink = MemorySink()
    report = sync("wiki", sqlite, wiki(site, sleep=waits.append), sink)
    assert waits == [3.0, 3.0] and site.downloads(aid) == 3
    assert sink.docs[f"attachment:{aid}"].content == POLICY and not report.failed


def test_a_download_throttled_past_the_retries_is_fetched_at_the_next_sync(site, sqlite):
    pid = site.put("HR", "Travel", "<p>policy</p>")
    aid = site.attach(pid, "policy.pdf", POLICY)
    site.throttle(5, "0", page=aid)
    report = sync("wiki", sqlite, wiki(site, retries=1), MemorySink())
    assert [k for k, _ in report.failed] == [f"attachment:{aid}"]
    assert pid in report.written  # the page is in, marked to be looked at again
    sink = MemorySink()
    report = sync("wiki", sqlite, wiki(site), sink)  # no edit, no full pass due: still fetched
    assert f"attachment:{aid}" in report.written and sink.docs[f"attachment:{aid}"].content
    assert not sync("wiki", sqlite, wiki(site), MemorySink()).written


def test_a_narrowed_page_whose_attachment_cannot_be_fetched_drops_the_old_copy(site, sqlite):
    pid = site.put("HR", "Travel", "<p>policy</p>")
    aid = site.attach(pid, "policy.pdf", POLICY)
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    site.restrict(pid, groups=["payroll"])
    site.throttle(5, "0", page=aid)
    report = sync("wiki", sqlite, wiki(site, retries=1), sink)
    assert f"attachment:{aid}" in report.deleted and f"attachment:{aid}" not in sink.docs
    report = sync("wiki", sqlite, wiki(site), sink)
    assert sink.docs[f"attachment:{aid}"].principals == ("group:payroll",)


def test_many_attachments_are_listed_page_by_page(site, sqlite):
    pid = site.put("HR", "Forms", "<p>forms</p>")
    ids = [site.attach(pid, f"form {n}.pdf", pdf(f"Form number {n}")) for n in range(5)]
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site, page_size=2, batch_size=2), sink)
    assert sorted(k for k in sink.docs if k.startswith("attachment:")) == sorted(
        f"attachment:{a}" for a in ids
    )
    assert site.listings() == [pid] * 3  # 5 in pages of 2, through _links.next


def test_a_sync_killed_among_a_pages_attachments_lists_them_again(site, sqlite):
    pid = site.put("HR", "Forms", "<p>forms</p>")
    ids = [site.attach(pid, f"form {n}.pdf", pdf(f"Form number {n}")) for n in range(4)]
    with pytest.raises(Killed):  # dies writing the second batch of attachments
        sync("wiki", sqlite, wiki(site, batch_size=2), MemorySink(die_after=2))
    assert sorted(sqlite.versions("wiki")) == sorted(f"attachment:{a}" for a in ids[:2])
    resumed = MemorySink()
    sync("wiki", sqlite, wiki(site, batch_size=2), resumed)
    assert sorted(resumed.writes) == sorted([pid] + [f"attachment:{a}" for a in ids[2:]])
    assert all(site.downloads(a) == 1 for a in ids[:2])


@pytest.mark.models
def test_a_page_restricted_relabels_its_attachment_in_the_index_without_embedding(
    site, sqlite, tmp_path, embedders
):
    from tests.ingest.test_pipeline import make_ingester

    pid = site.put("HR", "Travel", "<p>See the attached policy.</p>")
    aid = site.attach(pid, "policy.pdf", POLICY)
    ing = make_ingester(tmp_path, embedders)
    sink = IndexSink(ing, ["admins"])
    sync("wiki", sqlite, wiki(site), sink)
    doc = f"wiki:attachment:{aid}"
    assert any("9,500 yen" in c["text"] for c in ing.index.chunks(doc, ["hr"]))
    embedded: list[int] = []
    embed = ing.embed_chunks
    ing.embed_chunks = lambda chunks: embedded.append(len(chunks)) or embed(chunks)  # type: ignore[method-assign]
    site.restrict(pid, groups=["payroll"])
    sync("wiki", sqlite, wiki(site), sink)
    assert embedded == []  # who may read changed, not the text
    assert ing.index.chunks(doc, ["payroll"]) and not ing.index.chunks(doc, ["hr"])
    ing.index.close()


@pytest.mark.parametrize("new_first", [True, False], ids=["to-an-earlier-page", "to-a-later-page"])
def test_an_attachment_moved_to_another_page_follows_it_with_that_pages_readers(
    site, sqlite, new_first
):
    site.space("FIN", groups=["finance"])
    if new_first:  # the page it moves to is listed first, then the one it left
        new, old = site.put("HR", "New home", "<p>new</p>"), site.put("FIN", "Old", "<p>old</p>")
    else:
        old, new = site.put("FIN", "Old", "<p>old</p>"), site.put("HR", "New home", "<p>new</p>")
    aid = site.attach(old, "policy.pdf", POLICY)
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site, spaces=("HR", "FIN")), sink)
    assert sink.docs[f"attachment:{aid}"].principals == ("group:finance",)
    site.attachments[aid].page = new  # Confluence's "move attachment"; both pages edited
    site.edit(old, "<p>old, edited</p>")
    site.edit(new, "<p>new, edited</p>")
    sync("wiki", sqlite, wiki(site, spaces=("HR", "FIN")), sink)
    assert sink.docs[f"attachment:{aid}"].principals == ("group:hr",)
    assert json.loads(sqlite.versions("wiki")[f"attachment:{aid}"])["page"] == new


def test_many_skipped_attachments_are_counted_past_the_first_twenty_notes(site, sqlite):
    pid = site.put("HR", "Images", "<p>images</p>")
    for n in range(25):
        site.attach(pid, f"photo {n}.png", b"\x89PNG", "image/png")
    conn = wiki(site)
    sync("wiki", sqlite, conn, MemorySink())
    assert len([w for w in conn.warnings if "photo" in w]) == 20
    assert conn.counts.skipped == 25 and "25 skipped" in conn.summary()


def test_a_source_synced_without_attachments_gets_them_at_its_next_sync(site, sqlite):
    pid = site.put("HR", "Travel", "<p>policy</p>")
    aid = site.attach(pid, "policy.pdf", POLICY)
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site, attachments=False), sink)  # as before attachments were
    assert list(sink.docs) == [pid] and site.listings() == []
    report = sync("wiki", sqlite, wiki(site), sink)  # the page unchanged: the full pass finds it
    assert report.written == [f"attachment:{aid}"]
    report = sync("wiki", sqlite, wiki(site, attachments=False), sink)  # turned off: they go
    assert report.deleted == [f"attachment:{aid}"] and list(sink.docs) == [pid]
