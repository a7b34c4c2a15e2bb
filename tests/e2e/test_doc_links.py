"""``GET /docs/{doc_id}``: signed, short-lived, re-checking access when opened."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

from bot.web.links import LinkSigner
from tests.e2e.conftest import LINK_SECRET

LEAVE = "handbook/hr/leave-policy-2026.md"
SALARY = "handbook/hr/salary-bands.pdf"  # hr only


def signer(bot, clock=time.time) -> LinkSigner:
    return LinkSigner(bot.settings.server.public_url, LINK_SECRET, 600, clock=clock)


async def test_a_signed_link_shows_the_document_with_anchors(bot, handbook):
    chunks = handbook.index.chunks(LEAVE, ["hr"])
    anchor = next(c["anchor"] for c in chunks if c["anchor"])
    status, page = await bot.get(signer(bot).sign(LEAVE, "alice", anchor))
    assert status == 200
    assert f'id="{anchor}"' in page and "<h1>Leave Policy" in page


async def test_forged_expired_and_no_longer_allowed_links_show_nothing(bot):
    good = signer(bot).sign(LEAVE, "alice")
    query = parse_qs(urlsplit(good).query)
    base = good.split("?")[0]

    status, page = await bot.get(
        f"{base}?u=bob&exp={query['exp'][0]}&sig={query['sig'][0]}"
    )  # alice's link, bob's name
    assert status == 403 and "carry" not in page.lower()
    status, _ = await bot.get(
        f"{base}?u=alice&exp={int(query['exp'][0]) + 3600}&sig={query['sig'][0]}"
    )
    assert status == 403
    status, _ = await bot.get(base)
    assert status == 403

    expired = signer(bot, clock=lambda: time.time() - 3600).sign(LEAVE, "alice")
    status, page = await bot.get(expired)
    assert status == 410 and "expired" in page

    # a genuinely signed link for someone who may not read the document (access is checked on opening)
    status, page = await bot.get(signer(bot).sign(SALARY, "erin"))
    assert status == 403 and "band" not in page.lower()
    status, _ = await bot.get(signer(bot).sign(LEAVE, "nobody-in-directory"))
    assert status == 403


async def test_pdf_citations_link_to_their_page(bot, handbook):
    doc = SALARY
    chunks = handbook.index.chunks(doc, ["hr"])
    page = max(c["page"] for c in chunks)
    status, html = await bot.get(signer(bot).sign(doc, "alice", f"page={page}"))
    assert status == 200
    assert f'id="page={page}"' in html
    status, _ = await bot.get(signer(bot).sign(doc, "bob", f"page={page}"))  # engineering: not hr
    assert status == 403
