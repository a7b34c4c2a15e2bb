"""What only the Google Drive connector does: sharing as principals (people, groups, the company's
domain, links, shared-drive members, folders), the changes feed (moved, trashed, relabelled),
Google's token flow and rate limits, content types — against a loopback Drive API that speaks
Drive's JSON and verifies the service account's signed assertions."""

from __future__ import annotations

import logging

import pytest

from bot.cli import main as cli_main
from ingest.errors import ConfigError
from ingest.settings import GoogleDriveSettings
from ingest.sources.connector import ConnectorEnv, SourceUnavailable
from ingest.sources.gdrive import (
    KEY_VAR,
    DriveClient,
    GoogleAuthError,
    GoogleDriveConnector,
    ServiceAccountKey,
    doc_html,
)
from ingest.sources.state import SyncState
from ingest.sources.sync import sync
from testing.gdrive import (
    ANYONE,
    SHEET,
    SLIDES,
    Grant,
    LoopbackDrive,
    domain,
    group,
    user,
)
from testing.idp import rsa_key
from tests.ingest.sources.conftest import Killed, MemorySink

HR = group("HR@acme.example")


@pytest.fixture
def site():
    s = LoopbackDrive().start()
    yield s
    s.close()


@pytest.fixture
def policies(site):
    return site.shared_drive("Policies", members=[HR])


@pytest.fixture
def key_path(site, tmp_path):
    return site.key_file(tmp_path)


@pytest.fixture
def key(key_path):
    return ServiceAccountKey.load(key_path)


@pytest.fixture
def sqlite(tmp_path):
    st = SyncState.sqlite(tmp_path / "state.db")
    st.add_source("drive", "gdrive", {})
    yield st
    st.close()


def drive(site, key, drive_id, **kw) -> GoogleDriveConnector:
    client_kw = {k: kw.pop(k) for k in ("sleep", "retries", "max_wait_s", "subject") if k in kw}
    client_kw.setdefault("sleep", lambda s: None)
    client = DriveClient(key, token_uri=site.token_uri, api_url=site.url, **client_kw)
    kw.setdefault("domains", ("acme.example",))
    return GoogleDriveConnector(client, drive_id=drive_id, **kw)


def test_sharing_maps_to_principals(site, policies, key, sqlite):
    plain = site.put("Leave", "<p>Leave policy.</p>", policies)
    people = site.put(
        "Review",
        "<p>Private.</p>",
        policies,
        grants=[user("Ann@Acme.example", "commenter"), group("Leads@acme.example", "writer")],
    )
    company = site.put("Menu", "<p>Soup.</p>", policies, grants=[domain("acme.example")])
    link = site.put("Map", "<p>Floor 2.</p>", policies, grants=[ANYONE])
    partner = site.put("Deal", "<p>Terms.</p>", policies, grants=[domain("partner.example")])
    gone = site.put(
        "Old",
        "<p>Old.</p>",
        policies,
        grants=[Grant("user", email="left@acme.example", deleted=True)],
    )
    conn = drive(site, key, policies)
    sink = MemorySink()
    report = sync("drive", sqlite, conn, sink)
    assert len(report.written) == 6 and not report.failed
    assert sink.docs[plain].principals == ("group:hr@acme.example",)  # members, inherited
    assert sink.docs[people].principals == (
        "group:hr@acme.example",
        "group:leads@acme.example",
        "user:ann@acme.example",
    )
    assert sink.docs[company].principals == ("*",)  # the company's domain: every member
    assert sink.docs[link].principals == ("*",)  # anyone with the link: never the internet
    assert sink.docs[partner].principals == ("group:hr@acme.example",)  # not our domain
    assert any("partner.example" in w for w in conn.warnings)
    assert sink.docs[gone].principals == ("group:hr@acme.example",)  # a deleted account


