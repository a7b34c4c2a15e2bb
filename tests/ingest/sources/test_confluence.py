"""What only the Confluence connector does: permissions as principals, request counts, paging,
restrictions narrowed and widened, throttling, refused credentials — against a loopback
Confluence that speaks the REST API's JSON."""

from __future__ import annotations

import base64
import logging

import pytest
from pydantic import SecretStr

from bot.cli import main as cli_main
from ingest.errors import ConfigError
from ingest.settings import ConfluenceSettings
from ingest.sources.confluence import (
    TOKEN_VAR,
    ConfluenceAuthError,
    ConfluenceConnector,
    storage_html,
)
from ingest.sources.connector import ConnectorEnv, SourceUnavailable
from ingest.sources.state import SyncState
from ingest.sources.sync import sync
from testing.confluence import LoopbackConfluence, User
from tests.ingest.sources.conftest import Killed, MemorySink

ANN = User("acc-ann", "Ann Lee", "Ann@X.com")
HIDDEN = User("acc-hid", "Hidden Person")  # the profile hides the e-mail


@pytest.fixture
def site():
    s = LoopbackConfluence().start()
    s.space("HR", groups=["hr"])
    s.space("ENG", groups=["confluence-users"])
    yield s
    s.close()


@pytest.fixture
def sqlite(tmp_path):
    st = SyncState.sqlite(tmp_path / "state.db")
    st.add_source("wiki", "confluence", {})
    yield st
    st.close()


def wiki(site: LoopbackConfluence, **kw) -> ConfluenceConnector:
    kw.setdefault("sleep", lambda s: None)
    kw.setdefault("spaces", ("HR", "ENG"))
    kw.setdefault("token", SecretStr(site.token))
    return ConfluenceConnector(site=site.url, email=site.email, **kw)


def bodies(site: LoopbackConfluence) -> int:
    """Requests that fetched page bodies."""
    return sum("body.storage" in q.get("expand", "") for q in site.searches())


def test_permissions_map_to_principals(site, sqlite, tmp_path):
    hr = site.put("HR", "Leave", "<p>Leave policy.</p>")
    eng = site.put("ENG", "Build", "<p>How to build.</p>")
    ann = site.put("HR", "Ann's review", "<p>Private.</p>")
    site.restrict(ann, users=[ANN], groups=["hr-leads"])
    hidden = site.put("HR", "Hidden", "<p>Only a hidden user.</p>")
    site.restrict(hidden, users=[HIDDEN])
    mixed = site.put("HR", "Mixed", "<p>A hidden user and a group.</p>")
    site.restrict(mixed, users=[HIDDEN], groups=["payroll"])
    mapping = tmp_path / "groups.yaml"
    mapping.write_text("hr-leads: [managers, group:leads]\n")
    conn = ConfluenceConnector.from_config(
        ConfluenceConnector.config(site.url, ["HR", "ENG"], str(mapping)),
        ConnectorEnv(confluence=ConfluenceSettings(email=site.email, api_token=site.token)),
    )
    sink = MemorySink()
    sync("wiki", sqlite, conn, sink)
    assert sink.docs[hr].principals == ("group:hr",)
    assert sink.docs[eng].principals == ("*",)  # a space every licensed user reads
    assert sink.docs[ann].principals == ("group:leads", "group:managers", "user:ann@x.com")
    assert sink.docs[hidden].principals == ()  # nobody it can name: admins only, never the space
    assert sink.docs[mixed].principals == ("group:payroll",)
    assert any("Hidden Person" in w and "e-mail" in w for w in conn.warnings)


def test_a_restricted_parent_narrows_its_children(site, sqlite):
    parent = site.put("HR", "Salaries", "<p>Bands.</p>")
    site.restrict(parent, groups=["payroll", "hr"])
    child = site.put("HR", "Engineering bands", "<p>L4.</p>", parent=parent)
    grandchild = site.put("HR", "L4 detail", "<p>L4 detail.</p>", parent=child)
    site.restrict(grandchild, groups=["payroll", "engineering"])
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    assert sink.docs[child].principals == ("group:hr", "group:payroll")  # inherited
    assert sink.docs[grandchild].principals == ("group:payroll",)  # what both levels name
    site.restrict(parent)  # the parent opens: the child has the space's readers again
    report = sync("wiki", sqlite, wiki(site), sink)
    assert sorted(report.written) == sorted([parent, child, grandchild])
    assert sink.docs[child].principals == ("group:hr",)
    assert sink.docs[grandchild].principals == ("group:engineering", "group:payroll")


