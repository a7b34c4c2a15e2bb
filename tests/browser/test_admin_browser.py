"""The admin page in a real browser: Debian's chromium, headless, driven by Selenium (``make browser``
installs both). Signs in through the link the bot would send, opens a turn's trace, filters the
feedback, and takes a screenshot of every page at 1280 and 390 px wide — into a temporary folder,
or into ``$FOOTNOTE_SCREENSHOTS`` (``make screenshots`` writes docs/admin/)."""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from aiohttp import web
from pydantic import SecretStr

from agent.traces import SqliteTraceStore
from bot.chat.conversation_state import ConversationState
from bot.identity.admin_access import AdminAccess
from bot.identity.directory import FileDirectory
from bot.reports.feedback import FeedbackStore
from bot.settings import HANDBOOK_DIRECTORY, RedisSettings, ServerSettings, Settings
from bot.web.links import LinkSigner
from bot.web.server import build_app
from ingest.settings import DatabaseSettings
from ingest.sources.state import SyncState
from testing.admin_data import Library, seed
from tests.e2e.conftest import free_port

pytestmark = pytest.mark.browser

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SECRET = "browser-test-link-secret-0d9c8b7a6f5e4d3c2b1a"
WIDTHS = (1280, 390)


class Server:
    """The bot's web app on loopback, on an event loop of its own (Selenium blocks)."""

    def __init__(self, settings: Settings, directory: FileDirectory, traces: SqliteTraceStore):
        self.settings, self.loop = settings, asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

        async def up() -> tuple[web.AppRunner, ConversationState]:
            state = ConversationState.from_settings(settings.redis)
            app = build_app(
                settings,
                SimpleNamespace(directory=directory),  # type: ignore[arg-type]
                Library(),
                state,
                traces,
            )
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", settings.server.port).start()
            return runner, state

        self.runner, self.state = asyncio.run_coroutine_threadsafe(up(), self.loop).result(30)

    def close(self) -> None:
        async def down() -> None:
            await self.runner.cleanup()
            await self.state.close()

        asyncio.run_coroutine_threadsafe(down(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def site(tmp_path) -> Iterator[tuple[str, AdminAccess]]:
    port = free_port()
    settings = Settings(
        data_dir=tmp_path,
        redis=RedisSettings(key_prefix=f"footnote-test-browser-{uuid.uuid4().hex[:8]}:"),
        server=ServerSettings(
            port=port, public_url=f"http://127.0.0.1:{port}", link_secret=SecretStr(SECRET)
        ),
    )
    store = FeedbackStore.open(DatabaseSettings(), tmp_path)
    traces = SqliteTraceStore(tmp_path / "traces.sqlite")
    seed(store, traces, days=settings.privacy.retention_days)
    store.close()
    sync = SyncState.open(settings.database, tmp_path)
    sync.add_source("intranet", "web", {"url": "https://intranet.example"})
    sync.record("intranet", "c", {f"page-{i}": ("v1", f"doc-{i}") for i in range(42)}, [])
    sync.finish("intranet", 0, None)
    sync.add_source("wiki", "confluence", {})
    sync.finish("wiki", 3, "HTTP 429 from wiki.example: retry later")
    sync.close()
    directory = FileDirectory.load(HANDBOOK_DIRECTORY)
    server = Server(settings, directory, traces)
    access = AdminAccess(
        key=LinkSigner.from_settings(settings).derive("admin"),
        public_url=settings.server.public_url,
        directory=directory,
        admin_groups=settings.admin_groups,
        redis=server.state.client,
    )
    try:
        yield settings.server.public_url, access
    finally:
        server.close()


@pytest.fixture
def browser():
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.fail("chromium is not installed: run `make browser` (apt-get install chromium)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_argument("--window-size=1280,900")
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


def shoot(driver, folder: Path, name: str) -> None:
    """The whole page at each width, as a phone or a laptop would lay it out."""
    for width in WIDTHS:
        metrics = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 500}
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{name} scrolls sideways at {width} px"  # tables scroll inside
        metrics["height"] = min(int(height), 1800)  # a long table: its first rows show enough
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        path = folder / f"{name}-{width}.png"
        driver.save_screenshot(str(path))
        assert path.stat().st_size > 5000
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_an_admin_signs_in_reads_a_trace_and_filters_feedback(site, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import Select, WebDriverWait

    base, access = site
    shots = Path(os.environ.get("FOOTNOTE_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    wait = WebDriverWait(browser, 10)

    browser.get(base + "/admin")
    assert "Sign in" in browser.find_element(By.TAG_NAME, "h1").text
    shoot(browser, shots, "signin")

    browser.get(access.link("sam"))  # as sent to sam in a DM
    browser.find_element(By.CSS_SELECTOR, "button.primary").click()
    wait.until(ready.url_to_be(base + "/admin"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Overview"
    assert len(browser.find_elements(By.CSS_SELECTOR, "figure.chart svg")) == 4
    shoot(browser, shots, "overview")

    browser.find_element(By.LINK_TEXT, "Turns").click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#turns tbody tr")
    assert len(rows) > 20
    # sort by latency in the page (the script), then open the slowest turn's trace
    browser.find_element(By.CSS_SELECTOR, 'th a[data-sort="ms"]').click()
    browser.find_element(By.CSS_SELECTOR, 'th a[data-sort="ms"]').click()
    header = browser.find_element(By.CSS_SELECTOR, "th[aria-sort]")
    assert header.get_attribute("aria-sort") == "descending" and "ms=" not in browser.current_url
    latencies = [
        float(td.get_attribute("data-v"))
        for td in browser.find_elements(By.CSS_SELECTOR, "#turns tbody td:last-child")
    ]
    assert latencies == sorted(latencies, reverse=True)
    shoot(browser, shots, "turns")
    browser.find_element(By.CSS_SELECTOR, "#turns tbody tr:first-child a").click()
    wait.until(ready.presence_of_element_located((By.CSS_SELECTOR, "table.steps")))
    steps = [
        td.text for td in browser.find_elements(By.CSS_SELECTOR, "table.steps td:nth-child(2)")
    ]
    assert steps[:3] == ["plan", "search", "grade"] and "check" in steps
    assert "off-topic" in browser.find_element(By.CSS_SELECTOR, "table.steps").text
    shoot(browser, shots, "xray")

    browser.find_element(By.LINK_TEXT, "Feedback").click()
    everything = len(browser.find_elements(By.CSS_SELECTOR, "#feedback tbody tr"))
    Select(browser.find_element(By.NAME, "vote")).select_by_value("down")  # submits itself
    wait.until(ready.url_contains("vote=down"))
    votes = [v.text for v in browser.find_elements(By.CSS_SELECTOR, "#feedback tbody .vote")]
    assert votes and set(votes) == {"Not helpful"} and len(votes) < everything
    Select(browser.find_element(By.NAME, "reason")).select_by_value("unanswered")
    wait.until(ready.url_contains("reason=unanswered"))
    reasons = browser.find_elements(By.CSS_SELECTOR, "#feedback tbody td:nth-child(3)")
    assert reasons and {r.text for r in reasons} == {"Didn't answer"}
    shoot(browser, shots, "feedback")

    browser.find_element(By.LINK_TEXT, "Sources").click()
    text = browser.find_element(By.TAG_NAME, "main").text
    assert "intranet" in text and "42" in text and "HTTP 429" in text
    shoot(browser, shots, "sources")

    assert browser.find_element(By.CSS_SELECTOR, "form.who button").text == "Sign out"
