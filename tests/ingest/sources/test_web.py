"""What only the web connector does: sitemap indexes, one host, robots.txt, validators, errors."""

from __future__ import annotations

import email.utils
import time

import pytest

from ingest.sources.connector import SourceUnavailable
from ingest.sources.state import SyncState
from ingest.sources.sync import sync
from ingest.sources.web import WebConnector, retry_after
from testing.web import LoopbackSite, Page
from tests.ingest.sources.conftest import MemorySink


@pytest.fixture
def site():
    s = LoopbackSite(
        pages={f"/{n}": Page(f"<h1>{n}</h1><p>About {n}.</p>") for n in ("a", "b", "c", "d")}
    ).start()
    yield s
    s.close()


@pytest.fixture
def sqlite(tmp_path):
    st = SyncState.sqlite(tmp_path / "state.db")
    st.add_source("site", "web", {})
    yield st
    st.close()


def web(site: LoopbackSite, **kw) -> WebConnector:
    return WebConnector(site.sitemap, ("group:staff",), **kw)


def test_a_sitemap_index_is_followed_and_other_hosts_are_left_alone(site, sqlite):
    site.index = True
    site.extra_locs = ["https://elsewhere.example/secret", "http://localhost:1/x"]
    sink = MemorySink()
    report = sync("site", sqlite, web(site), sink)
    assert sorted(sink.docs) == [f"{site.url}/{n}" for n in "abcd"] and not report.failed
    assert {p for _, p, _ in site.requests} >= {"/sitemap-1.xml", "/sitemap-2.xml"}


def test_robots_txt_keeps_pages_out_and_a_newly_disallowed_page_is_deleted(site, sqlite):
    site.robots = "User-agent: *\nDisallow: /b\n"
    sink = MemorySink()
    sync("site", sqlite, web(site), sink)
    assert f"{site.url}/b" not in sink.docs and not site.fetched("/b")
    site.robots = "User-agent: Footnote\nDisallow: /c\n"
    report = sync("site", sqlite, web(site), sink)
    assert report.written == [f"{site.url}/b"] and report.deleted == [f"{site.url}/c"]
    assert not site.fetched("/c")[1:]  # fetched at the first sync only


@pytest.mark.parametrize("status", [404, 410])
def test_a_listed_page_that_answers_gone_is_deleted(site, sqlite, status):
    sink = MemorySink()
    sync("site", sqlite, web(site), sink)
    site.pages["/a"].status = status
    report = sync("site", sqlite, web(site), sink)
    assert report.deleted == [f"{site.url}/a"] and f"{site.url}/a" not in sink.docs


def test_validators_each_alone_and_none_at_all(site, sqlite):
    site.pages["/a"] = Page("<p>etag only</p>", modified=None)
    site.pages["/b"] = Page("<p>date only</p>", etag=False)
    site.pages["/c"] = Page("<p>no validators</p>", etag=False, modified=None)
    sync("site", sqlite, web(site), MemorySink())
    report = sync("site", sqlite, web(site), MemorySink())
    assert len(report.unchanged) == 4 and not report.written
    assert site.fetched("/a") == [200, 304] and site.fetched("/b") == [200, 304]
    assert site.fetched("/c") == [200, 200]  # compared by its body's hash
    site.pages["/b"] = Page("<p>date only, edited</p>", etag=False, modified=time.time())
    site.pages["/c"] = Page("<p>no validators, edited</p>", etag=False, modified=None)
    report = sync("site", sqlite, web(site), MemorySink())
    assert sorted(report.written) == [f"{site.url}/b", f"{site.url}/c"]


def test_throttled_past_the_retries_is_a_failure_kept_for_next_time_never_a_deletion(site, sqlite):
    sink = MemorySink()
    sync("site", sqlite, web(site), sink)
    site.pages["/a"] = Page("<p>a, edited</p>")
    site.throttle("/a", times=3, retry_after="0")
    report = sync("site", sqlite, web(site, retries=2), sink)
    assert [k for k, _ in report.failed] == [f"{site.url}/a"] and "429" in report.failed[0][1]
    assert not report.deleted and f"{site.url}/a" in sqlite.versions("site")
    record = sqlite.source("site")
    assert record and record.errors == 1 and "429" in (record.last_error or "")
    report = sync("site", sqlite, web(site), sink)
    assert report.written == [f"{site.url}/a"] and sqlite.source("site").errors == 0


def test_an_unreachable_robots_txt_stops_the_sync_and_deletes_nothing(site, sqlite):
    sink = MemorySink()
    sync("site", sqlite, web(site), sink)
    site.throttle("/robots.txt", times=10, retry_after="0")
    with pytest.raises(SourceUnavailable, match="robots.txt"):
        sync("site", sqlite, web(site, retries=1), sink)
    assert len(sink.docs) == 4 and len(sqlite.versions("site")) == 4
    assert "robots.txt" in (sqlite.source("site").last_error or "")


@pytest.mark.parametrize("how", ["empty sitemap", "robots.txt shuts everything"])
def test_a_site_that_suddenly_lists_nothing_deletes_nothing(site, sqlite, how):
    sink = MemorySink()
    sync("site", sqlite, web(site), sink)
    assert len(sink.docs) == 4
    if how == "empty sitemap":
        site.unlisted.update(site.pages)
    else:
        site.robots = "User-agent: *\nDisallow: /\n"
    with pytest.raises(SourceUnavailable, match="lists no page .* but 4 were synced"):
        sync("site", sqlite, web(site), sink)
    assert len(sink.docs) == 4 and len(sqlite.versions("site")) == 4
    assert "nothing is deleted" in (sqlite.source("site").last_error or "")


def test_unsupported_media_types_fail_by_name(site, sqlite):
    site.pages["/a"] = Page("GIF89a", content_type="image/gif")
    report = sync("site", sqlite, web(site), MemorySink())
    assert report.failed == [(f"{site.url}/a", "unsupported media type image/gif")]


def test_retry_after_as_seconds_as_a_date_and_missing():
    soon = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert retry_after("5", 0, 60) == 5
    assert 25 < retry_after(soon, 0, 60) <= 30
    assert retry_after("600", 0, 60) == 60  # capped
    assert retry_after(None, 3, 60) == 8  # exponential backoff
