"""The web connector checks every redirect BEFORE it follows it, by the rules of the first URL
(this site only; for a page, robots.txt too), at most ``MAX_REDIRECTS`` hops: a page or a
sitemap answering 302 to ``http://127.0.0.1:<other port>/…`` never makes Footnote send that GET
(a blind SSRF). The canary is a loopback server that records whether it was reached."""

from __future__ import annotations

import pytest

from ingest.sources.connector import SourceUnavailable
from ingest.sources.web import WebConnector
from tests.security.hostile_site import Canary, HostileSite, page, redirect


@pytest.fixture
def canary():
    c = Canary().start()
    yield c
    c.close()


@pytest.fixture
def site():
    s = HostileSite().start()
    yield s
    s.close()


def sync_pages(site: HostileSite) -> tuple[dict[str, bytes], dict[str, str]]:
    """What one whole pass of the connector fetched, and what it reported as failed."""
    fetched, failed = {}, {}
    web = WebConnector(site.sitemap, ("*",))
    try:
        for batch in web.changes(None, {}):
            fetched |= {d.key: d.content for d in batch.documents}
            failed |= dict(batch.failed)
    finally:
        web.close()
    return fetched, failed


def test_a_page_redirecting_to_another_port_is_not_followed(site, canary):
    site.list_pages("/ok", "/hop", "/hop-301", "/hop-307", "/two-hops", "/moved")
    site.routes |= {
        "/ok": page("<p>Opening hours.</p>"),
        "/hop": redirect(f"{canary.url}/admin/delete-all"),
        "/hop-301": redirect(f"{canary.url}/admin/301", 301),
        "/hop-307": redirect(f"{canary.url}/admin/307", 307),
        "/two-hops": redirect("/hop"),  # on the site first, then off it
        "/moved": redirect("/new-home", 301),  # on the site: still followed
        "/new-home": page("<p>Moved here.</p>"),
    }
    fetched, failed = sync_pages(site)
    assert canary.hits == []  # not one request reached the other port
    for path in ("/hop", "/hop-301", "/hop-307", "/two-hops"):
        reason = failed[site.url + path]
        assert "redirects off the site" in reason and canary.url in reason, path
    assert set(fetched) == {site.url + "/ok", site.url + "/moved"}  # the batch went on
    assert b"Moved here" in fetched[site.url + "/moved"]


def test_a_redirect_into_what_robots_txt_forbids_is_not_followed(site, canary):
    site.routes["/robots.txt"] = lambda h: redirect("/robots-real.txt")(h)  # a hop, on the site
    site.routes["/robots-real.txt"] = page("User-agent: *\nDisallow: /private/\n")
    site.list_pages("/open")
    site.routes["/open"] = redirect("/private/payroll")
    site.routes["/private/payroll"] = page("<p>Payroll export.</p>")
    fetched, failed = sync_pages(site)
    assert "/private/payroll" not in site.requests and not fetched
    assert "robots.txt forbids" in failed[site.url + "/open"]


def test_a_redirect_loop_stops_after_the_bounded_count(site):
    from ingest.sources.web import MAX_REDIRECTS  # in here: the code before it had none

    site.list_pages("/loop")
    site.routes["/loop"] = redirect("/loop")
    fetched, failed = sync_pages(site)
    assert f"more than {MAX_REDIRECTS} redirects" in failed[site.url + "/loop"]
    assert site.requests.count("/loop") == MAX_REDIRECTS + 1


@pytest.mark.parametrize("which", ["sitemap", "child sitemap", "robots.txt"])
def test_a_sitemap_or_robots_redirect_off_the_site_stops_the_sync_unsent(site, canary, which):
    if which == "sitemap":
        site.routes["/sitemap.xml"] = redirect(f"{canary.url}/sitemap.xml")
    elif which == "robots.txt":
        site.list_pages("/ok")
        site.routes["/robots.txt"] = redirect(f"{canary.url}/robots.txt")
    else:
        index = (
            '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{site.url}/pages.xml</loc></sitemap></sitemapindex>"
        )
        site.routes["/sitemap.xml"] = lambda h: page(index)(h)
        site.routes["/pages.xml"] = redirect(f"{canary.url}/pages.xml")
    with pytest.raises(SourceUnavailable, match="redirects off the site"):
        sync_pages(site)
    assert canary.hits == []
