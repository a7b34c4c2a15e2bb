"""Does each refusal gate, and each term of a unit's score, earn its place? Each run switches one
off (``agent/calibration.py`` holds the numbers it patches) and asks every public answer set's
dev split and the golden set, as ``footnote eval --dataset all`` does; the table is the change in
questions answered correctly per set, against everything on.

A mechanism stays by the rule in docs/quality.md when switching it off loses on at least two sets.

    python benchmarks/ablate_gates.py --out /tmp/ablate          # every gate, then the table
    python benchmarks/ablate_gates.py --out /tmp/ablate --terms  # every term of the score
    python benchmarks/ablate_gates.py --out /tmp/ablate --gate narrowed
    python benchmarks/ablate_gates.py --out /tmp/ablate --table  # the table from earlier runs

Each run is a process of its own (``footnote eval`` with the gate patched out), so one run's
cached word vectors cannot reach another's; the corpora's scratch indexes are shared
(``FOOTNOTE_DATA_DIR``), built by the first run.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from unittest import mock


def _never(*args: object, **kwargs: object) -> bool:
    return False


def _gates() -> dict[str, Callable[[], mock._patch]]:  # type: ignore[type-arg]
    """Each refusal gate, and each term of a unit's score (``agent/extract.py``), switched off."""
    from agent.calibration import Calibration
    from agent.offline import OfflineReasoner

    def off(**values: float) -> Callable[[], mock._patch]:  # type: ignore[type-arg]
        return lambda: mock.patch.multiple(Calibration, **values)  # type: ignore[call-overload]

    return {
        # refusal gates
        "misses_point": lambda: mock.patch.object(OfflineReasoner, "_misses_the_point", _never),
        "too_little": lambda: mock.patch.object(OfflineReasoner, "_says_too_little", _never),
        "lacks_thing": lambda: mock.patch.object(OfflineReasoner, "_lacks_the_thing", _never),
        "narrowed": lambda: mock.patch.object(OfflineReasoner, "_narrowed_away", _never),
        "unsaid_gate": off(unsaid_at=math.inf),
        "unseen_penalty": off(unseen_weight=0.0),
        "synonyms": off(synonym_at=math.inf),
        # terms of a unit's score and rules of choosing
        "says_back": off(says_back_cost=0.0),
        "kind": off(kind_cost=0.0),
        "value_fit": off(
            value_in_range=0.0,
            value_in_open_range=0.0,
            value_out_of_range=0.0,
            bound_fit=0.0,
            number_fit=0.0,
        ),
        "cell_fit": off(row_named=0.0, cell_named=0.0),
        "grade": off(grade_weight=0.0),
        "missing": off(missing_id_cost=0.0, missing_name_cost=0.0),
        "about": off(about_bonus=0.0),
        "examples": off(example_cost=0.0),
        "records": off(record_cost=0.0),
        "audience": off(other_audience_cost=0.0, own_audience_bonus=0.0),
        "rescore": off(rescored=0),
        "credits": off(synonym_credit=0.0, reworded_credit=0.0),
        "following": off(following_at=math.inf),
        "adds": off(adds_at=math.inf),
        "model_first": off(model_odds=math.inf),
    }


GATES = [
    "misses_point",
    "too_little",
    "lacks_thing",
    "narrowed",
    "unsaid_gate",
    "unseen_penalty",
    "synonyms",
]
TERMS = [
    "says_back",
    "kind",
    "value_fit",
    "cell_fit",
    "grade",
    "missing",
    "about",
    "examples",
    "records",
    "audience",
    "rescore",
    "credits",
    "following",
    "adds",
    "model_first",
]


def run_one(gate: str, out: Path, split: str, limit: int) -> None:
    """In this process: patch ``gate`` out (``base``: none) and run the eval."""
    from bot.cli import main

    argv = ["eval", "--dataset", "all", "--split", split, "--limit", str(limit)]
    argv += ["--json", str(out / f"{gate}.json")]
    if gate == "base":
        raise SystemExit(main(argv))
    with _gates()[gate]():
        raise SystemExit(main(argv))


def _correct(path: Path) -> dict[str, dict[str, bool]]:
    """Each set's items (the golden set's as "handbook"), each answered correctly or not."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = {r["dataset"]: {i["id"]: i["correct"] for i in r["items"]} for r in data["datasets"]}
    if data.get("golden"):
        rows["handbook"] = {i["id"]: i["correct"] for i in data["golden"]["items"]}
    return rows


def table(out: Path) -> str:
    """Questions answered correctly with each gate off, minus with all on (negative: the gate
    helps), per set; on how many sets the gate helps and hurts; which golden questions it
    decides."""
    base = _correct(out / "base.json")
    sets = list(base)
    lines = [
        "| gate off | "
        + " | ".join(sets)
        + " | helps on | hurts on | golden questions it decides |",
        "|---" * (len(sets) + 4) + "|",
    ]
    for gate in [*GATES, *TERMS]:
        path = out / f"{gate}.json"
        if not path.exists():
            continue
        rows = _correct(path)
        deltas = [sum(rows[s].values()) - sum(base[s].values()) for s in sets]
        cells = [f"{d:+d}" if d else "0" for d in deltas]
        flips = [
            f"{'+' if now else '-'}{qid}"
            for qid, now in rows.get("handbook", {}).items()
            if now != base.get("handbook", {}).get(qid, now)
        ]
        helps, hurts = sum(d < 0 for d in deltas), sum(d > 0 for d in deltas)
        lines.append(
            f"| {gate} | " + " | ".join(cells) + f" | {helps} | {hurts} | {' '.join(flips)} |"
        )
    counts = " / ".join(f"{s} {len(base[s])}" for s in sets)
    correct = " / ".join(f"{s} {sum(base[s].values()) / len(base[s]):.3f}" for s in sets)
    return "\n".join([*lines, "", f"questions: {counts}", f"correct, all gates on: {correct}"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for each run's JSON")
    parser.add_argument("--gate", choices=["base", *GATES, *TERMS], help="one run")
    parser.add_argument(
        "--terms", action="store_true", help="the terms of a unit's score, not the gates"
    )
    parser.add_argument("--split", default="dev", choices=["train", "dev", "test"])
    parser.add_argument("--limit", type=int, default=200, help="questions per set")
    parser.add_argument("--table", action="store_true", help="only print the table")
    parser.add_argument("--run", help=argparse.SUPPRESS)  # a child process: run this gate
    args = parser.parse_args()
    if args.run:
        run_one(args.run, args.out, args.split, args.limit)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.table:
        every = ["base", *(TERMS if args.terms else GATES)]
        for gate in [args.gate] if args.gate else every:
            if (args.out / f"{gate}.json").exists():
                print(f"{gate}: kept from an earlier run", file=sys.stderr)
                continue
            command = [sys.executable, __file__, "--out", str(args.out), "--run", gate]
            command += ["--split", args.split, "--limit", str(args.limit)]
            print(f"{gate}: running", file=sys.stderr, flush=True)
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    if (args.out / "base.json").exists():
        print(table(args.out))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
