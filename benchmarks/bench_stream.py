"""The streamed answer step against a real OpenAI-compatible server: how soon the first words of the
draft are there, against how long the whole reply takes, per question, in the same run.

For each question the handbook is searched as the asker (the real retriever), and the LLM
reasoner's answer step (``LLMReasoner.answer`` with a ``draft`` callback: the raw JSON streamed
and read partially, as a chat that streams gets it) is timed from the request:
  * first token — the first draft delta (text the chat would show)
  * answer      — the reply complete and parsed (or found unusable: cut at ``--tokens``)
and their ratio. ``bench_slack.py --stream`` measures the same through Slack for a whole turn,
where the server is fast enough for every step to fit the turn's LLM budget.

    python -m llama_cpp.server --model GGUF --model_alias gemma3-270m --chat_format gemma \\
        --port 8000 --n_threads 1 --n_ctx 8192 &
    python benchmarks/bench_stream.py --llm-url http://127.0.0.1:8000/v1 -n 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from agent.llm_reasoner import LLMReasoner  # noqa: E402
from agent.llms import build_llms  # noqa: E402
from agent.reasoning import UnusableReply  # noqa: E402
from agent.settings import LLMSettings  # noqa: E402
from bot.app import build_deps  # noqa: E402
from bot.settings import Settings  # noqa: E402

QUESTIONS = [
    "How many vacation days can I carry over?",
    "What is the per diem for travel abroad?",
    "Who approves expenses over 500 euros?",
    "How do I set up the VPN?",
    "What do I do when I'm sick?",
    "How do I escalate a P1 incident?",
]
GROUPS = ["everyone", "employees", "hr", "engineering"]


async def one(reasoner: LLMReasoner, question: str, passages) -> tuple[float | None, float, bool]:
    """(seconds to the first delta or None, seconds to the end, whether the reply was usable)."""
    first: list[float] = []
    t0 = time.perf_counter()

    async def draft(delta: str) -> None:
        if not first:
            first.append(time.perf_counter() - t0)

    try:
        await reasoner.answer(question, [question], passages, [], draft=draft)
        usable = True
    except UnusableReply:
        usable = False
    return (first[0] if first else None), time.perf_counter() - t0, usable


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--llm-url", required=True, help="the server's /v1 URL")
    parser.add_argument("--llm-model", default="gemma3-270m")
    parser.add_argument("--structured-output", default="json_object")
    parser.add_argument("-n", "--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--passages", type=int, default=4, help="passages in the answer prompt")
    parser.add_argument("--tokens", type=int, default=256, help="max tokens of the reply")
    parser.add_argument("--data-dir", type=Path, help="an already ingested FOOTNOTE_DATA_DIR")
    args = parser.parse_args()
    llm = LLMSettings(
        provider="openai_like",
        base_url=args.llm_url,
        model=args.llm_model,
        structured_output=args.structured_output,
        max_reply_tokens=args.tokens,
        timeout_s=600,
        max_retries=0,
    )
    reasoner = LLMReasoner(*build_llms(llm))
    with tempfile.TemporaryDirectory(prefix="footnote-bench-") as tmp:
        deps = build_deps(Settings(data_dir=args.data_dir or Path(tmp)))
        if not deps.index.documents():
            deps.ingester.ingest(ROOT / "examples" / "handbook")

        async def every() -> list[tuple]:  # one event loop: the client's connections live on it
            rows = []
            for i in range(args.questions):
                q = QUESTIONS[i % len(QUESTIONS)]
                passages = deps.retriever.search(q, GROUPS, top_k=args.passages)
                rows.append((q, *await one(reasoner, q, passages)))
            return rows

        rows = asyncio.run(every())
        deps.close()
    print(
        f"streamed answer step — {args.llm_model} at {args.llm_url}, {args.passages} passages, "
        f"max {args.tokens} tokens, {os.cpu_count()} CPUs"
    )
    print(f"{'question':<44} {'first token':>12} {'answer':>9} {'ratio':>6}  reply")
    ratios = []
    for q, first, total, usable in rows:
        ratio = first / total if first is not None else None
        if ratio is not None:
            ratios.append(ratio)
        shown = f"{first:11.2f}s" if first is not None else f"{'—':>12}"
        print(
            f"{q[:44]:<44} {shown} {total:8.2f}s {ratio if ratio is not None else float('nan'):6.2f}"
            f"  {'parsed' if usable else 'cut / unusable'}"
        )
    if ratios:
        print(
            f"first token / answer: p50 {statistics.median(ratios):.2f} "
            f"(min {min(ratios):.2f}, max {max(ratios):.2f}) over {len(ratios)}/{len(rows)} "
            "answers that streamed text"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