def test_a_restricted_folder_narrows_the_pages_in_it_and_an_unreadable_one_shuts_them(site, sqlite):
    folder = site.put("ENG", "Incidents", "", type="folder")
    site.restrict(folder, groups=["sre"])
    inside = site.put("ENG", "Outage review", "<p>Root cause.</p>", parent=folder)
    conn = wiki(site)
    sink = MemorySink()
    report = sync("wiki", sqlite, conn, sink)
    assert report.written == [inside]  # the folder restricts; it is not synced itself
    assert sink.docs[inside].principals == ("group:sre",)
    site.pages[folder].hidden = True  # the sync account can no longer see the folder
    report = sync("wiki", sqlite, wiki(site), sink)
    assert report.written == [inside] and sink.docs[inside].principals == ()


def test_anonymous_space_access_means_every_member_never_the_internet(site, sqlite):
    site.space("PUB", groups=[], anonymous=True)
    page = site.put("PUB", "Lunch menu", "<p>Soup.</p>")
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site, spaces=("PUB",)), sink)
    assert sink.docs[page].principals == ("*",)


def test_a_space_whose_permissions_are_hidden_is_admins_only_and_said(site, sqlite):
    site.space("OPS", groups=[])  # as Confluence answers an account that cannot see them
    page = site.put("OPS", "Runbook", "<p>Restart it.</p>")
    conn = wiki(site, spaces=("OPS",))
    sink = MemorySink()
    sync("wiki", sqlite, conn, sink)
    assert sink.docs[page].principals == ()
    assert any("space OPS" in w and "admins only" in w for w in conn.warnings)


def test_a_page_is_html_with_its_title_anchored_headings_and_no_macro_settings(site, sqlite):
    body = (
        "<h2>Opening hours</h2><p>Closes at 22:00.</p>"
        '<ac:structured-macro ac:name="info"><ac:parameter ac:name="title">SECRETPARAM'
        "</ac:parameter><ac:rich-text-body><p>Bring your badge.</p></ac:rich-text-body>"
        "</ac:structured-macro><p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"
    )
    pid = site.put("HR", "Garage <b>rules</b>", body)
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    doc = sink.docs[pid]
    html = doc.content if isinstance(doc.content, str) else doc.content.decode()
    assert doc.url == f"{site.url}/wiki/spaces/HR/pages/{pid}/Garage+%3Cb%3Erules%3C%2Fb%3E"
    assert '<h2 id="Opening-hours">' in html and "Bring your badge." in html
    assert "SECRETPARAM" not in html and "<script>" not in html
    assert "<title>Garage &lt;b&gt;rules&lt;/b&gt;</title>" in html
    assert doc.title == "Garage <b>rules</b>" and doc.updated == "2026-11-30"
    assert doc.media_type == "text/html" and doc.owner == "Page Owner"


def test_storage_html_keeps_text_as_text():
    html = storage_html("<x>", "<p>a &amp; b</p>")
    assert "<title>&lt;x&gt;</title>" in html and "a &amp; b" in html


def test_incremental_fetches_only_what_changed_and_counts_its_requests(site, sqlite):
    ids = [site.put("HR" if n % 2 else "ENG", f"Page {n}", f"<p>Text {n}.</p>") for n in range(60)]
    first = wiki(site, batch_size=25)
    report = sync("wiki", sqlite, first, MemorySink())
    assert len(report.written) == 60
    # 2 spaces, a listing of 60 in pages of 50 (2), bodies in batches of 25 (3), and each new
    # page's attachments (60)
    assert first.requests == 2 + 2 + 3 + 60 and bodies(site) == 3
    assert len(site.listings()) == 60

    site.requests.clear()
    again = wiki(site, batch_size=25)
    report = sync("wiki", sqlite, again, MemorySink())
    assert not report.written and len(report.unchanged) == 60
    assert again.requests == 4 and bodies(site) == 0  # permissions and the listing only

    site.requests.clear()
    site.edit(ids[7], "<p>Text 7, edited.</p>")
    site.edit(ids[40], "<p>Text 40, edited.</p>")
    edit = wiki(site, batch_size=25)
    sink = MemorySink()
    report = sync("wiki", sqlite, edit, sink)
    assert sorted(report.written) == sorted([ids[7], ids[40]])
    assert edit.requests == 5 + 2 and bodies(site) == 1  # and the edited pages' attachments
    assert sorted(site.listings()) == sorted([ids[7], ids[40]])
    assert "edited" in str(sink.docs[ids[7]].content)
    assert [s for p, q, s in site.requests if "cursor" in q] == [200]  # _links.next followed


