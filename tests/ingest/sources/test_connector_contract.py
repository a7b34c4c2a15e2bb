"""The contract every connector passes, run against each one through a fake of its platform
that speaks the platform's wire format, and against both sync-state backends.

A new connector joins by adding a case to ``CASES``: a class that starts its fake, builds the
connector, and can put, edit, remove and throttle a document there.
"""

from __future__ import annotations

import time

import pytest
from pydantic import SecretStr

from ingest.sources.confluence import ConfluenceConnector
from ingest.sources.connector import Connector, SourceDocument
from ingest.sources.gdrive import DriveClient, GoogleDriveConnector, ServiceAccountKey
from ingest.sources.sharepoint import SharePointConnector
from ingest.sources.sync import sync
from ingest.sources.web import WebConnector
from testing.confluence import LoopbackConfluence
from testing.gdrive import LoopbackDrive, group
from testing.graph import LoopbackGraph, entra_group, granted
from testing.web import LoopbackSite, Page
from tests.ingest.sources.conftest import Killed, MemorySink


class WebCase:
    """The web connector against a loopback intranet site."""

    kind = "web"

    def __init__(self) -> None:
        self.site = LoopbackSite().start()

    def connector(self, batch_size: int = 2) -> Connector:
        return WebConnector(self.site.sitemap, ("group:hr",), batch_size=batch_size)

    def put(self, name: str, text: str) -> None:
        html = f"<html><head><title>{name}</title></head><body><h1>{name}</h1><p>{text}</p></body></html>"
        self.site.pages[f"/{name}"] = Page(html)

    def remove(self, name: str) -> None:
        del self.site.pages[f"/{name}"]

    def throttle(self, name: str, times: int, retry_after_s: int) -> None:
        self.site.throttle(f"/{name}", times, str(retry_after_s))

    def key(self, name: str) -> str:
        return f"{self.site.url}/{name}"

    def fetches(self, name: str) -> int:
        return len(self.site.fetched(f"/{name}"))

    @staticmethod
    def text(doc: SourceDocument) -> str:
        return doc.content.decode() if isinstance(doc.content, bytes) else doc.content

    def close(self) -> None:
        self.site.close()


class ConfluenceCase:
    """The Confluence connector against a loopback Confluence Cloud: one space readable by hr."""

    kind = "confluence"

    def __init__(self) -> None:
        self.site = LoopbackConfluence().start()
        self.site.space("HR", groups=["hr"])
        self.ids: dict[str, str] = {}

    def connector(self, batch_size: int = 2) -> Connector:
        return ConfluenceConnector(
            site=self.site.url,
            spaces=("HR",),
            email=self.site.email,
            token=SecretStr(self.site.token),
            batch_size=batch_size,
        )

    def put(self, name: str, text: str) -> None:
        body = f"<h1>{name}</h1><p>{text}</p>"
        if name in self.ids:
            self.site.edit(self.ids[name], body)
        else:
            self.ids[name] = self.site.put("HR", name, body)

    def remove(self, name: str) -> None:
        self.site.pages[self.ids[name]].status = "trashed"

    def throttle(self, name: str, times: int, retry_after_s: int) -> None:
        self.site.throttle(times, str(retry_after_s), page=self.ids[name])

    def key(self, name: str) -> str:
        return self.ids[name]

    def fetches(self, name: str) -> int:
        return self.site.fetches(self.ids[name])

    @staticmethod
    def text(doc: SourceDocument) -> str:
        return doc.content.decode() if isinstance(doc.content, bytes) else doc.content

    def close(self) -> None:
        self.site.close()


class SharePointCase:
    """The SharePoint connector against a loopback Microsoft Graph: one document library whose
    root is shared with the Entra ID group hr (files inherit it)."""

    kind = "sharepoint"

    def __init__(self) -> None:
        self.graph = LoopbackGraph().start()
        self.site = self.graph.site("acme.sharepoint.com", "/sites/Support")
        self.drive = self.graph.drives[self.site.drives[0]]
        self.graph.share(self.drive, self.drive.root, [granted(entra_group("hr", "HR"))])
        self.ids: dict[str, str] = {}

    def connector(self, batch_size: int = 2) -> Connector:
        return SharePointConnector(
            tenant_id=self.graph.tenant,
            client_id=self.graph.client_id,
            client_secret=SecretStr(self.graph.client_secret),
            site=self.site.web_url,
            authority=self.graph.url,
            graph_url=f"{self.graph.url}/v1.0",
            batch_size=batch_size,
        )

    def put(self, name: str, text: str) -> None:
        html = f"<html><head><title>{name}</title></head><body><h1>{name}</h1><p>{text}</p></body></html>"
        if name in self.ids:
            self.graph.edit(self.drive, self.ids[name], html)
        else:
            self.ids[name] = self.graph.put(self.drive, f"{name}.html", html)

    def remove(self, name: str) -> None:
        self.graph.delete(self.drive, self.ids[name])

    def throttle(self, name: str, times: int, retry_after_s: int) -> None:
        self.graph.throttle(times, str(retry_after_s), path=f"/items/{self.ids[name]}/content")

    def key(self, name: str) -> str:
        return f"{self.drive.id}/{self.ids[name]}"

    def fetches(self, name: str) -> int:
        return self.graph.fetched(self.ids[name])

    @staticmethod
    def text(doc: SourceDocument) -> str:
        return doc.content.decode() if isinstance(doc.content, bytes) else doc.content

    def close(self) -> None:
        self.graph.close()


