"""What only the SharePoint connector does: Graph permissions as principals (direct, inherited,
sharing links), sharing changes that move no version, moves, token refresh, stale delta tokens,
throttling and request counts — against a loopback Microsoft Graph speaking its JSON."""

from __future__ import annotations

import json
import logging

import pytest
from pydantic import SecretStr

from bot.cli import main as cli_main
from ingest.errors import ConfigError
from ingest.settings import GraphSettings
from ingest.sources.connector import ConnectorEnv, SourceUnavailable
from ingest.sources.graph_client import CLIENT_VAR, SECRET_VAR, TENANT_VAR, GraphAuthError
from ingest.sources.sharepoint import SharePointConnector
from ingest.sources.state import SyncState
from ingest.sources.sync import IndexSink, sync
from testing.graph import (
    FakeDrive,
    LoopbackGraph,
    entra_group,
    granted,
    link,
    person,
    site_group,
)
from tests.ingest.sources.conftest import MemorySink


def page(title: str, text: str = "") -> str:
    return f"<html><head><title>{title}</title></head><body><p>{text or title}</p></body></html>"


@pytest.fixture
def graph():
    g = LoopbackGraph().start()
    yield g
    g.close()


@pytest.fixture
def site(graph):
    return graph.site("acme.sharepoint.com", "/sites/Support")


@pytest.fixture
def docs(graph, site) -> FakeDrive:
    return graph.drives[site.drives[0]]


@pytest.fixture
def sqlite(tmp_path):
    st = SyncState.sqlite(tmp_path / "state.db")
    st.add_source("sp", "sharepoint", {})
    yield st
    st.close()


def sharepoint(graph: LoopbackGraph, site=None, **kw) -> SharePointConnector:
    kw.setdefault("sleep", lambda s: None)
    kw.setdefault("client_secret", SecretStr(graph.client_secret))
    return SharePointConnector(
        tenant_id=graph.tenant,
        client_id=graph.client_id,
        site=site.web_url if site else "",
        authority=graph.url,
        graph_url=f"{graph.url}/v1.0",
        **kw,
    )


def env(graph: LoopbackGraph, **kw) -> ConnectorEnv:
    creds = {
        "tenant_id": graph.tenant,
        "client_id": graph.client_id,
        "client_secret": graph.client_secret,
        "authority": graph.url,
        "url": f"{graph.url}/v1.0",
        **kw,
    }
    return ConnectorEnv(graph=GraphSettings(**creds))


def key(drive: FakeDrive, item_id: str) -> str:
    return f"{drive.id}/{item_id}"


def test_permissions_map_to_principals(graph, site, docs, sqlite, tmp_path):
    graph.share(
        docs,
        docs.root,
        [granted(site_group("3", "Support Members")), granted(entra_group("g-support", "Support"))],
    )
    plain = graph.put(docs, "Plain.html", page("Plain"))  # inherits the library's root
    people = graph.put(
        docs,
        "People.html",
        page("People"),
        grants=[
            granted(person("Ann@X.com")),
            link("users", [person("bo@x.com"), person("hid@x.com", "Hidden Person", False)]),
        ],
        inherits=False,
    )
    org = graph.put(docs, "Org.html", page("Org"), grants=[link("organization")])
    anon = graph.put(docs, "Anon.html", page("Anon"), grants=[link("anonymous")], inherits=False)
    existing = graph.put(
        docs, "Existing.html", page("Existing"), grants=[link("existingAccess")], inherits=False
    )
    claims = graph.put(
        docs,
        "Claims.html",
        page("Claims"),
        grants=[
            granted({"siteUser": {"id": "7", "loginName": "i:0#.f|membership|Cy@X.com"}}),
            granted(
                {
                    "siteUser": {
                        "id": "8",
                        "loginName": "c:0o.c|federateddirectoryclaimprovider|g-m365_o",
                    }
                }
            ),
        ],
        inherits=False,
    )
    visitors = graph.put(
        docs,
        "Visitors.html",
        page("Visitors"),
        grants=[granted(site_group("5", "Support Visitors")), granted(person("dee@x.com"))],
        inherits=False,
    )
    graph.put(
        docs, "More.html", page("More"), grants=[granted(site_group("5", "Support Visitors"))]
    )
    mapping = tmp_path / "groups.yaml"
    mapping.write_text("Support Members: support\n")
    conn = SharePointConnector.from_config(
        SharePointConnector.config(site=site.web_url, group_map=str(mapping)), env(graph)
    )
    sink = MemorySink()
    sync("sp", sqlite, conn, sink)
    got = {k.split("/", 1)[1]: d.principals for k, d in sink.docs.items()}
    assert got[plain] == ("group:g-support", "group:support")  # inherited, site group mapped
    assert got[people] == ("user:ann@x.com", "user:bo@x.com")  # direct + specific-people link
    assert got[org] == ("*", "group:g-support", "group:support")  # the link adds everyone
    assert got[anon] == ("*",)  # anonymous links: every member, never the open internet
    assert got[existing] == ()  # adds no one: admins only
    assert got[claims] == ("group:g-m365", "user:cy@x.com")  # from SharePoint login claims
    assert got[visitors] == ("user:dee@x.com",)
    assert any("Hidden Person" in w and "e-mail" in w for w in conn.warnings)
    noted = [w for w in conn.warnings if "Support Visitors" in w]
    assert len(noted) == 1 and "--group-map" in noted[0]  # once, not once per file
    doc = sink.docs[key(docs, plain)]
    assert doc.url == "https://acme.sharepoint.com/sites/Support/Shared%20Documents/Plain.html"
    assert doc.title == "Plain" and doc.media_type == "text/html" and doc.owner == "File Owner"