def test_first_sync_reads_the_feed_token_first_then_lists_and_counts_requests(
    site, policies, key, sqlite
):
    ids = [site.put(f"Doc {n}", f"<p>Text {n}.</p>", policies) for n in range(250)]
    first = drive(site, key, policies, page_size=1000)
    sink = MemorySink()
    report = sync("drive", sqlite, first, sink)
    assert len(report.written) == 250
    # the start token, 3 listing pages (the fake gives 100 a page), per file permissions + export
    assert [p for p, _, _ in site.requests[:2]] == [
        "POST /token",
        "/drive/v3/changes/startPageToken",
    ]
    assert first.requests == 1 + 3 + 2 * 250 and len(site.token_requests) == 1

    site.requests.clear()
    again = drive(site, key, policies)
    report = sync("drive", sqlite, again, MemorySink())
    assert not report.written and len(report.unchanged) == 250
    assert again.requests == 1  # one page of the changes feed, empty

    site.edit(ids[7], "<p>Text 7, edited.</p>")
    site.trash(ids[9])
    edit = drive(site, key, policies)
    report = sync("drive", sqlite, edit, sink)
    assert report.written == [ids[7]] and report.deleted == [ids[9]]
    assert edit.requests == 1 + 2 and "edited" in str(sink.docs[ids[7]].content)
    assert len(report.unchanged) == 248


def test_a_narrowed_file_is_rewritten_with_its_new_readers_and_widened_again(
    site, policies, key, sqlite
):
    fid = site.put("Roadmap", "<p>Q3.</p>", policies, grants=[domain("acme.example")])
    sink = MemorySink()
    sync("drive", sqlite, drive(site, key, policies), sink)
    assert sink.docs[fid].principals == ("*",)
    site.share(fid, [user("ann@acme.example")])  # the company-wide grant removed
    report = sync("drive", sqlite, drive(site, key, policies), sink)
    assert report.written == [fid]
    assert sink.docs[fid].principals == ("group:hr@acme.example", "user:ann@acme.example")
    site.share(fid, [ANYONE])
    report = sync("drive", sqlite, drive(site, key, policies), sink)
    assert report.written == [fid] and sink.docs[fid].principals == ("*",)


def test_a_shared_drive_member_removed_narrows_every_file_it_reached(site, policies, key, sqlite):
    a = site.put("A", "<p>a</p>", policies)
    b = site.put("B", "<p>b</p>", policies, grants=[user("bob@acme.example")])
    sink = MemorySink()
    sync("drive", sqlite, drive(site, key, policies), sink)
    assert sink.docs[a].principals == ("group:hr@acme.example",)
    site.set_members(policies, [group("payroll@acme.example")])  # one drive change, no file's
    site.requests.clear()
    report = sync("drive", sqlite, drive(site, key, policies), sink)
    assert sorted(report.written) == sorted([a, b])
    assert sink.docs[a].principals == ("group:payroll@acme.example",)
    assert sink.docs[b].principals == ("group:payroll@acme.example", "user:bob@acme.example")
    assert site.calls("/drive/v3/files") == 1  # the feed made it list the drive again


def test_a_folder_shared_or_trashed_reaches_the_files_under_it(site, policies, key, sqlite):
    folder = site.folder("Payroll", policies)
    inner = site.folder("2026", folder)
    deep = site.put("Bands", "<p>L4.</p>", inner)
    sink = MemorySink()
    sync("drive", sqlite, drive(site, key, policies), sink)
    assert sink.docs[deep].principals == ("group:hr@acme.example",)
    site.share(folder, [user("cfo@acme.example")])  # inherited by what is under it, silently
    report = sync("drive", sqlite, drive(site, key, policies), sink)
    assert report.written == [deep]
    assert sink.docs[deep].principals == ("group:hr@acme.example", "user:cfo@acme.example")
    site.trash(folder)  # its files are trashed with it, and reported by nothing else
    report = sync("drive", sqlite, drive(site, key, policies), sink)
    assert report.deleted == [deep] and not sink.docs


@pytest.mark.parametrize("inherited_ids", [True, False], ids=["ids-move", "ids-stay"])
def test_inherited_changes_relabel_whether_or_not_permission_ids_move(
    site, policies, key, sqlite, inherited_ids
):
    """Drive does not document whether sharing a folder or changing a shared drive's members
    moves the ``permissionIds`` of the files below: either way, their readers are read again."""
    site.inherited_ids = inherited_ids
    folder = site.folder("Payroll", policies)
    a = site.put("A", "<p>a</p>", folder)
    b = site.put("B", "<p>b</p>", policies)
    sink = MemorySink()
    sync("drive", sqlite, drive(site, key, policies), sink)
    site.share(folder, [user("cfo@acme.example")])
    report = sync("drive", sqlite, drive(site, key, policies), sink)
    assert report.written == [a] and b in report.unchanged
    assert sink.docs[a].principals == ("group:hr@acme.example", "user:cfo@acme.example")
    site.set_members(policies, [])  # hr leaves the drive
    site.throttle(5, "0", file=b, calls="content")  # b's copy cannot be fetched: it leaves
    report = sync("drive", sqlite, drive(site, key, policies, retries=1), sink)
    assert report.written == [a] and report.deleted == [b]
    assert sink.docs[a].principals == ("user:cfo@acme.example",) and b not in sink.docs
    report = sync("drive", sqlite, drive(site, key, policies), sink)
    assert report.written == [b] and sink.docs[b].principals == ()


