"""Set the numbers of ``agent/calibration.py`` by data: a coordinate search on the dev splits of
the six public answer sets, under the golden set's CI floors.

For each number in turn it asks every set's dev sample (``footnote eval --limit`` order) with the
number moved to each value of a grid around it, and keeps the value that answers the most dev
questions correctly in all, provided that

- it gains at least ``--margin`` questions over the value it replaces (a tie keeps the old one:
  a sample of a few hundred questions must not move a number by luck), and
- no set loses more than two questions, and
- the golden set still clears every floor of ``tests/agent/test_answer_loop.py``.

One process holds every set's index, the models and the reasoner's vector cache, so the second
and later runs of a set cost its search and scoring alone. Every run is kept in ``--out`` as a
line of ``runs.jsonl`` and a resumed fit reads them back instead of asking again.

    python benchmarks/fit_calibration.py --out /tmp/fit --data-dir DATA --limit 100
    python benchmarks/fit_calibration.py --out /tmp/fit --table   # every run against the first

The test splits are not read: report them with ``footnote eval --split test`` once afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from pathlib import Path
from unittest import mock

# the golden set's floors (tests/agent/test_answer_loop.py::test_golden_set_floors)
ORIGINAL_FLOORS = {"citation_accuracy": 0.92, "refusal_accuracy": 0.89, "key_fact_coverage": 0.85}
FULL_FLOORS = {"citation_accuracy": 0.90, "refusal_accuracy": 0.92, "key_fact_coverage": 0.85}
OVER_REFUSAL_CEILING = 0.08
GRID = (0.5, 0.75, 1.25, 1.5)  # each number is tried at these multiples of its value


def candidates(name: str, value: object, grid: tuple[float, ...] = GRID) -> list[object]:
    """The values a number is tried at: multiples of it, whole for a count; a dict's values are
    moved together."""
    if isinstance(value, dict):
        return [{k: round(v * f, 3) for k, v in value.items()} for f in grid]
    if isinstance(value, int):
        return sorted({max(1, round(value * f)) for f in grid} - {value})  # type: ignore[return-value]
    assert isinstance(value, float), name
    return [round(value * f, 3) for f in grid]


class Sets:
    """Every set's dev sample and an assistant over its index, opened once."""

    def __init__(
        self, data_dir: Path, eval_dir: Path, split: str, limit: int, only: list[str] | None
    ):
        from agent.answer_model import build_answer_model
        from agent.assistant import build_assistant
        from agent.corpora import DATASETS, load_corpus, sample
        from agent.evaluation import load_golden
        from bot.app import build_deps
        from bot.cli.evaluating import EXAMPLES, corpus_deps, shared_embedders
        from bot.cli.ingesting import run_ingest
        from bot.identity.directory import groups_of
        from bot.settings import Settings

        _remember_query_vectors()
        settings = Settings(data_dir=data_dir)
        embedders = shared_embedders(settings)
        model = build_answer_model(settings.embedding.threads, settings.data_dir / "cache")
        model._size = 10**7  # every (question, unit) read once for the whole fit
        self.deps, self.sets = [], {}
        for name in only or DATASETS:
            asked = sample([q for q in load_corpus(eval_dir, name) if q.split == split], limit)
            deps, _ = corpus_deps(settings, eval_dir, name, embedders=embedders)
            deps.__dict__["answer_model"] = model
            self.deps.append(deps)
            self.sets[name] = (build_assistant(deps), asked)
        handbook = build_deps(settings.model_copy(update={"data_dir": data_dir / "handbook"}))
        handbook.__dict__["embedders"] = embedders
        handbook.__dict__["answer_model"] = model
        if not handbook.index.count():
            run_ingest(handbook, EXAMPLES / "handbook", [])
        self.deps.append(handbook)
        self.golden = load_golden(EXAMPLES / "golden.yaml")
        self.handbook = build_assistant(handbook)
        self.groups_of = groups_of(handbook.directory)

    def ask(self) -> dict:
        """Every set asked once as the calibration stands: each set's correct count, the
        golden set's metrics on the original 99 and on the whole set."""
        from agent.evaluation import run_corpus_eval, run_eval

        out: dict = {}
        for name, (assistant, asked) in self.sets.items():
            report = asyncio.run(run_corpus_eval(assistant, name, "dev", asked))
            out[name] = sum(bool(o.correct) for o in report.outcomes)
        full = asyncio.run(run_eval(self.handbook, self.golden, self.groups_of))
        out["handbook"] = sum(r.correct for r in full.results)
        out["golden"] = full.metrics
        out["golden_original"] = full.original.metrics
        return out

    def close(self) -> None:
        for deps in self.deps:
            deps.close()


def _remember_query_vectors() -> None:
    """A query's vectors do not depend on the calibration: each is embedded once for the fit."""
    from agent.retrieval import Retriever

    embed = Retriever._embed
    memory: dict[tuple[int, str, tuple[str, ...]], dict[str, list[float]]] = {}

    def remembered(self: Retriever, query: str, embedders: list) -> dict[str, list[float]]:
        key = (id(self), query, tuple(e.name for e in embedders))
        if key not in memory:
            memory[key] = embed(self, query, embedders)
        return memory[key]

    Retriever._embed = remembered  # type: ignore[method-assign]