def test_a_sharing_change_alone_is_written_with_the_same_etag_and_new_principals(
    graph, site, docs, sqlite
):
    roadmap = graph.put(docs, "Roadmap.html", page("Roadmap"), grants=[link("organization")])
    other = graph.put(docs, "Other.html", page("Other"), grants=[link("organization")])
    sink = MemorySink()
    sync("sp", sqlite, sharepoint(graph, site), sink)
    before = json.loads(sqlite.versions("sp")[key(docs, roadmap)])
    assert sink.docs[key(docs, roadmap)].principals == ("*",)

    graph.share(docs, roadmap, [granted(entra_group("g-leads"))])  # narrowed; no version moves
    report = sync("sp", sqlite, sharepoint(graph, site), sink)
    assert report.written == [key(docs, roadmap)] and report.unchanged == [key(docs, other)]
    assert sink.docs[key(docs, roadmap)].principals == ("group:g-leads",)
    after = json.loads(sqlite.versions("sp")[key(docs, roadmap)])
    assert after["tag"] == before["tag"] and after["principals"] != before["principals"]

    graph.share(docs, roadmap, [granted(entra_group("g-leads")), link("organization")])  # widened
    report = sync("sp", sqlite, sharepoint(graph, site), sink)
    assert report.written == [key(docs, roadmap)]
    assert sink.docs[key(docs, roadmap)].principals == ("*", "group:g-leads")
    assert graph.fetched(other) == 1  # never fetched again


def test_a_folder_shared_anew_reaches_the_files_that_inherit_from_it(graph, site, docs, sqlite):
    hr = graph.folder(docs, "HR", grants=[granted(entra_group("g-hr"))])
    sub = graph.folder(docs, "Payroll", parent=hr)
    inside = graph.put(docs, "Bands.html", page("Bands"), parent=sub)
    unique = graph.put(
        docs,
        "Own.html",
        page("Own"),
        parent=hr,
        grants=[granted(person("x@x.com"))],
        inherits=False,
    )
    sink = MemorySink()
    sync("sp", sqlite, sharepoint(graph, site), sink)
    assert sink.docs[key(docs, inside)].principals == ("group:g-hr",)  # two levels up
    graph.share(docs, hr, [granted(entra_group("g-hr")), granted(entra_group("g-managers"))])
    report = sync("sp", sqlite, sharepoint(graph, site), sink)
    assert report.written == [key(docs, inside)]  # not the file with unique permissions
    assert sink.docs[key(docs, inside)].principals == ("group:g-hr", "group:g-managers")
    assert sink.docs[key(docs, unique)].principals == ("user:x@x.com",)


def test_a_file_moved_out_of_a_shared_folder_loses_those_readers(graph, site, docs, sqlite):
    shared = graph.folder(docs, "Shared with Ann", grants=[granted(person("ann@x.com"))])
    private = graph.folder(
        docs, "Finance", grants=[granted(entra_group("g-finance"))], inherits=False
    )
    budget = graph.put(docs, "Budget.html", page("Budget"), parent=shared)
    sink = MemorySink()
    sync("sp", sqlite, sharepoint(graph, site), sink)
    assert sink.docs[key(docs, budget)].principals == ("user:ann@x.com",)
    graph.move(docs, budget, private)
    report = sync("sp", sqlite, sharepoint(graph, site), sink)
    assert report.written == [key(docs, budget)]
    doc = sink.docs[key(docs, budget)]
    assert doc.principals == ("group:g-finance",) and doc.url.endswith("/Finance/Budget.html")