def test_a_folder_renamed_costs_nothing_and_one_moved_in_is_listed_alone(
    site, policies, key, sqlite
):
    synced = site.folder("Handbook", policies)
    chapters = site.folder("Ch", synced)
    a = site.put("a", "<p>a</p>", chapters)
    drafts = site.folder("Drafts", policies)  # outside the synced folder
    old = site.folder("Old", drafts)
    d = site.put("d", "<p>d</p>", old)
    sink = MemorySink()
    sync("drive", sqlite, drive(site, key, policies, folder_id=synced), sink)
    assert sorted(sink.docs) == [a]
    site.rename(chapters, "Chapters")  # the feed names the folder: nothing under it changed
    site.move(old, synced)  # the feed names the folder alone, not d inside it
    site.requests.clear()
    report = sync("drive", sqlite, drive(site, key, policies, folder_id=synced), sink)
    assert report.written == [d] and not report.deleted
    listings = [q["q"] for p, q, _ in site.requests if p == "/drive/v3/files"]
    assert listings == [f"'{old}' in parents and trashed = false"]  # no relisting
    assert site.calls("/permissions") == 1  # d's alone
    site.move(old, drafts)  # out again: what it holds leaves
    report = sync("drive", sqlite, drive(site, key, policies, folder_id=synced), sink)
    assert report.deleted == [d] and sorted(sink.docs) == [a]


def test_moved_out_of_the_folder_or_the_drive_and_deleted_files_leave(
    site, policies, key, key_path, sqlite
):
    other = site.shared_drive("Archive", members=[HR])
    synced = site.folder("Handbook", policies)
    sub = site.folder("Chapters", synced)
    elsewhere = site.folder("Drafts", policies)
    a, b, c, d = (site.put(n, f"<p>{n}</p>", sub) for n in "abcd")
    conn = GoogleDriveConnector.from_config(
        {"drive_id": policies, "folder_id": synced, "domains": ["acme.example"]},
        ConnectorEnv(
            gdrive=GoogleDriveSettings(
                key_file=key_path, token_uri=site.token_uri, api_url=site.url
            )
        ),
    )
    sink = MemorySink()
    sync("drive", sqlite, conn, sink)
    assert sorted(sink.docs) == sorted([a, b, c, d])
    outside = site.put("Outside", "<p>not synced</p>", elsewhere)
    site.move(a, elsewhere)  # out of the folder, still in the drive
    site.move(b, other)  # to another shared drive: removed from this drive's feed
    site.delete(c)
    e = site.put("e", "<p>e</p>", sub)  # new, two folders down: its parents are looked up
    report = sync("drive", sqlite, drive(site, key, policies, folder_id=synced), sink)
    assert sorted(report.deleted) == sorted([a, b, c]) and report.written == [e]
    assert sorted(sink.docs) == sorted([d, e]) and outside not in sink.docs
    assert not sync("drive", sqlite, drive(site, key, policies, folder_id=synced), sink).deleted


