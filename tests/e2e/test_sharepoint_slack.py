"""SharePoint through Slack: files synced from the loopback Microsoft Graph answer, in a DM, exactly
the people their SharePoint permissions name — and after a sharing change, the new ones only.
Real sync into a Qdrant Edge folder of its own, real assistant, real Bolt, real Redis."""

from __future__ import annotations

import redis
from pydantic import SecretStr

from agent.actions import RedisPendingActions
from agent.assistant import build_assistant
from bot.app import build_deps
from bot.settings import Settings
from ingest.sources.sharepoint import SharePointConnector
from ingest.sources.state import SyncState
from ingest.sources.sync import IndexSink, sync
from testing.graph import LoopbackGraph, entra_group, granted, link, person
from testing.slack import blocks_text, dm_event
from tests.e2e.conftest import REDIS_URL, Harness, running_bot

GARAGE = (
    "<html><head><title>Riverside office garage</title></head><body><h2>Opening hours</h2>"
    "<p>The Riverside office garage closes at 22:00 on weekdays and stays shut on Sundays.</p>"
    "</body></html>"
)
RELOCATION = (
    "<html><head><title>Relocation to Lisbon</title></head><body><h2>Housing</h2><p>The Lisbon "
    "relocation package pays a housing allowance of 2,400 euros a month for the first year.</p>"
    "</body></html>"
)
GARAGE_Q = "When does the Riverside office garage close on weekdays?"
RELOCATION_Q = "How much housing allowance does the Lisbon relocation package pay?"
BOB, ALICE = "U0BOB0001", "U0ALICE01"  # engineering; hr + managers (examples/directory.yaml)


async def ask(bot: Harness, text: str, user: str, channel: str) -> str:
    """One question in a DM channel of its own (no history), the final answer's text."""
    await bot.send.event(dm_event(text, user=user, channel=channel))
    final = await bot.slack.final_answer(channel)
    return blocks_text(final.args["blocks"])


async def test_sharepoint_files_answer_their_readers_in_slack_before_and_after_a_narrowing(
    tmp_path, embedders, redis_prefix
):
    graph = LoopbackGraph().start()
    deps = build_deps(Settings(data_dir=tmp_path / "data"))
    deps.__dict__["embedders"] = embedders
    state = SyncState.sqlite(tmp_path / "state.db")
    try:
        site = graph.site("acme.sharepoint.com", "/sites/Support")
        docs = graph.drives[site.drives[0]]
        graph.share(docs, docs.root, [granted(entra_group("engineering"))])
        garage = graph.put(docs, "Garage.html", GARAGE)
        graph.put(
            docs,
            "Relocation.html",
            RELOCATION,
            grants=[link("users", [person("alice@northwind.example")])],
            inherits=False,
        )
        state.add_source("sp", "sharepoint", {})
        sink = IndexSink(deps.ingester, deps.settings.admin_groups)

        def run_sync() -> list[str]:
            conn = SharePointConnector(
                tenant_id=graph.tenant,
                client_id=graph.client_id,
                client_secret=SecretStr(graph.client_secret),
                site=site.web_url,
                authority=graph.url,
                graph_url=f"{graph.url}/v1.0",
            )
            try:
                return sync("sp", state, conn, sink).written
            finally:
                conn.close()

        assert len(run_sync()) == 2
        pending = RedisPendingActions(
            redis.Redis.from_url(REDIS_URL), prefix=redis_prefix + "sp-pending:"
        )
        assistant = build_assistant(deps, pending=pending)
        async with running_bot(deps, assistant, redis_prefix) as bot:
            text = await ask(bot, GARAGE_Q, BOB, "D0SPBOB01")
            assert "22:00" in text and "Garage.html" in text, text  # cited by its webUrl
            assert "2,400" in await ask(bot, RELOCATION_Q, ALICE, "D0SPALI01")
            assert "2,400" not in await ask(bot, RELOCATION_Q, BOB, "D0SPBOB02")
            assert "22:00" not in await ask(bot, GARAGE_Q, ALICE, "D0SPALI02")  # hr: not shared

            graph.share(docs, garage, [granted(entra_group("hr"))], inherits=False)
            assert run_sync() == [f"{docs.id}/{garage}"]
            assert "22:00" not in await ask(bot, GARAGE_Q, BOB, "D0SPBOB03")  # no leak
            assert "22:00" in await ask(bot, GARAGE_Q, ALICE, "D0SPALI03")
    finally:
        state.close()
        deps.close()
        graph.close()