def test_deleted_files_and_folders_are_deleted_once(graph, site, docs, sqlite):
    folder = graph.folder(docs, "Old")
    a = graph.put(docs, "A.html", page("A"), parent=folder)
    b = graph.put(docs, "B.html", page("B"), parent=folder)
    c = graph.put(docs, "C.html", page("C"))
    d = graph.put(docs, "D.html", page("D"))
    sink = MemorySink()
    sync("sp", sqlite, sharepoint(graph, site), sink)
    graph.delete(docs, folder)
    graph.delete(docs, c)
    report = sync("sp", sqlite, sharepoint(graph, site), sink)
    assert sorted(report.deleted) == sorted(key(docs, i) for i in (a, b, c))
    assert list(sink.docs) == [key(docs, d)]
    assert not sync("sp", sqlite, sharepoint(graph, site), sink).deleted


def test_the_token_is_kept_until_it_expires_and_replaced_once_when_graph_refuses_it(
    graph, site, docs, sqlite
):
    for n in range(3):
        graph.put(docs, f"F{n}.html", page(f"F{n}"))
    now = [0.0]
    conn = sharepoint(graph, site, clock=lambda: now[0])
    sync("sp", sqlite, conn, MemorySink())
    assert graph.count("token") == 1  # one token for the whole sync

    graph.expire_tokens()  # Graph calls it expired before Footnote's clock does
    graph.put(docs, "New.html", page("New"))
    report = sync("sp", sqlite, conn, MemorySink())
    assert len(report.written) == 1 and graph.count("token") == 2
    assert [s for m, p, q, s in graph.requests].count(401) == 1

    now[0] += 3600  # past its lifetime: a new one before asking Graph anything
    sync("sp", sqlite, conn, MemorySink())
    assert graph.count("token") == 3 and [s for *_, s in graph.requests].count(401) == 1


def test_refused_credentials_stop_the_sync_naming_the_variables_and_never_the_secret(
    graph, site, docs, sqlite, caplog
):
    graph.put(docs, "A.html", page("A"))
    sink = MemorySink()
    sync("sp", sqlite, sharepoint(graph, site), sink)
    graph.client_secret = "secret-2"  # rotated in Entra ID
    caplog.set_level(logging.DEBUG)
    with pytest.raises(GraphAuthError, match=SECRET_VAR) as err:
        sync("sp", sqlite, sharepoint(graph, site, client_secret=SecretStr("secret-1")), sink)
    assert "AADSTS7000215" in str(err.value)
    assert "secret-1" not in str(err.value) and "secret-1" not in caplog.text
    assert SECRET_VAR in (sqlite.source("sp").last_error or "")
    assert len(sink.docs) == 1  # nothing deleted


def test_a_graph_or_authority_address_without_https_is_refused(graph):
    config = SharePointConnector.config(site="https://acme.sharepoint.com/sites/Support")
    for kw in ({"authority": "http://login.example"}, {"url": "http://graph.example/v1.0"}):
        with pytest.raises(ConfigError, match="https"):
            SharePointConnector.from_config(config, env(graph, **kw))
    assert SharePointConnector.from_config(config, env(graph)).graph_url.startswith("http://127.")


def test_missing_credentials_name_every_variable(graph):
    config = SharePointConnector.config(site="https://acme.sharepoint.com/sites/Support")
    for creds in (
        None,
        GraphSettings(tenant_id="t", client_id="c"),
        GraphSettings(client_secret="s"),
    ):
        with pytest.raises(ConfigError) as err:
            SharePointConnector.from_config(config, ConnectorEnv(graph=creds))
        assert all(v in str(err.value) for v in (TENANT_VAR, CLIENT_VAR, SECRET_VAR))


def test_a_stale_delta_token_lists_everything_again_and_deletes_what_it_lacks(
    graph, site, docs, sqlite
):
    a, b, c = (graph.put(docs, f"{n}.html", page(n)) for n in "abc")
    sink = MemorySink()
    sync("sp", sqlite, sharepoint(graph, site), sink)
    graph.forget_deltas()  # Graph answers the stored delta link 410 Gone
    graph.delete(docs, a)
    graph.edit(docs, b, page("b", "b, second version"))
    conn = sharepoint(graph, site)
    report = sync("sp", sqlite, conn, sink)
    assert report.deleted == [key(docs, a)] and report.written == [key(docs, b)]
    assert report.unchanged == [key(docs, c)] and graph.fetched(c) == 1  # not downloaded again
    assert any("delta token" in w for w in conn.warnings)
    assert [s for m, p, q, s in graph.requests if p.endswith("/delta")].count(410) == 1
    assert not sync("sp", sqlite, sharepoint(graph, site), sink).written  # a fresh delta link