def test_google_formats_are_exported_and_other_files_downloaded_or_skipped(
    site, policies, key, sqlite
):
    doc = site.put(
        "Garage",
        '<p class="title"><span>Garage</span></p><h2 id="h.x1y2">Opening hours</h2>'
        "<p>Closes at 22:00.</p>",
        policies,
    )
    sheet = site.put("Rates", "city,rate\nLisbon,2400\n", policies, mime=SHEET)
    slides = site.put("Kickoff", "Welcome\nAgenda", policies, mime=SLIDES)
    pdf = site.put("Scan.pdf", b"%PDF-1.4 fake", policies, mime="application/pdf")
    md = site.put("notes.md", "# Notes\nHello", policies, mime="text/markdown")
    site.put("photo.png", b"\x89PNG", policies, mime="image/png")
    site.put("photo2.png", b"\x89PNG", policies, mime="image/png")
    conn = drive(site, key, policies)
    sink = MemorySink()
    report = sync("drive", sqlite, conn, sink)
    assert sorted(report.written) == sorted([doc, sheet, slides, pdf, md])
    html = str(sink.docs[doc].content)
    assert '<h2 id="heading=h.x1y2">' in html and "<style" not in html
    assert 'class="title"' not in html and "<title>Garage</title>" in html
    assert sink.docs[doc].url == f"https://docs.google.com/document/d/{doc}/edit?usp=drivesdk"
    assert (
        "<th>city</th>" in str(sink.docs[sheet].content)
        and sink.docs[sheet].media_type == "text/html"
    )
    assert sink.docs[slides].media_type == "text/plain"
    assert (
        sink.docs[pdf].content == b"%PDF-1.4 fake"
        and sink.docs[pdf].media_type == "application/pdf"
    )
    assert sink.docs[md].media_type == "text/markdown"
    assert any("2 image/png" in w for w in conn.warnings)
    assert sink.docs[doc].updated == "2026-11-30" and sink.docs[doc].owner == "Page Owner"


def test_doc_html_keeps_text_as_text():
    html = doc_html("<x>", b"<body><p>a &lt;b&gt; &amp; c</p><script>alert(1)</script></body>")
    assert "<title>&lt;x&gt;</title>" in html and "a &lt;b&gt; &amp; c" in html
    assert "alert" not in html


def test_an_expired_token_is_refreshed_once_and_the_sync_goes_on(
    site, policies, key, sqlite, caplog
):
    caplog.set_level(logging.DEBUG)
    a = site.put("A", "<p>a</p>", policies)
    waits: list[float] = []
    conn = drive(site, key, policies, sleep=waits.append)
    site.token_outage(1)  # Google's token endpoint has a bad second: retried
    sync("drive", sqlite, conn, MemorySink())
    assert len(site.token_requests) == 1 and waits == [1.0]
    b = site.put("B", "<p>b</p>", policies)
    site.expire_tokens()  # an hour later, the cached token is refused
    report = sync("drive", sqlite, conn, MemorySink())
    assert report.written == [b] and len(site.token_requests) == 2
    assert [s for p, _, s in site.requests if p == "/drive/v3/changes"] == [401, 200]
    assert a not in report.written
    assert "ya29." not in caplog.text and "PRIVATE KEY" not in caplog.text  # no secret logged


def test_a_key_google_does_not_know_is_a_clear_error_that_never_shows_the_key(
    site, policies, tmp_path, sqlite, caplog
):
    site.put("A", "<p>a</p>", policies)
    wrong = ServiceAccountKey.load(site.key_file(tmp_path, key=rsa_key("someone-else")))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(GoogleAuthError, match=KEY_VAR) as err:
        sync("drive", sqlite, drive(site, wrong, policies), MemorySink())
    assert "Invalid JWT Signature" in str(err.value)
    secret = wrong.private_key.get_secret_value()
    body = secret.splitlines()[1]
    assert body not in str(err.value) and body not in caplog.text
    assert KEY_VAR in (sqlite.source("drive").last_error or "")


def test_a_subject_without_delegation_names_the_fix(site, policies, key, sqlite):
    site.subjects = {"sync@acme.example"}
    site.put("A", "<p>a</p>", policies)
    with pytest.raises(GoogleAuthError, match="domain-wide delegation"):
        sync("drive", sqlite, drive(site, key, policies, subject="eve@acme.example"), MemorySink())
    report = sync(
        "drive", sqlite, drive(site, key, policies, subject="sync@acme.example"), MemorySink()
    )
    assert len(report.written) == 1 and site.token_requests[-1]["sub"] == "sync@acme.example"


def test_rate_limits_and_outages_wait_for_retry_after_within_a_bound(site, policies, key, sqlite):
    fid = site.put("Leave", "<p>Leave policy.</p>", policies)
    waits: list[float] = []
    site.throttle(1, "7")  # 429, whatever the call
    site.throttle(1, "7", status=403, reason="userRateLimitExceeded")
    site.throttle(1, None, status=503)  # no Retry-After: backoff, 2 s to the third retry
    site.throttle(1, "3600", file=fid)
    conn = drive(site, key, policies, sleep=waits.append, max_wait_s=30)
    report = sync("drive", sqlite, conn, MemorySink())
    assert waits == [7.0, 7.0, 4.0, 30.0] and report.written == [fid] and not report.failed