def test_trashed_deleted_and_moved_pages_are_deleted_once(site, sqlite):
    a, b, c, d = (site.put("HR", n, f"<p>{n}</p>") for n in "abcd")
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    site.pages[a].status = "trashed"
    del site.pages[b]
    site.pages[c].space = "OTHER"  # moved to a space this source does not sync
    report = sync("wiki", sqlite, wiki(site), sink)
    assert sorted(report.deleted) == sorted([a, b, c]) and sorted(sink.docs) == [d]
    assert not sync("wiki", sqlite, wiki(site), sink).deleted


def test_a_narrowed_restriction_rewrites_the_page_without_a_new_version(site, sqlite):
    pid = site.put("ENG", "Roadmap", "<p>Q3 plans.</p>")
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    assert sink.docs[pid].principals == ("*",)
    site.restrict(pid, groups=["leads"])  # Confluence moves no version for this
    report = sync("wiki", sqlite, wiki(site), sink)
    assert report.written == [pid] and sink.docs[pid].principals == ("group:leads",)
    site.restrict(pid)  # widened again
    report = sync("wiki", sqlite, wiki(site), sink)
    assert report.written == [pid] and sink.docs[pid].principals == ("*",)


def test_throttled_requests_wait_for_retry_after_within_a_bound(site, sqlite):
    site.put("HR", "Leave", "<p>Leave policy.</p>")
    waits: list[float] = []
    site.throttle(1, "7")  # the next request, whatever it asks
    site.throttle(1, "7", status=503)
    site.throttle(1, "3600", page=next(iter(site.pages)))
    report = sync("wiki", sqlite, wiki(site, sleep=waits.append, max_wait_s=30), MemorySink())
    assert waits == [7.0, 7.0, 30.0] and len(report.written) == 1 and not report.failed


def test_throttled_past_the_retries_stops_the_listing_and_deletes_nothing(site, sqlite):
    site.put("HR", "Leave", "<p>Leave policy.</p>")
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    site.throttle(10, "0")
    with pytest.raises(SourceUnavailable, match="429 after 3 tries"):
        sync("wiki", sqlite, wiki(site, retries=2), sink)
    assert len(sink.docs) == 1 and len(sqlite.versions("wiki")) == 1


def test_a_body_throttled_past_the_retries_fails_alone_and_is_fetched_next_time(site, sqlite):
    a = site.put("HR", "A", "<p>a</p>")
    site.throttle(5, "0", page=a)
    report = sync("wiki", sqlite, wiki(site, retries=1, batch_size=1), MemorySink())
    assert [k for k, _ in report.failed] == [a]
    report = sync("wiki", sqlite, wiki(site), MemorySink())
    assert report.written == [a] and not report.failed


def test_a_narrowed_page_whose_body_cannot_be_fetched_leaves_the_index_until_it_can(site, sqlite):
    open_page, narrowed = (
        site.put("ENG", "Open", "<p>o</p>"),
        site.put("ENG", "Roadmap", "<p>r</p>"),
    )
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    site.edit(open_page, "<p>o, edited</p>")
    site.restrict(narrowed, groups=["leads"])
    site.throttle(5, "0", page=narrowed)
    report = sync("wiki", sqlite, wiki(site, retries=1), sink)
    assert report.deleted == [narrowed] and narrowed not in sink.docs  # no stale wide copy
    assert [k for k, _ in report.failed] == [open_page]  # merely edited: kept as it was
    report = sync("wiki", sqlite, wiki(site), sink)
    assert sorted(report.written) == sorted([open_page, narrowed])
    assert sink.docs[narrowed].principals == ("group:leads",)