def test_throttled_requests_wait_for_retry_after_within_a_bound(graph, site, docs, sqlite):
    f = graph.put(docs, "A.html", page("A"))
    graph.throttle(1, "7", path="/root/delta")
    graph.throttle(1, "3600", path=f"/items/{f}/permissions", status=503)
    graph.throttle(1, "2", path="/oauth2/v2.0/token")
    waits: list[float] = []
    report = sync(
        "sp", sqlite, sharepoint(graph, site, sleep=waits.append, max_wait_s=30), MemorySink()
    )
    assert waits == [2.0, 7.0, 30.0] and len(report.written) == 1 and not report.failed


def test_a_listing_throttled_past_the_retries_stops_and_deletes_nothing(graph, site, docs, sqlite):
    graph.put(docs, "A.html", page("A"))
    sink = MemorySink()
    sync("sp", sqlite, sharepoint(graph, site), sink)
    graph.throttle(10, "0", path="/root/delta")
    with pytest.raises(SourceUnavailable, match="429 after 3 tries"):
        sync("sp", sqlite, sharepoint(graph, site, retries=2), sink)
    assert len(sink.docs) == 1 and len(sqlite.versions("sp")) == 1


def test_a_file_that_failed_is_fetched_by_id_at_the_next_sync(graph, site, docs, sqlite):
    a = graph.put(docs, "A.html", page("A"))
    b = graph.put(docs, "B.html", page("B"))
    graph.throttle(5, "0", path=f"/items/{a}/content")
    report = sync("sp", sqlite, sharepoint(graph, site, retries=1), MemorySink())
    assert [k for k, _ in report.failed] == [key(docs, a)] and report.written == [key(docs, b)]
    graph.requests.clear()
    report = sync("sp", sqlite, sharepoint(graph, site), MemorySink())  # the delta shows nothing
    assert report.written == [key(docs, a)] and not report.failed
    assert graph.count("item") == 1  # asked for by id
    assert not sync("sp", sqlite, sharepoint(graph, site), MemorySink()).written


def test_a_narrowed_file_that_cannot_be_fetched_leaves_the_index_until_it_can(
    graph, site, docs, sqlite
):
    roadmap = graph.put(docs, "Roadmap.html", page("Roadmap"), grants=[link("organization")])
    sink = MemorySink()
    sync("sp", sqlite, sharepoint(graph, site), sink)
    graph.share(docs, roadmap, [granted(entra_group("g-leads"))])
    graph.throttle(5, "0", path=f"/items/{roadmap}/content")
    report = sync("sp", sqlite, sharepoint(graph, site, retries=1), sink)
    assert report.deleted == [key(docs, roadmap)] and not sink.docs  # no stale wide copy
    report = sync("sp", sqlite, sharepoint(graph, site), sink)
    assert report.written == [key(docs, roadmap)]
    assert sink.docs[key(docs, roadmap)].principals == ("group:g-leads",)


def test_libraries_one_by_name_all_by_default_and_a_removed_one_deleted(graph, site, docs, sqlite):
    policies = graph.library(site, "Policies")
    a = graph.put(docs, "A.html", page("A"))
    p = graph.put(policies, "P.md", b"# Policy\n\nText.", mime="application/octet-stream")
    graph.put(docs, "Logo.png", b"\x89PNG...", mime="image/png")  # not a document: skipped
    sink = MemorySink()
    report = sync("sp", sqlite, sharepoint(graph, site), sink)
    assert sorted(report.written) == sorted([key(docs, a), key(policies, p)]) and not report.failed
    assert sink.docs[key(policies, p)].media_type == "text/markdown"  # by its name
    site.drives.remove(policies.id)  # the library is gone (or the app lost it)
    report = sync("sp", sqlite, sharepoint(graph, site), sink)
    assert report.deleted == [key(policies, p)] and list(sink.docs) == [key(docs, a)]

    only = sharepoint(graph, site, drive="Documents")
    assert [k for k in sync("sp", sqlite, only, MemorySink()).unchanged] == [key(docs, a)]
    with pytest.raises(ConfigError, match="no library named 'Nope'.*Documents"):
        sync("sp", sqlite, sharepoint(graph, site, drive="Nope"), MemorySink())


