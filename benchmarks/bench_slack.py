"""Slack adapter latency on loopback: signed ``message.im`` events → the running bot → a fake Slack API.

For each event it measures, from the moment the POST starts:
  * placeholder — until the fake Slack API receives ``chat.postMessage`` ("Looking through the docs…");
                  with ``--side-panel`` (questions in an assistant thread) the first
                  ``assistant.threads.setStatus`` instead
  * answer      — until it receives the final Block Kit answer (``chat.update`` of the placeholder,
                  or the thread's reply in the side panel)
and prints p50 / p95 / max over the run. Everything is real but Slack: Bolt (signature checks),
the assistant over the sample handbook (ingested into a temporary folder first, or reused with
``--data-dir``), Redis (a throw-away key prefix).

With ``--llm-url`` the assistant's reasoner is an OpenAI-compatible server there (e.g.
llama-cpp-python's, as ``make test-llm`` runs it), and ``--stream`` (assistant threads) also
measures the first streamed token: until the fake Slack API receives ``chat.startStream``, with
its ratio to the final answer, per event, in the same run.

    python benchmarks/bench_slack.py                 # 60 DMs, one at a time
    python benchmarks/bench_slack.py -n 100 -c 4     # 100 DMs, 4 in flight
    python benchmarks/bench_slack.py --side-panel    # in assistant threads: status line, then reply
    python benchmarks/bench_slack.py -n 5 --stream --llm-url http://127.0.0.1:8000/v1 \
        --llm-model gemma3-270m                      # the answer streamed from a real LLM server
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import aiohttp  # noqa: E402
import redis  # noqa: E402

from agent.actions import RedisPendingActions  # noqa: E402
from agent.assistant import build_assistant  # noqa: E402
from agent.settings import LLMSettings  # noqa: E402
from bot.app import build_deps  # noqa: E402
from bot.chat.conversation import Agent  # noqa: E402
from bot.chat.conversation_state import ConversationState  # noqa: E402
from bot.settings import RedisSettings, ServerSettings, Settings, SlackSettings  # noqa: E402
from bot.web.server import AgentThread, build_app  # noqa: E402
from testing.recorder import start_app  # noqa: E402
from testing.slack import FakeSlackAPI, SlackSender, dm_event  # noqa: E402

SECRET = "bench-signing-secret"
QUESTIONS = [
    "How many vacation days can I carry over?",
    "What is the per diem for travel abroad?",
    "Who approves expenses over 500 euros?",
    "How do I set up the VPN?",
    "Was the login error fixed in 2.3.1?",
    "Can customers get a refund after 30 days?",
    "What do I do when I'm sick?",
    "How do I escalate a P1 incident?",
    "What is the password policy?",
    "When is the next performance review?",
]
USERS = ["U0ALICE01", "U0BOB0001", "U0CAROL01", "U0DAVE001", "U0WEI0001"]


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    k = max(0, min(len(values) - 1, round(p / 100 * (len(values) - 1))))
    return values[k]


async def run(
    n: int,
    concurrency: int,
    data_dir: Path,
    redis_url: str,
    off_loop: bool = True,
    side_panel: bool = False,
    llm: LLMSettings | None = None,
) -> dict[str, list[float]]:
    slack = await FakeSlackAPI().start()
    settings = Settings(
        data_dir=data_dir,
        slack=SlackSettings(bot_token="xoxb-bench", signing_secret=SECRET, api_url=slack.api_url),
        redis=RedisSettings(url=redis_url, rate_per_minute=0),
        server=ServerSettings(
            public_url="http://127.0.0.1:3000", link_secret="bench-link-secret-0123456789abcdefghij"
        ),
        llm=llm,
    )
    deps = build_deps(settings)
    if not deps.index.documents():
        t = time.perf_counter()
        deps.ingester.ingest(ROOT / "examples" / "handbook")
        print(f"ingested the sample handbook in {time.perf_counter() - t:.0f}s", file=sys.stderr)
    prefix = f"footnote-bench-{uuid.uuid4().hex[:8]}:"
    sync_redis = redis.Redis.from_url(redis_url)
    assistant: Agent = build_assistant(
        deps, pending=RedisPendingActions(sync_redis, prefix=prefix + "pending:")
    )
    if off_loop:
        assistant = AgentThread(assistant)
    state = ConversationState.from_settings(settings.redis, prefix=prefix)
    runner, url = await start_app(build_app(settings, deps, assistant, state))
    results: dict[str, list[float]] = {
        "ack": [],
        "placeholder": [],
        "answer": [],
        "first_token": [],
        "ratio": [],
    }
    async with aiohttp.ClientSession() as session:
        sender = SlackSender(session, url + "/slack/events", SECRET)
        # one warm-up question (model load, first auth.test) outside the measurement
        await sender.event(dm_event(QUESTIONS[0], channel="DWARMUP"))
        await slack.final_answer("DWARMUP", timeout=300)
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            channel = f"DBENCH{i:04d}"
            async with gate:
                t0 = time.perf_counter()
                status, _ = await sender.event(
                    dm_event(
                        QUESTIONS[i % len(QUESTIONS)],
                        user=USERS[i % len(USERS)],
                        channel=channel,
                        thread_ts=f"1700000000.{i:06d}" if side_panel else None,
                    )
                )
                results["ack"].append(time.perf_counter() - t0)
                assert status == 200, status
                if side_panel:
                    placeholder = await slack.wait_for(
                        lambda _: next(
                            (
                                c
                                for c in slack.of("assistant.threads.setStatus")
                                if c.args.get("channel_id") == channel
                            ),
                            None,
                        ),
                        120,
                    )
                else:
                    placeholder = await slack.posted(channel, timeout=120)
                final = await slack.final_answer(channel, timeout=300)
            results["placeholder"].append(placeholder.at - t0)
            results["answer"].append(final.at - t0)
            started = slack.of("chat.startStream", channel)
            if started:  # the answer's draft streamed (an LLM wrote it)
                results["first_token"].append(started[0].at - t0)
                results["ratio"].append((started[0].at - t0) / (final.at - t0))

        await asyncio.gather(*(one(i) for i in range(n)))
    await runner.cleanup()
    await state.close()
    await slack.close()
    keys = list(sync_redis.scan_iter(match=prefix + "*", count=1000))
    if keys:
        sync_redis.delete(*keys)
    deps.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-n", "--events", type=int, default=60)
    parser.add_argument("-c", "--concurrency", type=int, default=1)
    parser.add_argument(
        "--data-dir", type=Path, help="an already ingested FOOTNOTE_DATA_DIR to reuse"
    )
    parser.add_argument(
        "--same-loop",
        action="store_true",
        help="run the assistant on the web loop (no AgentThread)",
    )
    parser.add_argument(
        "--side-panel",
        action="store_true",
        help="ask in assistant threads: the status line, then the answer as the reply",
    )
    parser.add_argument(
        "--stream",
        action="store_true",
        help="with --llm-url: the answer streams into assistant threads (implies --side-panel)",
    )
    parser.add_argument("--llm-url", help="an OpenAI-compatible server's /v1 URL for the reasoner")
    parser.add_argument("--llm-model", default="gemma3-270m")
    parser.add_argument(
        "--llm-structured-output",
        default="json_object",
        help="json_object for llama-cpp-python's server (FOOTNOTE_LLM__STRUCTURED_OUTPUT)",
    )
    parser.add_argument("--llm-tokens", type=int, default=128, help="max tokens of one reply")
    parser.add_argument(
        "--llm-budget", type=float, default=60.0, help="FOOTNOTE_LLM__TURN_BUDGET_S (< 90)"
    )
    parser.add_argument(
        "--redis-url", default=os.environ.get("FOOTNOTE_REDIS__URL", "redis://127.0.0.1:6379/0")
    )
    args = parser.parse_args()
    if args.stream and not args.llm_url:
        parser.error("--stream needs an LLM: --llm-url")
    llm = None
    if args.llm_url:
        llm = LLMSettings(
            provider="openai_like",
            base_url=args.llm_url,
            model=args.llm_model,
            structured_output=args.llm_structured_output,
            max_reply_tokens=args.llm_tokens,
            step_timeout_s=120,
            turn_budget_s=args.llm_budget,
            max_retries=0,
            pause_after_failure_s=0,
            stream=args.stream,
        )
    side_panel = args.side_panel or args.stream
    with tempfile.TemporaryDirectory(prefix="footnote-bench-") as tmp:
        data_dir = args.data_dir or Path(tmp)
        results = asyncio.run(
            run(
                args.events,
                args.concurrency,
                data_dir,
                args.redis_url,
                not args.same_loop,
                side_panel,
                llm,
            )
        )
    where = "web loop" if args.same_loop else "agent thread"
    print(
        f"Slack {'side-panel' if side_panel else 'DM'} latency on loopback — "
        f"{args.events} events, concurrency {args.concurrency}, "
        f"assistant on the {where}, {os.cpu_count()} CPUs"
        + (f", LLM {args.llm_model} at {args.llm_url}" if args.llm_url else "")
    )
    print(f"{'':>26} {'p50':>8} {'p95':>8} {'max':>8}")
    rows = [
        ("ack", "HTTP 200 (ack)"),
        ("placeholder", "first status" if side_panel else "placeholder posted"),
        ("first_token", "first streamed token"),
        ("answer", "final answer"),
    ]
    for name, label in rows:
        v = results[name]
        if not v:
            continue
        print(
            f"{label:>26} {pct(v, 50) * 1000:7.0f}ms {pct(v, 95) * 1000:7.0f}ms {max(v) * 1000:7.0f}ms"
        )
    print(f"mean answer {statistics.mean(results['answer']) * 1000:.0f}ms")
    if args.stream:
        ratios = results["ratio"]
        print(f"streamed {len(ratios)}/{args.events} answers", end="")
        if ratios:
            print(
                f"; first token / final answer: p50 {pct(ratios, 50):.2f}, "
                f"min {min(ratios):.2f}, max {max(ratios):.2f}"
            )
        else:
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
