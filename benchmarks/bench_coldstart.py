"""Cold start of ``footnote ask``: the wall time of one whole process, from launch to answer.

It ingests the sample handbook into a temporary folder (or uses ``--data-dir``), runs
``footnote ask "How many vacation days can I carry over?" --user alice`` once to warm the disk
cache and the model caches under the data dir (as any earlier run on the machine would), then
times ``--runs`` more and prints the p50, the spread and the CPU time the processes used.
``--before REF`` measures a git revision the same way (its own checkout and index, this venv),
its runs taking turns with this checkout's, so the machine's load falls on both alike: on a
shared machine the ratio of the two is the figure to quote.

    python benchmarks/bench_coldstart.py                  # this checkout, 10 runs
    python benchmarks/bench_coldstart.py --before main    # and main, for comparison

It also times ``footnote --help`` (the arguments alone, no model) and says which CPU features
the encoders had: AVX2, AVX-512, AMX, and the precision OpenVINO compiled MiniLM for (bf16 only
with AMX or AVX-512 BF16). ``ONEDNN_MAX_CPU_ISA=AVX2`` in the environment makes a CPU with
AVX-512 BF16 stand in for an AVX2-only one (float32, oneDNN's AVX2 kernels; an estimate, since
OpenVINO's MLAS matrix products still use what the CPU has).

The machine's other work shows in wall time; CPU time shows what the process itself costs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "How many vacation days can I carry over?"
GOAL_S = 1.0
HELP_GOAL_S = 0.3
# 209f2dd, measured with `--before 209f2dd --runs 9` beside this work's last commit on 2 vCPUs of
# a Zen 4 AMD EPYC (AVX-512 BF16: MiniLM in bf16) that another job held about half of (load
# 4.7-6.7): wall times are one core's. Printed when --before is not given; pass it for a ratio.
BEFORE = {"revision": "209f2dd", "wall_p50_s": 1.94, "cpu_s": 1.61}


def footnote(checkout: Path, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "FOOTNOTE_DATA_DIR": str(data_dir),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONPATH": str(checkout),  # this checkout's packages before the venv's own install
    }
    # Bytecode is written as after any install, so no run pays for compiling Footnote's sources.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # The installed command's own module (bot.entry), or where an older revision had it.
    entry = next(
        (
            m
            for m in ("bot.entry", "bot.arguments")
            if (checkout / f"{m.replace('.', '/')}.py").exists()
        ),
        "bot.cli",
    )
    return subprocess.run(
        [sys.executable, "-m", entry, *args],
        cwd=checkout,
        env=env,
        capture_output=True,
        encoding="utf-8",
        check=False,
    )


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(checkout: Path, data_dir: Path, *args: str) -> tuple[float, float, str]:
    cpu0, t0 = children_cpu(), time.perf_counter()
    done = footnote(checkout, data_dir, *args)
    return time.perf_counter() - t0, children_cpu() - cpu0, done.stdout


def measure_help(checkout: Path, data_dir: Path, runs: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for i in range(runs + 1):
        wall, cpu, out = timed(checkout, data_dir, "--help")
        if "usage: footnote" not in out:
            raise SystemExit(f"footnote --help printed no usage in {checkout}")
        if i:
            walls.append(wall)
            cpus.append(cpu)
    return walls, cpus


def encoders() -> str:
    """The CPU, its vector instruction sets, and the precision OpenVINO compiles MiniLM for."""
    sys.path.insert(0, str(ROOT))
    from ingest.openvino_models import cpu_features, machine

    here = machine()
    features = ", ".join(cpu_features()) or "none of AVX2 / AVX-512 / AMX"
    precision = "bf16" if here.bf16 else "f32"
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA")
    capped = f" (capped: ONEDNN_MAX_CPU_ISA={cap})" if cap else ""
    return (
        f"{here.cpu}; {features}; OpenVINO {here.openvino.split('-')[0]} runs MiniLM in "
        f"{precision}{capped}"
    )


def ingested(checkout: Path, data_dir: Path) -> None:
    """The handbook ingested into ``data_dir`` by ``checkout``'s own code, once."""
    if not (data_dir / "index").exists():
        done = footnote(checkout, data_dir, "ingest", str(checkout / "examples" / "handbook"))
        if done.returncode != 0:
            raise SystemExit(f"ingest failed in {checkout}:\n{done.stderr}")