def test_a_onedrive_by_drive_id(graph, sqlite):
    mine = graph.onedrive("ann@x.com")
    f = graph.put(mine, "Notes.html", page("Notes"), grants=[granted(person("ann@x.com"))])
    conn = SharePointConnector.from_config(SharePointConnector.config(drive_id=mine.id), env(graph))
    sink = MemorySink()
    sync("sp", sqlite, conn, sink)
    assert sink.docs[key(mine, f)].principals == ("user:ann@x.com",)
    with pytest.raises(ConfigError, match="no drive"):
        sync("sp", sqlite, sharepoint(graph, drive_id="b!nope"), MemorySink())


def test_an_unknown_site_says_so_and_a_link_off_graph_is_refused(graph, site, docs, sqlite):
    with pytest.raises(ConfigError, match="no site at https://acme.sharepoint.com/sites/Nope"):
        conn = sharepoint(graph)
        conn.site = "https://acme.sharepoint.com/sites/Nope"
        sync("sp", sqlite, conn, MemorySink())
    conn = sharepoint(graph, site)
    with pytest.raises(SourceUnavailable, match="another host"):
        conn.same_host("https://evil.example/v1.0/drives/x/root/delta")


def test_requests_made_for_a_first_sync_a_quiet_one_and_two_edits(graph, site, docs, sqlite):
    graph.page_size = 10
    ids = [graph.put(docs, f"F{n}.html", page(f"F{n}", f"Text {n}.")) for n in range(30)]
    first = sharepoint(graph, site, batch_size=10)
    assert len(sync("sp", sqlite, first, MemorySink()).written) == 30
    # token, site, drives, 4 delta pages (the root and 30 files), 30 permissions, 30 contents
    assert first.requests == 1 + 1 + 1 + 4 + 30 + 30 and graph.count("download") == 30

    quiet = sharepoint(graph, site)
    report = sync("sp", sqlite, quiet, MemorySink())
    assert not report.written and len(report.unchanged) == 30 and quiet.requests == 4

    graph.edit(docs, ids[3], page("F3", "edited"))
    graph.edit(docs, ids[20], page("F20", "edited"))
    edits = sharepoint(graph, site)
    report = sync("sp", sqlite, edits, MemorySink())
    assert sorted(report.written) == sorted(key(docs, ids[i]) for i in (3, 20))
    assert edits.requests == 4 + 2 + 2


def test_config_checks_what_it_is_given_and_stores_no_secret(tmp_path):
    config = SharePointConnector.config(site="https://acme.sharepoint.com/sites/Support/")
    assert config == {
        "site": "https://acme.sharepoint.com/sites/Support",
        "drive": "",
        "drive_id": "",
        "group_map": "",
        "full_every_days": 7.0,
        "concurrency": 4,
    }
    pasted = "https://acme.sharepoint.com/sites/Support/Shared%20Documents/Forms/AllItems.aspx"
    assert SharePointConnector.config(site=pasted)["site"] == config["site"]
    with pytest.raises(ConfigError, match="not both"):
        SharePointConnector.config(site="https://acme.sharepoint.com/sites/S", drive_id="b!x")
    with pytest.raises(ConfigError, match="--site must"):
        SharePointConnector.config(site="http://acme.sharepoint.com/sites/S")
    with pytest.raises(ConfigError, match="mapping"):
        SharePointConnector.config(site="https://a.sharepoint.com", group_map=str(tmp_path / "x"))