def test_a_403_that_is_not_a_rate_limit_is_not_retried(site, policies, key, sqlite):
    fid = site.put("Big", "<p>big</p>", policies)
    site.throttle(1, None, file=fid, status=403, reason="exportSizeLimitExceeded")
    waits: list[float] = []
    report = sync("drive", sqlite, drive(site, key, policies, sleep=waits.append), MemorySink())
    assert [k for k, _ in report.failed] == [fid] and "exportSizeLimitExceeded" not in str(waits)
    assert not waits and "HTTP 403" in report.failed[0][1]


def test_a_listing_throttled_past_the_retries_stops_and_deletes_nothing(
    site, policies, key, sqlite
):
    site.put("A", "<p>a</p>", policies)
    sink = MemorySink()
    sync("drive", sqlite, drive(site, key, policies), sink)
    site.throttle(10, "0")
    with pytest.raises(SourceUnavailable, match="429 after 3 tries"):
        sync("drive", sqlite, drive(site, key, policies, retries=2), sink)
    assert len(sink.docs) == 1 and len(sqlite.versions("drive")) == 1


def test_a_narrowed_file_that_cannot_be_fetched_leaves_the_index_until_it_can(
    site, policies, key, sqlite
):
    edited = site.put("Open", "<p>o</p>", policies)
    narrowed = site.put("Roadmap", "<p>r</p>", policies, grants=[user("bob@acme.example")])
    sink = MemorySink()
    sync("drive", sqlite, drive(site, key, policies), sink)
    site.edit(edited, "<p>o, edited</p>")
    site.share(narrowed, [])  # bob loses it
    site.throttle(5, "0", file=narrowed)
    site.throttle(5, "0", file=edited)
    report = sync("drive", sqlite, drive(site, key, policies, retries=1), sink)
    assert report.deleted == [narrowed] and narrowed not in sink.docs  # no stale wide copy
    assert [k for k, _ in report.failed] == [edited]  # merely edited: kept as it was
    report = sync("drive", sqlite, drive(site, key, policies), sink)
    assert sorted(report.written) == sorted([edited, narrowed])
    assert sink.docs[narrowed].principals == ("group:hr@acme.example",)


def test_a_failed_file_asked_for_by_id_again_gone_or_still_failing_never_stops_the_sync(
    site, policies, key, sqlite
):
    a, b = site.put("A", "<p>a</p>", policies), site.put("B", "<p>b</p>", policies)
    site.throttle(2, "0", file=a)
    site.throttle(2, "0", file=b)
    report = sync("drive", sqlite, drive(site, key, policies, retries=1), MemorySink())
    assert sorted(k for k, _ in report.failed) == sorted([a, b])
    site.delete(a)  # gone before the retry
    site.throttle(2, "0", file=b, calls="metadata")
    conn = drive(site, key, policies, retries=1)
    report = sync("drive", sqlite, conn, MemorySink())
    assert not report.written and not report.failed  # a: never written; b: asked again later
    report = sync("drive", sqlite, drive(site, key, policies), MemorySink())
    assert report.written == [b]


def test_permissions_the_account_may_not_see_make_the_file_admins_only(site, policies, key, sqlite):
    fid = site.put("A", "<p>a</p>", policies)
    site.throttle(
        1, None, file=fid, status=403, reason="insufficientFilePermissions", calls="permissions"
    )
    conn = drive(site, key, policies)
    sink = MemorySink()
    sync("drive", sqlite, conn, sink)
    assert sink.docs[fid].principals == ()
    assert any("content manager" in w for w in conn.warnings)


def test_kill_mid_feed_then_resume_fetches_only_what_was_not_recorded(site, policies, key, sqlite):
    sync("drive", sqlite, drive(site, key, policies), MemorySink())
    ids = [site.put(f"P{n}", f"<p>{n}</p>", policies) for n in range(5)]
    with pytest.raises(Killed):
        sync("drive", sqlite, drive(site, key, policies, batch_size=2), MemorySink(die_after=2))
    assert sorted(sqlite.versions("drive")) == sorted(ids[:2])
    resumed = MemorySink()
    report = sync("drive", sqlite, drive(site, key, policies, batch_size=2), resumed)
    assert sorted(resumed.writes) == sorted(ids[2:]) and sorted(report.unchanged) == sorted(ids[:2])
    assert [site.fetches(i) for i in ids] == [1, 1, 2, 2, 1]  # the batch it died in, again
    assert not sync("drive", sqlite, drive(site, key, policies), MemorySink()).written