def ask_once(checkout: Path, data_dir: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one whole ``footnote ask`` process."""
    cpu0, t0 = children_cpu(), time.perf_counter()
    done = footnote(checkout, data_dir, "ask", QUESTION, "--user", "alice")
    wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
    if done.returncode != 0 or "[1]" not in done.stdout:
        raise SystemExit(f"ask failed in {checkout}:\n{done.stdout}\n{done.stderr}")
    return wall, cpu


def measure(
    checkouts: dict[str, tuple[Path, Path]], runs: int
) -> dict[str, tuple[list[float], list[float]]]:
    """Wall and CPU seconds of ``runs`` asks per checkout, after one unmeasured warm-up each
    (it fills the disk cache and the model caches, as any earlier run on the machine would).
    The checkouts take turns run by run, so a change in the machine's load falls on all alike."""
    for checkout, data_dir in checkouts.values():
        ingested(checkout, data_dir)
        ask_once(checkout, data_dir)
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in checkouts}
    for i in range(1, runs + 1):
        for name, (checkout, data_dir) in checkouts.items():
            wall, cpu = ask_once(checkout, data_dir)
            out[name][0].append(wall)
            out[name][1].append(cpu)
            print(
                f"  run {i:2} {name:<8} {wall:5.2f} s wall, {cpu:5.2f} s CPU (load {load()})",
                flush=True,
            )
    return out


@contextlib.contextmanager
def checkout_of(revision: str) -> Iterator[Path]:
    """A detached worktree of ``revision``, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="footnote-before-") as tmp:
        path = Path(tmp) / "checkout"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(path), revision],
            check=True,
        )
        try:
            yield path
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=False
            )


def summary(name: str, walls: list[float], cpus: list[float]) -> str:
    return (
        f"{name:<8} p50 {statistics.median(walls):5.2f} s wall "
        f"(min {min(walls):.2f}, max {max(walls):.2f}), "
        f"CPU p50 {statistics.median(cpus):.2f} s, {len(walls)} runs"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--data-dir", type=Path, help="an ingested data folder to reuse")
    parser.add_argument("--before", metavar="REF", help="also measure this git revision")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="footnote-coldstart-")))
        checkouts = {}
        if args.before:
            old = stack.enter_context(checkout_of(args.before))
            checkouts[args.before] = (old, tmp / "before")
        data_dir = args.data_dir or tmp / "now"
        checkouts["now"] = (ROOT, data_dir)
        results = measure(checkouts, args.runs)
        help_walls, help_cpus = measure_help(ROOT, data_dir, args.runs)
    print(f"\n{encoders()}")
    print(f"footnote ask {QUESTION!r} --user alice, one process per run (load {load()})")
    if not args.before:
        b = BEFORE
        print(
            f"before   p50 {b['wall_p50_s']:5.2f} s wall, CPU {b['cpu_s']:.2f} s ({b['revision']}, "
            "measured elsewhere: see BEFORE)"
        )
    for name, (walls, cpus) in results.items():
        print(summary(name, walls, cpus))
    if args.before:
        (old_walls, old_cpus), (walls, cpus) = results[args.before], results["now"]
        print(
            f"now / {args.before}: wall p50 x{statistics.median(walls) / statistics.median(old_walls):.2f}, "
            f"CPU p50 x{statistics.median(cpus) / statistics.median(old_cpus):.2f}"
        )
    walls = results["now"][0]
    p50 = statistics.median(walls)
    print(f"goal: p50 at most {GOAL_S} s — {'met' if p50 <= GOAL_S else 'not met'} on this run")
    help_p50 = statistics.median(help_walls)
    print(
        f"footnote --help p50 {help_p50:.2f} s wall, CPU {statistics.median(help_cpus):.2f} s; "
        f"goal {HELP_GOAL_S} s — {'met' if help_p50 <= HELP_GOAL_S else 'not met'}"
    )
    return 0


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