class GoogleDriveCase:
    """The Google Drive connector against a loopback Drive API and token endpoint: one shared
    drive whose members are the hr group."""

    kind = "gdrive"

    def __init__(self, tmp_path) -> None:
        self.site = LoopbackDrive().start()
        self.drive = self.site.shared_drive("Policies", members=[group("hr")])
        self.account = ServiceAccountKey.load(self.site.key_file(tmp_path))
        self.ids: dict[str, str] = {}

    def connector(self, batch_size: int = 2) -> Connector:
        client = DriveClient(self.account, token_uri=self.site.token_uri, api_url=self.site.url)
        return GoogleDriveConnector(client, drive_id=self.drive, batch_size=batch_size)

    def put(self, name: str, text: str) -> None:
        body = f"<h1>{name}</h1><p>{text}</p>"
        if name in self.ids:
            self.site.edit(self.ids[name], body)
        else:
            self.ids[name] = self.site.put(name, body, self.drive)

    def remove(self, name: str) -> None:
        self.site.trash(self.ids[name])

    def throttle(self, name: str, times: int, retry_after_s: int) -> None:
        self.site.throttle(times, str(retry_after_s), file=self.ids[name])

    def key(self, name: str) -> str:
        return self.ids[name]

    def fetches(self, name: str) -> int:
        return self.site.fetches(self.ids[name])

    @staticmethod
    def text(doc: SourceDocument) -> str:
        return doc.content.decode() if isinstance(doc.content, bytes) else doc.content

    def close(self) -> None:
        self.site.close()


CASES = [WebCase, ConfluenceCase, SharePointCase, GoogleDriveCase]
NAMES = ["alpha", "bravo", "charlie", "delta", "echo"]


@pytest.fixture(params=CASES, ids=lambda c: c.kind)
def case(request, tmp_path):
    c = request.param(tmp_path) if request.param is GoogleDriveCase else request.param()
    for n in NAMES:
        c.put(n, f"The {n} page, first version.")
    yield c
    c.close()


@pytest.fixture
def source(state, case):
    state.add_source("src", case.kind, {})
    return "src"


def test_first_sync_writes_every_document_with_its_source_and_principals(state, case, source):
    sink = MemorySink()
    report = sync(source, state, case.connector(), sink)
    keys = sorted(case.key(n) for n in NAMES)
    assert sorted(report.written) == keys and not report.failed
    assert sorted(sink.docs) == keys
    doc = sink.docs[case.key("bravo")]
    assert "bravo page, first version" in case.text(doc)
    assert doc.url.startswith(("http://", "https://")) and doc.media_type and doc.version
    assert doc.principals == ("group:hr",)
    assert sorted(state.versions(source)) == keys
    record = state.source(source)
    assert record and record.documents == 5 and record.last_sync and record.errors == 0


def test_a_sync_with_nothing_changed_writes_nothing(state, case, source):
    sync(source, state, case.connector(), MemorySink())
    sink = MemorySink()
    report = sync(source, state, case.connector(), sink)
    assert not sink.writes and not report.written and not report.deleted
    assert sorted(report.unchanged) == sorted(case.key(n) for n in NAMES)


def test_an_edit_writes_that_document_alone(state, case, source):
    sync(source, state, case.connector(), MemorySink())
    before = state.versions(source)
    case.put("charlie", "The charlie page, second version: the office moved.")
    sink = MemorySink()
    report = sync(source, state, case.connector(), sink)
    assert report.written == [case.key("charlie")] and sink.writes == [case.key("charlie")]
    assert "second version" in case.text(sink.docs[case.key("charlie")])
    after = state.versions(source)
    assert after[case.key("charlie")] != before[case.key("charlie")]
    assert {k: v for k, v in after.items() if k != case.key("charlie")} == {
        k: v for k, v in before.items() if k != case.key("charlie")
    }


def test_a_deleted_document_is_deleted_from_the_sink_and_the_state(state, case, source):
    sink = MemorySink()
    sync(source, state, case.connector(), sink)
    case.remove("delta")
    report = sync(source, state, case.connector(), sink)
    assert report.deleted == [case.key("delta")]
    assert case.key("delta") not in sink.docs and case.key("delta") not in state.versions(source)
    assert len(sink.docs) == 4
    assert not sync(source, state, case.connector(), sink).deleted  # deleted once


def test_a_throttled_request_waits_for_retry_after_then_goes_on(state, case, source):
    case.throttle("echo", times=2, retry_after_s=1)
    sink = MemorySink()
    started = time.monotonic()
    report = sync(source, state, case.connector(), sink)
    assert time.monotonic() - started >= 2.0  # waited as told, twice
    assert case.key("echo") in report.written and not report.failed
    assert case.fetches("echo") == 3


def test_a_sync_killed_mid_way_resumes_after_the_last_batch_it_recorded(state, case, source):
    dying = MemorySink(die_after=2)  # batches of two: alpha+bravo recorded, charlie+delta not
    with pytest.raises(Killed):
        sync(source, state, case.connector(batch_size=2), dying)
    first = [case.key("alpha"), case.key("bravo")]
    assert sorted(state.versions(source)) == first  # only what was recorded

    resumed = MemorySink()
    report = sync(source, state, case.connector(batch_size=2), resumed)
    assert sorted(resumed.writes) == sorted(case.key(n) for n in NAMES[2:])  # the rest, again
    assert all(case.fetches(n) == 1 for n in ("alpha", "bravo"))  # not asked for again
    assert sorted(state.versions(source)) == sorted(case.key(n) for n in NAMES)
    assert not report.deleted and not report.failed
    assert not sync(source, state, case.connector(), MemorySink()).written