def test_missing_or_broken_key_files_name_the_variable(tmp_path):
    with pytest.raises(ConfigError, match=KEY_VAR):
        GoogleDriveConnector.from_config({"drive_id": "x"}, ConnectorEnv())
    with pytest.raises(ConfigError, match=KEY_VAR):
        DriveClient.from_settings(GoogleDriveSettings(key_file=tmp_path / "none.json"))
    for wrong in (
        {"token_uri": "http://oauth2.example/token"},
        {"api_url": "http://drive.example"},
    ):
        with pytest.raises(ConfigError, match="must be an https URL"):
            DriveClient.from_settings(GoogleDriveSettings(key_file=tmp_path / "k.json", **wrong))
    broken = tmp_path / "broken.json"
    broken.write_text('{"type": "authorized_user", "private_key": "-----BEGIN PRIVATE KEY-----x"}')
    with pytest.raises(ConfigError, match="not a service account") as err:
        DriveClient.from_settings(GoogleDriveSettings(key_file=broken))
    assert "BEGIN" not in str(err.value)


def test_config_resolves_the_shared_drive_or_folder_and_the_domain(site, policies, key):
    client = DriveClient(
        key, subject="sync@acme.example", token_uri=site.token_uri, api_url=site.url
    )
    assert GoogleDriveConnector.config(client, shared_drive="Policies") == {
        "drive_id": policies,
        "name": "Policies",
        "domains": ["acme.example"],
    }
    folder = site.folder("Handbook", policies)
    assert GoogleDriveConnector.config(
        client, folder=folder, domains=["@Acme.example", "b.example"]
    ) == {
        "drive_id": policies,
        "folder_id": folder,
        "name": "Handbook",
        "domains": ["acme.example", "b.example"],
    }
    with pytest.raises(ConfigError, match="not a member of a shared drive named 'Nope'"):
        GoogleDriveConnector.config(client, shared_drive="Nope")
    site.shared_drive("Policies")
    with pytest.raises(ConfigError, match="2 shared drives are named"):
        GoogleDriveConnector.config(client, shared_drive="Policies")
    doc = site.put("A doc", "<p>a</p>", policies)
    with pytest.raises(ConfigError, match="not a folder"):
        GoogleDriveConnector.config(client, folder=doc)
    with pytest.raises(ConfigError, match="folder's id"):
        GoogleDriveConnector.config(client, folder="x' or name contains 'y")
    plain = DriveClient(key, token_uri=site.token_uri, api_url=site.url)
    with pytest.raises(ConfigError, match="--domain"):
        GoogleDriveConnector.config(plain, shared_drive="Policies")


def test_sources_add_gdrive_then_sync_through_the_cli(
    site, policies, tmp_path, monkeypatch, capsys
):
    key_path = site.key_file(tmp_path)
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("FOOTNOTE_GDRIVE__KEY_FILE", raising=False)
    add = ["sources", "add", "gdrive", "--shared-drive", "Policies", "--domain", "acme.example"]
    assert cli_main(add) == 2  # no key yet
    assert KEY_VAR in capsys.readouterr().err
    monkeypatch.setenv("FOOTNOTE_GDRIVE__KEY_FILE", str(key_path))
    monkeypatch.setenv("FOOTNOTE_GDRIVE__TOKEN_URI", site.token_uri)
    monkeypatch.setenv("FOOTNOTE_GDRIVE__API_URL", site.url)
    assert cli_main(add) == 0
    assert "added gdrive source Policies" in capsys.readouterr().out
    state = SyncState.sqlite(tmp_path / "data" / "state.db")
    try:
        record = state.source("Policies")
        assert record and record.config["drive_id"] == policies
        assert "PRIVATE" not in str(record.config) and str(key_path) not in str(record.config)
    finally:
        state.close()
    assert cli_main(["sources", "list"]) == 0
    assert "gdrive" in capsys.readouterr().out