def test_an_expired_token_is_a_clear_error_naming_the_variable(site, sqlite, caplog):
    site.put("HR", "Leave", "<p>Leave policy.</p>")
    sink = MemorySink()
    sync("wiki", sqlite, wiki(site), sink)
    site.token = "token-2"  # rotated: the one Footnote holds is refused
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ConfluenceAuthError, match=TOKEN_VAR) as err:
        sync("wiki", sqlite, wiki(site, token=SecretStr("token-1")), sink)
    basic = base64.b64encode(f"{site.email}:token-1".encode()).decode()
    assert not {"token-1", basic} & {str(err.value), caplog.text} and basic not in caplog.text
    assert "token-1" not in caplog.text
    assert TOKEN_VAR in (sqlite.source("wiki").last_error or "")
    assert len(sink.docs) == 1  # nothing deleted


def test_missing_credentials_name_both_variables():
    config = ConfluenceConnector.config("https://acme.atlassian.net", ["HR"])
    for creds in (None, ConfluenceSettings(email="a@b.c"), ConfluenceSettings(api_token="t")):
        with pytest.raises(ConfigError) as err:
            ConfluenceConnector.from_config(config, ConnectorEnv(confluence=creds))
        assert "FOOTNOTE_CONFLUENCE__EMAIL" in str(err.value) and TOKEN_VAR in str(err.value)


def test_an_unknown_space_stops_the_sync_by_name(site, sqlite):
    with pytest.raises(SourceUnavailable, match="space NOPE.*404"):
        sync("wiki", sqlite, wiki(site, spaces=("NOPE",)), MemorySink())


def test_config_checks_the_url_and_spaces_and_stores_no_secret(tmp_path):
    config = ConfluenceConnector.config("https://acme.atlassian.net/wiki/", ["HR", "ENG", "HR"])
    assert config == {
        "url": "https://acme.atlassian.net",
        "spaces": ["ENG", "HR"],
        "group_map": "",
        "everyone_groups": ["confluence-users"],
    }
    with pytest.raises(ConfigError, match="https"):
        ConfluenceConnector.config("http://acme.atlassian.net", ["HR"])
    with pytest.raises(ConfigError, match="--space"):
        ConfluenceConnector.config("https://acme.atlassian.net", ["HR ENG"])
    with pytest.raises(ConfigError, match="mapping"):
        ConfluenceConnector.config("https://acme.atlassian.net", ["HR"], str(tmp_path / "none"))


def test_kill_mid_sync_then_resume_fetches_only_what_was_not_recorded(site, sqlite):
    ids = [site.put("HR", f"P{n}", f"<p>{n}</p>") for n in range(7)]
    with pytest.raises(Killed):  # the first batch is the listing; dies writing pages 2-3
        sync("wiki", sqlite, wiki(site, batch_size=2), MemorySink(die_after=2))
    assert sorted(sqlite.versions("wiki")) == sorted(ids[:2])
    site.requests.clear()
    resumed = MemorySink()
    report = sync("wiki", sqlite, wiki(site, batch_size=2), resumed)
    assert sorted(resumed.writes) == sorted(ids[2:])
    assert all(site.fetches(i) == 0 for i in ids[:2]) and len(report.unchanged) == 2


def test_sources_add_confluence_then_sync_without_credentials_names_them(
    site, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("FOOTNOTE_CONFLUENCE__EMAIL", raising=False)
    monkeypatch.delenv("FOOTNOTE_CONFLUENCE__API_TOKEN", raising=False)
    add = ["sources", "add", "confluence", "--url", site.url, "--space", "HR", "--space", "ENG"]
    assert cli_main([*add, "--name", "wiki"]) == 0
    out = capsys.readouterr().out
    assert "added confluence source wiki" in out and "FOOTNOTE_CONFLUENCE__API_TOKEN" in out
    assert cli_main(["sync", "--source", "wiki"]) == 2
    err = capsys.readouterr().err
    assert "FOOTNOTE_CONFLUENCE__EMAIL" in err and TOKEN_VAR in err
    assert cli_main(["sources", "list"]) == 0
    assert "confluence" in capsys.readouterr().out
    state = SyncState.sqlite(tmp_path / "data" / "state.db")
    try:
        record = state.source("wiki")
        assert record and record.config["spaces"] == ["ENG", "HR"]
        assert site.token not in str(record.config)
    finally:
        state.close()
