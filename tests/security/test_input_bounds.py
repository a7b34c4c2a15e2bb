"""Inputs without bounds become skipped files, never a stalled or aborted batch.

Each hostile input is built here, small: 3,000 nested ``<div>``s (RecursionError aborted the
whole ingest or sync), front matter of nested YAML aliases (441 bytes became a 52 MB title),
YAML nested 3,000 deep, a DOCX that unzips far past its size, a DOCX of too many paragraphs, a
PDF of too many pages, a page streamed past the byte limit (it was read whole first), a server
dripping a byte at a time (it held the sync as long as it liked), a gzip sitemap that expands
past its limit. Each must be skipped with a message naming its setting
(``FOOTNOTE_INGEST__…``), the other files of the batch indexed. No model: the seeded stand-in
embedder makes the vectors.
"""

from __future__ import annotations

import gzip
import io
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import docx
import pytest
from reportlab.pdfgen import canvas

from ingest.edge_index import EdgeIndex
from ingest.pipeline import Ingester
from ingest.settings import IngestSettings
from ingest.sources.connector import ConnectorEnv, SourceUnavailable
from ingest.sources.state import SyncState
from ingest.sources.sync import IndexSink, sync
from ingest.sources.web import WebConnector
from ingest.sparse import BM25Encoder
from tests.security.hostile_site import HostileSite, answer, page, urlset
from tests.security.test_crash_narrowing import DIMS, EMBEDDERS

DEEP_HTML = "<html><body>" + "<div>" * 3000 + "buried" + "</div>" * 3000 + "</body></html>"


def laughs(levels: int = 6) -> str:
    """Front matter whose title is nine copies of nine copies of … "lol" (``levels`` deep)."""
    names = "abcdefghi"
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip(names, names[1 : levels + 1], strict=False):
        lines.append(f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]")
    return "---\n" + "\n".join(lines) + f"\ntitle: *{names[levels]}\n---\n# Laughs\n\nHa.\n"


def docx_bytes(paragraphs: int = 3, padding: int = 0) -> bytes:
    """A real DOCX (python-docx's own template); ``padding`` bytes of whitespace in its body XML."""
    document = docx.Document()
    document.add_paragraph("Hello.")
    raw = io.BytesIO()
    document.save(raw)
    body = "".join(f"<w:p><w:r><w:t>Line {i}.</w:t></w:r></w:p>" for i in range(paragraphs))
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "word/document.xml":
                data = data.replace(b"<w:sectPr", body.encode() + b" " * padding + b"<w:sectPr", 1)
            dst.writestr(info.filename, data)
    return out.getvalue()


def pdf_bytes(pages: int) -> bytes:
    out = io.BytesIO()
    c = canvas.Canvas(out)
    for n in range(1, pages + 1):
        c.drawString(72, 720, f"Page {n} of the handbook says something about page {n}.")
        c.showPage()
    c.save()
    return out.getvalue()


LIMITS = IngestSettings(  # small where the input at the default would be big to build
    max_expanded_mb=1, max_docx_paragraphs=500, max_pdf_pages=5, max_file_mb=1
)


def ingester(tmp_path: Path, settings: IngestSettings = LIMITS) -> Ingester:
    return Ingester(
        EdgeIndex(tmp_path / "index", DIMS), EMBEDDERS, BM25Encoder(), settings, ["admins"]
    )


