"""Google Drive through Slack: docs synced from the loopback Drive answer, in a DM, exactly the
people their Drive sharing names — and after a sharing change, the new ones only. Real sync into
a Qdrant Edge folder of its own, real assistant, real Bolt, real Redis."""

from __future__ import annotations

import redis

from agent.actions import RedisPendingActions
from agent.assistant import build_assistant
from bot.app import build_deps
from bot.settings import Settings
from ingest.sources.gdrive import DriveClient, GoogleDriveConnector, ServiceAccountKey
from ingest.sources.state import SyncState
from ingest.sources.sync import IndexSink, sync
from testing.gdrive import LoopbackDrive, domain, user
from testing.slack import blocks_text, dm_event
from tests.e2e.conftest import REDIS_URL, Harness, running_bot

GARAGE = (
    '<h2 id="h.4k2r9">Opening hours</h2><p>The Riverside office garage closes at 22:00 on '
    "weekdays and stays shut on Sundays.</p>"
)
RELOCATION = (
    '<h2 id="h.1a2b3">Housing</h2><p>The Lisbon relocation package pays a housing allowance of '
    "2,400 euros a month for the first year.</p>"
)
GARAGE_Q = "When does the Riverside office garage close on weekdays?"
RELOCATION_Q = "How much housing allowance does the Lisbon relocation package pay?"
BOB, ALICE = "U0BOB0001", "U0ALICE01"  # bob@ and alice@northwind.example (examples/directory.yaml)


async def ask(bot: Harness, text: str, user: str, channel: str) -> str:
    """One question in a DM channel of its own (no history), the final answer's text."""
    await bot.send.event(dm_event(text, user=user, channel=channel))
    final = await bot.slack.final_answer(channel)
    return blocks_text(final.args["blocks"])


async def test_drive_docs_answer_their_readers_in_slack_before_and_after_a_narrowing(
    tmp_path, embedders, redis_prefix
):
    drive = LoopbackDrive().start()
    deps = build_deps(Settings(data_dir=tmp_path / "data"))
    deps.__dict__["embedders"] = embedders
    state = SyncState.sqlite(tmp_path / "state.db")
    key = ServiceAccountKey.load(drive.key_file(tmp_path))
    try:
        policies = drive.shared_drive("Facilities")  # no members: each doc's own sharing
        garage = drive.put(
            "Riverside office garage", GARAGE, policies, grants=[user("Bob@Northwind.example")]
        )
        drive.put(
            "Relocation to Lisbon", RELOCATION, policies, grants=[user("alice@northwind.example")]
        )
        state.add_source("drive", "gdrive", {})
        sink = IndexSink(deps.ingester, deps.settings.admin_groups)

        def run_sync() -> list[str]:
            client = DriveClient(key, token_uri=drive.token_uri, api_url=drive.url)
            conn = GoogleDriveConnector(client, drive_id=policies, domains=("northwind.example",))
            try:
                return sync("drive", state, conn, sink).written
            finally:
                conn.close()

        assert len(run_sync()) == 2
        embedded: list[int] = []  # chunks embedded from here on: a sharing change embeds none
        embed = deps.ingester.embed_chunks
        deps.ingester.embed_chunks = lambda chunks: embedded.append(len(chunks)) or embed(chunks)
        pending = RedisPendingActions(
            redis.Redis.from_url(REDIS_URL), prefix=redis_prefix + "gd-pending:"
        )
        assistant = build_assistant(deps, pending=pending)
        async with running_bot(deps, assistant, redis_prefix) as bot:
            text = await ask(bot, GARAGE_Q, BOB, "D0GDBOB01")
            assert "22:00" in text and f"document/d/{garage}/edit" in text, text  # its Drive link
            assert "2,400" in await ask(bot, RELOCATION_Q, ALICE, "D0GDALI01")
            assert "2,400" not in await ask(bot, RELOCATION_Q, BOB, "D0GDBOB02")
            assert "22:00" not in await ask(bot, GARAGE_Q, ALICE, "D0GDALI02")  # not shared

            drive.share(garage, [user("alice@northwind.example")])  # bob loses it
            assert run_sync() == [garage]
            assert "22:00" not in await ask(bot, GARAGE_Q, BOB, "D0GDBOB03")  # no leak
            assert "22:00" in await ask(bot, GARAGE_Q, ALICE, "D0GDALI03")

            drive.share(garage, [domain("northwind.example")])  # everyone at the company
            assert run_sync() == [garage]
            assert "22:00" in await ask(bot, GARAGE_Q, BOB, "D0GDBOB04")
            assert embedded == []  # both changes relabelled the points, nothing embedded again
            drive.edit(garage, GARAGE.replace("22:00", "23:00"))
            assert run_sync() == [garage] and embedded  # an edit is embedded
    finally:
        state.close()
        deps.close()
        drive.close()