def clears_floors(run: dict) -> bool:
    full, original = run["golden"], run["golden_original"]
    return (
        all(full[k] >= v for k, v in FULL_FLOORS.items())
        and all(original[k] >= v for k, v in ORIGINAL_FLOORS.items())
        and full["over_refusal"] <= OVER_REFUSAL_CEILING
        and original["over_refusal"] <= OVER_REFUSAL_CEILING
    )


def corpora_correct(run: dict) -> int:
    return sum(v for k, v in run.items() if isinstance(v, int) and k != "handbook")


def fit(args: argparse.Namespace) -> None:
    from agent.calibration import Calibration

    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "runs.jsonl"
    done = {}
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            done[json.dumps(r["values"], sort_keys=True)] = r["run"]
    names = args.names.split(",") if args.names else list(_numbers(Calibration))
    chosen = {n: getattr(Calibration, n) for n in names}
    only = args.sets.split(",") if args.sets else None
    sets = Sets(args.data_dir, args.eval_dir, "dev", args.limit, only)

    def run(values: dict) -> dict:
        key = json.dumps(values, sort_keys=True)
        if key not in done:
            t0 = time.perf_counter()
            with mock.patch.multiple(Calibration, **values):
                done[key] = sets.ask()
            with log.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"values": values, "run": done[key]}) + "\n")
            print(
                f"  {key[:100]}: corpora {corpora_correct(done[key])}, handbook "
                f"{done[key]['handbook']}, floors {clears_floors(done[key])} "
                f"({time.perf_counter() - t0:.0f}s)",
                file=sys.stderr,
                flush=True,
            )
        return done[key]

    try:
        base = run(dict(chosen))
        for name in names:
            best, best_run = chosen[name], base
            for value in candidates(name, chosen[name], args.grid):
                r = run({**chosen, name: value})
                losses = [
                    best_run[k] - r[k] for k in r if isinstance(r[k], int) and k != "handbook"
                ]
                if (
                    corpora_correct(r) >= corpora_correct(best_run) + args.margin
                    and max(losses) <= 2
                    and clears_floors(r)
                ):
                    best, best_run = value, r
            if best != chosen[name]:
                print(f"{name}: {chosen[name]} -> {best}", file=sys.stderr, flush=True)
                chosen[name], base = best, best_run
        (args.out / "chosen.json").write_text(json.dumps(chosen, indent=1) + "\n")
    finally:
        sets.close()


def table(out: Path) -> str:
    """Each run against the first (the calibration as it stands): the number moved, the change
    in questions answered correctly per set, and whether the golden floors held."""
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    base = runs[0]
    sets = [k for k, v in base["run"].items() if isinstance(v, int)]
    lines = [
        "| number: value tried | " + " | ".join(sets) + " | golden floors |",
        "|---" * (len(sets) + 2) + "|",
    ]
    for r in runs[1:]:
        moved = [f"{k}: {v}" for k, v in r["values"].items() if v != base["values"][k]]
        deltas = [r["run"][k] - base["run"][k] for k in sets]
        cells = [f"{d:+d}" if d else "0" for d in deltas]
        held = "hold" if clears_floors(r["run"]) else "fall"
        lines.append(f"| {', '.join(moved)} | " + " | ".join(cells) + f" | {held} |")
    counts = ", ".join(f"{k} {base['run'][k]}" for k in sets)
    return "\n".join([*lines, "", f"answered correctly as it stands: {counts}"])


def _numbers(calibration: type) -> dict[str, object]:
    return {
        k: v
        for k, v in vars(calibration).items()
        if not k.startswith("_") and isinstance(v, (int, float, dict)) and not isinstance(v, bool)
        if isinstance(v, dict) or not math.isinf(v)
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for runs.jsonl")
    parser.add_argument("--data-dir", type=Path, help="the eval's data dir")
    parser.add_argument("--table", action="store_true", help="only print the table of --out")
    parser.add_argument("--eval-dir", type=Path, help="the folder that holds answers/")
    parser.add_argument("--limit", type=int, default=100, help="dev questions per set")
    parser.add_argument("--names", help="only these numbers, comma-separated, in this order")
    parser.add_argument("--sets", help="only these answer sets, comma-separated")
    parser.add_argument(
        "--grid",
        type=lambda s: tuple(float(f) for f in s.split(",")),
        default=GRID,
        help="multiples of each number to try, comma-separated",
    )
    parser.add_argument(
        "--margin",
        type=int,
        default=6,
        help="questions a move must gain (two moves that gained 3 and 4 of 585 dev questions lost "
        "5 of SQuAD's 200 test questions: 1%% of the dev questions asked is the least to trust)",
    )
    args = parser.parse_args()
    if args.table:
        print(table(args.out))
        return 0
    if args.data_dir is None:
        parser.error("--data-dir is needed to run the fit")
    from agent.corpora import default_eval_dir

    args.eval_dir = args.eval_dir or default_eval_dir()
    fit(args)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