HOSTILE = {  # name → (what it holds, the setting its skip message must name)
    "deep.html": (lambda: DEEP_HTML, "MAX_NESTING"),
    "laughs.md": (laughs, "MAX_YAML_ALIASES"),
    "deep-yaml.md": (
        lambda: "---\ntitle: " + "[" * 3000 + "]" * 3000 + "\n---\n# Deep\n\nText.\n",
        "MAX_NESTING",
    ),
    "whitespace.docx": (lambda: docx_bytes(padding=3 * 2**20), "MAX_EXPANDED_MB"),
    "paragraphs.docx": (lambda: docx_bytes(paragraphs=501), "MAX_DOCX_PARAGRAPHS"),
    "pages.pdf": (lambda: pdf_bytes(pages=6), "MAX_PDF_PAGES"),
    "huge.txt": (lambda: "word " * 250_000, "MAX_FILE_MB"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_file_is_skipped_naming_its_limit_and_the_batch_goes_on(tmp_path, name):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "_access.yaml").write_text("acl: ['*']\n")
    (docs / "a-good.md").write_text("# Good\n\nThe canteen opens at noon.\n")
    (docs / "fine.docx").write_bytes(docx_bytes(paragraphs=20))
    (docs / "fine.pdf").write_bytes(pdf_bytes(pages=2))
    (docs / "z-good.html").write_text("<h1>Parking</h1><p>Level -2 is for visitors.</p>")
    make, setting = HOSTILE[name]
    content = make()
    hostile = docs / name
    hostile.write_bytes(content) if isinstance(content, bytes) else hostile.write_text(content)
    assert hostile.stat().st_size < 1.3 * 2**20  # small files, every one

    report = ingester(tmp_path).ingest(docs)

    reason = dict(report.failed).get(f"docs/{name}", "")
    assert f"FOOTNOTE_INGEST__{setting}" in reason and "limit" in reason, reason
    assert sorted(report.added) == [
        "docs/a-good.md",
        "docs/fine.docx",
        "docs/fine.pdf",
        "docs/z-good.html",
    ]


def test_the_limits_have_sane_defaults():
    d = IngestSettings()
    assert (d.max_file_mb, d.max_expanded_mb, d.fetch_timeout_s) == (50, 100, 30)
    assert (d.max_nesting, d.max_docx_paragraphs, d.max_pdf_pages, d.max_yaml_aliases) == (
        200,
        20_000,
        1_000,
        20,
    )


def test_a_file_just_within_the_nesting_limit_is_read(tmp_path):
    """The bound is checked before recursing: a page as deep as the limit parses, no RecursionError."""
    docs = tmp_path / "docs"
    docs.mkdir()
    depth = IngestSettings().max_nesting - 5
    (docs / "deepish.html").write_text("<div>" * depth + "still read" + "</div>" * depth)
    (docs / "nested.md").write_text(
        "---\ntags: " + "[" * depth + "x" + "]" * depth + "\n---\nBody.\n"
    )
    report = ingester(tmp_path, IngestSettings()).ingest(docs, default_acl=["*"])
    assert sorted(report.added) == ["docs/deepish.html", "docs/nested.md"], report.failed


# --- a sync: pages streamed, timed and parsed within the limits -------------------------------


class Flood:
    """A page body of ``size`` bytes sent without a Content-Length, counting what got out."""

    def __init__(self, size: int) -> None:
        self.size, self.sent = size, 0

    def __call__(self, h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/html")
        h.end_headers()
        block = b"<p>" + b"a" * 65_530 + b"</p>"
        try:
            while self.sent < self.size:
                h.wfile.write(block)
                self.sent += len(block)
        except (BrokenPipeError, ConnectionResetError):
            pass


class Drip:
    """A page sent one byte every ``every`` seconds, for up to ``seconds``."""

    def __init__(self, every: float = 0.1, seconds: float = 40.0) -> None:
        self.every, self.seconds, self.stop = every, seconds, threading.Event()

    def __call__(self, h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/html")
        h.end_headers()
        ends = time.monotonic() + self.seconds
        try:
            while time.monotonic() < ends and not self.stop.wait(self.every):
                h.wfile.write(b"a")
                h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def site():
    s = HostileSite().start()
    yield s
    s.close()


def test_a_sync_skips_pages_past_a_limit_and_writes_the_rest(site, tmp_path):
    flood, drip = Flood(size=40 * 2**20), Drip()
    site.list_pages("/ok", "/flood", "/declared", "/drip", "/deep")
    site.routes |= {
        "/ok": page("<h1>Canteen</h1><p>The canteen opens at noon.</p>"),
        "/flood": flood,
        "/drip": drip,
        "/deep": page(DEEP_HTML),
    }
    site.routes["/declared"] = lambda h: (  # says 300 MB are coming: not one is read
        h.send_response(200),
        h.send_header("Content-Type", "text/html"),
        h.send_header("Content-Length", str(300 * 2**20)),
        h.end_headers(),
    )
    state = SyncState.sqlite(tmp_path / "state.db")
    state.add_source("intranet", "web", {})
    web = WebConnector(site.sitemap, ("*",), max_bytes=2**20)
    web.fetch_timeout_s = 1.0
    ing = ingester(tmp_path, IngestSettings())
    started = time.monotonic()
    try:
        report = sync("intranet", state, web, IndexSink(ing, ["admins"]))
    finally:
        drip.stop.set()
        web.close()
        state.close()
    took = time.monotonic() - started

    reasons = dict(report.failed)
    assert "FOOTNOTE_INGEST__MAX_FILE_MB" in reasons[site.url + "/flood"]
    assert "FOOTNOTE_INGEST__MAX_FILE_MB" in reasons[site.url + "/declared"]
    assert "FOOTNOTE_INGEST__FETCH_TIMEOUT_S" in reasons[site.url + "/drip"]
    assert "FOOTNOTE_INGEST__MAX_NESTING" in reasons[site.url + "/deep"]
    assert report.written == [site.url + "/ok"]
    assert ing.index.chunks("intranet:" + site.url.split("://")[1] + "/ok", ["*"])
    assert flood.sent < 16 * 2**20  # stopped reading near the limit, not after 40 MB
    assert took < 8  # the drip held it about FETCH_TIMEOUT_S, not 40 s (noisy shared cores)


def test_a_gzip_sitemap_that_expands_past_the_limit_stops_the_sync_unread(site):
    xml = urlset([site.url + "/ok"]).replace("<url>", "<url>" + " " * (4 * 2**20), 1)
    bomb = gzip.compress(xml.encode())
    assert len(bomb) < 64 * 2**10
    site.routes["/sitemap.xml"] = lambda h: answer(h, 200, bomb, "application/x-gzip")
    web = WebConnector(site.sitemap, ("*",))
    web.max_expanded_bytes = 2**20
    with pytest.raises(SourceUnavailable, match="FOOTNOTE_INGEST__MAX_EXPANDED_MB"):
        list(web.changes(None, {}))
    web.close()
    assert "/ok" not in site.requests
    small = WebConnector(site.sitemap, ("*",))  # within the default it is read
    list(small.changes(None, {}))
    small.close()
    assert "/ok" in site.requests


def test_the_limits_reach_a_connector_from_the_settings():
    env = ConnectorEnv(max_bytes=3, max_expanded_bytes=4, fetch_timeout_s=5.0)
    web = WebConnector.from_config({"sitemap": "https://intranet.test/sitemap.xml"}, env)
    assert (web.max_bytes, web.max_expanded_bytes, web.fetch_timeout_s) == (3, 4, 5.0)
    web.close()


def test_deep_yaml_is_refused_before_pyyaml_scans_it():
    """PyYAML's scanner spends time quadratic in the flow nesting it reaches before any loader
    can stop it (~2.5 s a file here, for a few KB); the depth is counted first, in milliseconds."""
    from ingest.errors import BadDocument
    from ingest.parse import parse_bytes

    front = "---\ntitle: " + "[" * 10_000 + "]" * 10_000 + "\n---\n# Deep\n\nText.\n"
    started = time.monotonic()
    with pytest.raises(BadDocument, match="FOOTNOTE_INGEST__MAX_NESTING"):
        parse_bytes(front.encode(), ".md", "deep")
    assert time.monotonic() - started < 0.5  # ~3 ms; a margin for shared cores