def test_sources_add_sharepoint_then_sync_without_credentials_names_them(
    graph, site, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    for var in (TENANT_VAR, CLIENT_VAR, SECRET_VAR):
        monkeypatch.delenv(var, raising=False)
    assert cli_main(["sources", "add", "sharepoint", "--site", site.web_url]) == 0
    out = capsys.readouterr().out
    assert "added sharepoint source Support" in out and SECRET_VAR in out
    assert cli_main(["sync", "--source", "Support"]) == 2
    err = capsys.readouterr().err
    assert all(v in err for v in (TENANT_VAR, CLIENT_VAR, SECRET_VAR))
    state = SyncState.sqlite(tmp_path / "data" / "state.db")
    try:
        record = state.source("Support")
        assert record and record.kind == "sharepoint" and record.config["site"] == site.web_url
        assert graph.client_secret not in json.dumps(record.config)
    finally:
        state.close()


def test_a_sharing_change_relabels_the_index_without_embedding_again(
    graph, site, docs, sqlite, tmp_path, embedders
):
    from bot.settings import Settings
    from ingest.edge_index import EdgeIndex
    from ingest.index import vector_dims
    from ingest.pipeline import Ingester
    from ingest.sparse import BM25Encoder

    settings = Settings(data_dir=tmp_path / "data")
    index = EdgeIndex(
        settings.index_dir, vector_dims(embedders, settings.embedding.sentence_vectors)
    )
    ingester = Ingester(index, embedders, BM25Encoder(), settings.ingest, settings.admin_groups)
    text = "The Riverside garage closes at 22:00 on weekdays. " * 5
    f = graph.put(
        docs, "Garage.html", page("Garage", text), grants=[granted(entra_group("engineering"))]
    )
    sink = IndexSink(ingester, settings.admin_groups)
    sync("sp", sqlite, sharepoint(graph, site), sink)
    doc_id = f"sp:{key(docs, f)}"
    assert index.chunks(doc_id, ["engineering"]) and not index.chunks(doc_id, ["sales"])
    embedded: list[int] = []
    embed = ingester.embed_chunks
    ingester.embed_chunks = (  # type: ignore[method-assign]
        lambda chunks: embedded.append(len(chunks)) or embed(chunks)
    )

    graph.share(docs, f, [granted(entra_group("sales"))])
    report = sync("sp", sqlite, sharepoint(graph, site), sink)
    assert report.written == [key(docs, f)] and embedded == []
    assert index.chunks(doc_id, ["sales"]) and not index.chunks(doc_id, ["engineering"])
    index.close()


def test_a_whole_listing_every_few_days_catches_what_a_delta_left_out(graph, site, docs, sqlite):
    a, b = graph.put(docs, "A.html", page("A")), graph.put(docs, "B.html", page("B"))
    now = [1_000_000.0]
    sink = MemorySink()
    sync("sp", sqlite, sharepoint(graph, site, wall=lambda: now[0]), sink)
    docs.items[b].deleted = True  # gone without a trace in the delta (seq unchanged)
    now[0] += 6 * 86400
    assert not sync("sp", sqlite, sharepoint(graph, site, wall=lambda: now[0]), sink).deleted
    now[0] += 2 * 86400  # a week since the last whole listing
    report = sync("sp", sqlite, sharepoint(graph, site, wall=lambda: now[0]), sink)
    assert report.deleted == [key(docs, b)] and report.unchanged == [key(docs, a)]
    assert graph.fetched(a) == 1  # read again, not downloaded again
    now[0] += 86400
    assert graph.count("delta") == 3
    sync("sp", sqlite, sharepoint(graph, site, wall=lambda: now[0]), sink)
    assert [
        q.get("token") is not None for m, p, q, s in graph.requests if p.endswith("/delta")
    ] == [
        False,
        True,
        False,
        True,
    ]


def test_a_failed_file_edited_since_is_fetched_once_though_listed_twice(graph, site, docs, sqlite):
    a = graph.put(docs, "A.html", page("A"))
    graph.throttle(2, "0", path=f"/items/{a}/content")
    report = sync("sp", sqlite, sharepoint(graph, site, retries=1), MemorySink())
    assert [k for k, _ in report.failed] == [key(docs, a)]
    graph.edit(docs, a, page("A", "A, second version"))  # by id and in the delta, both
    before = graph.fetched(a)
    sink = MemorySink()
    report = sync("sp", sqlite, sharepoint(graph, site), sink)
    assert (
        report.written == [key(docs, a)]
        and "second version" in sink.docs[key(docs, a)].content.decode()
    )
    assert graph.fetched(a) == before + 1


def test_files_are_fetched_a_few_at_a_time_and_written_in_listing_order(graph, site, docs, sqlite):
    ids = [graph.put(docs, f"F{n}.html", page(f"F{n}")) for n in range(8)]
    graph.meet = 2  # downloads wait for a second one in flight: overlap, however loaded
    sink = MemorySink()
    report = sync("sp", sqlite, sharepoint(graph, site, concurrency=4, batch_size=8), sink)
    assert report.written == [key(docs, i) for i in ids] and 2 <= graph.peak <= 4
    assert graph.count("token") == 1  # one token, however many files at once
    graph.meet, graph.peak = 0, 0
    for i in ids:
        graph.edit(docs, i, page("again"))
    sync("sp", sqlite, sharepoint(graph, site, concurrency=1), sink)
    assert graph.peak == 1
