"""Signed citation links and the document page they open."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from agent.turns import Citation
from bot.web.links import LinkSigner, render_document
from ingest.errors import ConfigError

SECRET = "unit-test-link-secret-0123456789abcdef"
OTHER = "another-link-secret-0123456789abcdefgh"


def citation(**kw) -> Citation:
    base = dict(
        n=1,
        doc_id="handbook/hr/leave policy.md",
        title="Leave",
        breadcrumbs="Leave > Carry-over",
        source="hr/leave.md",
        link="/srv/hr/leave.md#carry-over",
        page=None,
        anchor="carry-over",
        quote="",
        updated="2026-01-15",
    )
    base.update(kw)
    return Citation(**base)


def parts(url: str):
    u = urlsplit(url)
    q = {k: v[0] for k, v in parse_qs(u.query).items()}
    return u.path, q, u.fragment


def test_sign_and_verify_round_trip():
    now = [1_000_000.0]
    signer = LinkSigner("https://bot.example/", SECRET, 600, clock=lambda: now[0])
    url = signer.sign("handbook/hr/leave policy.md", "alice", "carry-over")
    path, q, fragment = parts(url)
    assert url.startswith("https://bot.example/docs/handbook/hr/leave%20policy.md?")
    assert fragment == "carry-over" and q["u"] == "alice" and int(q["exp"]) == 1_000_600
    assert signer.verify("handbook/hr/leave policy.md", "alice", q["exp"], q["sig"]) == "ok"
    assert signer.verify("handbook/hr/leave policy.md", "bob", q["exp"], q["sig"]) == "forged"
    assert signer.verify("handbook/hr/other.md", "alice", q["exp"], q["sig"]) == "forged"
    assert (
        signer.verify("handbook/hr/leave policy.md", "alice", str(int(q["exp"]) + 1), q["sig"])
        == "forged"
    )
    assert signer.verify("handbook/hr/leave policy.md", "alice", "soon", q["sig"]) == "malformed"
    assert (
        LinkSigner("https://bot.example", OTHER, 600, clock=lambda: now[0]).verify(
            "handbook/hr/leave policy.md", "alice", q["exp"], q["sig"]
        )
        == "forged"
    )
    now[0] += 601
    assert signer.verify("handbook/hr/leave policy.md", "alice", q["exp"], q["sig"]) == "expired"


def test_web_sources_keep_their_url_and_pdfs_link_to_the_page():
    signer = LinkSigner("https://bot.example", SECRET, 60)
    assert (
        signer.link(citation(link="https://wiki.example/leave#x"), "alice")
        == "https://wiki.example/leave#x"
    )
    assert parts(signer.link(citation(page=7, anchor="page=7"), "alice"))[2] == "page=7"
    assert (
        parts(signer.link(citation(anchor="三2026-年法定节假日"), "alice"))[2]
        == "%E4%B8%892026-%E5%B9%B4%E6%B3%95%E5%AE%9A%E8%8A%82%E5%81%87%E6%97%A5"
    )


def test_an_empty_secret_is_a_config_error():
    with pytest.raises(ConfigError, match="FOOTNOTE_SERVER__LINK_SECRET"):
        LinkSigner("https://bot.example", "", 60)


def test_document_page_has_section_anchors_escapes_text_and_drops_chunk_overlap():
    chunks = [
        {
            "title": "Leave <Policy>",
            "updated": "2026-01-15",
            "breadcrumbs": "Leave > Carry-over",
            "anchor": "carry-over",
            "parent_id": "p1",
            "page": None,
            "text": "Leave > Carry-over\n\nYou may carry over up to ten unused vacation days into next year.",
        },
        {
            "title": "Leave <Policy>",
            "breadcrumbs": "Leave > Carry-over",
            "anchor": "carry-over",
            "parent_id": "p1",
            "page": None,
            "text": "Leave > Carry-over\n\nup to ten unused vacation days into next year. Days beyond that lapse <b>.",
        },
        {
            "title": "Leave <Policy>",
            "breadcrumbs": "Leave > Sick",
            "anchor": "",
            "parent_id": "p2",
            "page": 3,
            "text": "Leave > Sick\n\nCall in sick before 10:00.",
        },
    ]
    html = render_document("hr/leave.md", chunks)
    assert "<h1>Leave &lt;Policy&gt;</h1>" in html
    assert '<section id="carry-over">' in html and '<section id="page=3">' in html
    assert html.count("unused vacation days") == 1  # the overlap is shown once
    assert "Days beyond that lapse &lt;b&gt;." in html
    assert html.count("<section") == html.count("</section>") == 2
