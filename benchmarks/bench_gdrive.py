"""A Google Drive sync of N docs against the loopback Drive API: wall time and requests.

    python -m benchmarks.bench_gdrive --docs 200            # listing and fetching, no index
    python -m benchmarks.bench_gdrive --docs 50 --index     # through `footnote sync` into the index

The docs live in one shared drive whose members are a group; a tenth are also shared with a
person. Without ``--index`` they go to a sink that parses them as the index sink does and keeps
nothing, so the figures are the connector's (token, listing, permissions, exports, parsing).
Each run does a first sync, a sync with nothing changed, and one after 2% edited, 1% trashed and
1% shared with one more person; then a shared-drive member change (every file relabelled).
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path

from benchmarks.bench_sync import ParseSink, page_body
from ingest.sources.gdrive import DriveClient, GoogleDriveConnector, ServiceAccountKey
from ingest.sources.state import SyncState
from ingest.sources.sync import sync
from testing.gdrive import LoopbackDrive, group, user

STEPS = ("first", "nothing changed", "2% edited, 1% trashed, 1% shared", "drive members changed")


def fill(site: LoopbackDrive, docs: int) -> tuple[str, list[str]]:
    rng = random.Random(7)
    drive = site.shared_drive("Policies", members=[group("hr@acme.example")])
    ids = [
        site.put(
            f"Doc {n}",
            page_body(rng, n),
            drive,
            grants=[user(f"person{n}@acme.example")] if n % 10 == 0 else [],
        )
        for n in range(docs)
    ]
    return drive, ids


def change(site: LoopbackDrive, drive: str, ids: list[str], step: str) -> None:
    n = len(ids)
    if step.startswith("2%"):
        for fid in ids[: max(1, n // 50)]:
            site.edit(fid, site.files[fid].content + b"<p>Edited.</p>")
        for fid in ids[-max(1, n // 100) :]:
            site.trash(fid)
        for fid in ids[n // 2 : n // 2 + max(1, n // 100)]:
            site.share(fid, [user("auditor@acme.example")])
    elif step.startswith("drive"):
        site.set_members(drive, [group("hr@acme.example"), group("legal@acme.example")])


def without_index(docs: int) -> None:
    site = LoopbackDrive(max_page=1000).start()
    drive, ids = fill(site, docs)
    with tempfile.TemporaryDirectory() as tmp:
        key = ServiceAccountKey.load(site.key_file(Path(tmp)))
        state = SyncState.sqlite(Path(tmp) / "state.db")
        state.add_source("drive", "gdrive", {})
        print(f"{docs} Google Docs of four ~70-word sections, one shared drive, no index")
        print("| sync | wall | CPU | requests | written | unchanged | deleted |")
        print("|---|---|---|---|---|---|---|")
        for step in STEPS:
            change(site, drive, ids, step)
            client = DriveClient(key, token_uri=site.token_uri, api_url=site.url)
            conn = GoogleDriveConnector(client, drive_id=drive, domains=("acme.example",))
            wall, cpu = time.perf_counter(), time.process_time()
            report = sync("drive", state, conn, ParseSink())
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(
                f"| {step} | {wall:.2f} s | {cpu:.2f} s | {conn.requests} + 1 token | "
                f"{len(report.written)} | {len(report.unchanged)} | {len(report.deleted)} |"
            )
            conn.close()
        state.close()
    site.close()


def with_index(docs: int) -> None:
    from bot.cli import main as cli_main

    site = LoopbackDrive(max_page=1000).start()
    drive, ids = fill(site, docs)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            {
                "FOOTNOTE_DATA_DIR": tmp,
                "FOOTNOTE_GDRIVE__KEY_FILE": str(site.key_file(Path(tmp))),
                "FOOTNOTE_GDRIVE__TOKEN_URI": site.token_uri,
                "FOOTNOTE_GDRIVE__API_URL": site.url,
            }
        )
        add = ["sources", "add", "gdrive", "--shared-drive", "Policies", "--domain", "acme.example"]
        assert cli_main([*add, "--name", "drive"]) == 0
        print(f"`footnote sync`, {docs} Google Docs into Qdrant Edge")
        for step in STEPS:
            change(site, drive, ids, step)
            before = len(site.requests)
            wall, cpu = time.perf_counter(), time.process_time()
            cli_main(["sync"])
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(
                f"| {step} | {wall:.1f} s | {cpu:.1f} s | {len(site.requests) - before} requests |"
            )
    site.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--index", action="store_true", help="through footnote sync, embedding")
    args = parser.parse_args()
    (with_index if args.index else without_index)(args.docs)


if __name__ == "__main__":
    main()
