"""The directory in Entra ID, end to end: a SharePoint file shared with an Entra ID group is
answered, in Slack and in Teams, to a member of a group nested in it — found through the
loopback Microsoft Graph by their Slack e-mail or their Teams AAD object id — and to nobody
else. When Graph cannot be reached, a person not yet cached is told so and shown nothing.
Real sync, real assistant, real Bolt and Bot Framework adapters, real Redis cache."""

from __future__ import annotations

import redis
from pydantic import SecretStr

from agent.actions import RedisPendingActions
from agent.assistant import build_assistant
from bot.app import build_deps
from bot.chat.conversation import DIRECTORY_UNAVAILABLE
from bot.identity.directory_cache import CachedDirectory
from bot.settings import DirectorySettings, RedisSettings, Settings
from ingest.settings import GraphSettings
from ingest.sources.sharepoint import SharePointConnector
from ingest.sources.state import SyncState
from ingest.sources.sync import IndexSink, sync
from testing.graph import LoopbackGraph, entra_group, granted
from testing.slack import blocks_text, dm_event, shown
from testing.teams import FakeConnector, teams_activity
from tests.e2e.conftest import REDIS_URL, Harness, running_bot

ROTA = (
    "<html><head><title>Escalation rota</title></head><body><h2>Weekends</h2>"
    "<p>Weekend escalations go to the duty engineer on extension 4417 until Monday 07:00.</p>"
    "</body></html>"
)
ROTA_Q = "Which extension takes weekend escalations on the escalation rota?"
BOB, ALICE, STRANGER = "U0BOB0001", "U0ALICE01", "U0STRANGR"  # Slack ids (tests/e2e/conftest)


async def ask(bot: Harness, text: str, user: str, channel: str) -> str:
    await bot.send.event(dm_event(text, user=user, channel=channel))
    final = await bot.slack.final_answer(channel)
    return shown(blocks_text(final.args["blocks"]))


async def ask_in_teams(bot: Harness, text: str, aad_object_id: str, teams_id: str) -> str:
    activity = teams_activity(text, service_url=bot.connector.url, user=teams_id)
    activity["from"]["aadObjectId"] = aad_object_id
    status, _ = await bot.teams(activity)
    assert status in (200, 201)
    sent = bot.connector.messages(f"a:personal-{teams_id}")
    card = FakeConnector.card(sent[-1])
    return shown(FakeConnector.card_text(card) if card else sent[-1].get("text", ""))


async def test_a_nested_entra_group_member_reads_what_the_outer_group_was_given(
    tmp_path, embedders, redis_prefix
):
    graph = LoopbackGraph().start()
    bob = graph.user("bob@northwind.example", "Bob Okafor")
    alice = graph.user("alice@northwind.example", "Alice Moreau")
    tier2 = graph.group("Support Tier 2", [bob])
    support = graph.group("Support", [tier2])  # bob is in it only through Tier 2
    graph.group("HR", [alice])
    creds = GraphSettings(
        tenant_id=graph.tenant,
        client_id=graph.client_id,
        client_secret=SecretStr(graph.client_secret),
        authority=graph.url,
        url=f"{graph.url}/v1.0",
    )
    deps = build_deps(
        Settings(
            data_dir=tmp_path / "data",
            graph=creds,
            directory=DirectorySettings(source="graph"),
            redis=RedisSettings(key_prefix=redis_prefix + "graphdir:"),
        )
    )
    deps.__dict__["embedders"] = embedders
    state = SyncState.sqlite(tmp_path / "state.db")
    try:
        assert isinstance(deps.directory, CachedDirectory)
        site = graph.site("northwind.sharepoint.com", "/sites/Support")
        docs = graph.drives[site.drives[0]]
        graph.put(
            docs, "Rota.html", ROTA, grants=[granted(entra_group(support.id))], inherits=False
        )
        state.add_source("sp", "sharepoint", {})
        conn = SharePointConnector(
            tenant_id=graph.tenant,
            client_id=graph.client_id,
            client_secret=SecretStr(graph.client_secret),
            site=site.web_url,
            authority=graph.url,
            graph_url=f"{graph.url}/v1.0",
        )
        try:
            assert len(sync("sp", state, conn, IndexSink(deps.ingester, [])).written) == 1
        finally:
            conn.close()
        pending = RedisPendingActions(
            redis.Redis.from_url(REDIS_URL), prefix=redis_prefix + "gd-pending:"
        )
        assistant = build_assistant(deps, pending=pending)
        async with running_bot(deps, assistant, redis_prefix) as bot:
            assert "4417" in await ask(bot, ROTA_Q, BOB, "D0GDBOB01")  # by his Slack e-mail
            assert "4417" not in await ask(bot, ROTA_Q, ALICE, "D0GDALI01")
            assert "4417" in await ask_in_teams(bot, ROTA_Q, bob.id, "29:bob")  # by object id
            assert "4417" not in await ask_in_teams(bot, ROTA_Q, alice.id, "29:alice")
            assert graph.count("users") == 2  # bob and alice by e-mail, once each

            asked = len(graph.requests)
            assert "4417" in await ask(bot, ROTA_Q, BOB, "D0GDBOB02")
            assert len(graph.requests) == asked  # the cache answered

            graph.close()  # Entra ID out of reach: someone not cached is told, and shown nothing
            await bot.send.event(dm_event(ROTA_Q, user=STRANGER, channel="D0GDSTR01"))
            reply = await bot.slack.posted("D0GDSTR01")
            assert "can't reach the company directory" in reply.args["text"]
            assert DIRECTORY_UNAVAILABLE.split(",")[0] in reply.args["text"]
            assert bot.slack.of("chat.update", "D0GDSTR01") == []  # no answer at all
            assert "4417" in await ask(bot, ROTA_Q, BOB, "D0GDBOB03")  # cached: still served
    finally:
        state.close()
        deps.close()
        graph.close()
