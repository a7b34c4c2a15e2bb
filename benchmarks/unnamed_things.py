"""Which things a question asks for does its answer seldom name? Read off the public answer sets'
**train** splits, written as the list ``unnamed_things`` of ``agent/patterns/en-unnamed.yaml``.

``questions.asked_thing`` takes the head of the noun phrase an English question opens with
("bonus" in "What bonus does someone rated Outstanding get?"), and the offline reasoner refuses
a unit that does not say it ("the thing asked for unsaid"). For most things that holds: an
answer about a bonus names the bonus. For some it does not: "What are the steps to …" is
answered by the steps, "What year did …" by a year, "What is the name of …" by the name. This
counts, for every answerable train question with evidence, whether the evidence (with its
document's title) states the asked thing, and lists the things asked at least ``--min-asked``
times whose evidence states them at most ``--max-named`` of the time: for those the gate does
not apply.

    python benchmarks/unnamed_things.py                 # prints the table
    python benchmarks/unnamed_things.py --write         # rewrites agent/patterns/en-unnamed.yaml
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from agent.corpora import DATASETS, default_eval_dir, split_of
from agent.questions import asked_thing
from ingest.languages import tokenize

OUT = Path(__file__).resolve().parents[1] / "agent" / "patterns" / "en-unnamed.yaml"


def counts(folder: Path, dataset: str) -> tuple[Counter[str], Counter[str]]:
    """(asked, named): per thing, the train questions that ask for it, and those whose evidence
    or title states it."""
    asked: Counter[str] = Counter()
    named: Counter[str] = Counter()
    for line in (folder / "questions.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        if not (row.get("answerable") and row.get("evidence")):
            continue
        if split_of(dataset, row.get("doc"), row["id"]) != "train":
            continue
        thing = asked_thing(row["question"])
        if not thing:
            continue
        said = set(tokenize(" ".join(row["evidence"]) + " " + (row.get("title") or ""), "en"))
        asked[thing] += 1
        named[thing] += bool(set(tokenize(thing, "en")) & said)
    return asked, named


def unnamed(
    asked: Counter[str], named: Counter[str], min_asked: int, max_named: float
) -> list[str]:
    return sorted(t for t, n in asked.items() if n >= min_asked and named[t] / n <= max_named)


def render(things: list[str], min_asked: int, max_named: float, sets: list[str]) -> str:
    head = (
        "# Things an English question asks for that its answer seldom names: for these, a unit\n"
        "# need not say the thing to answer (agent/questions.py, asks). Written by\n"
        f"# `python benchmarks/unnamed_things.py --write --min-asked {min_asked} --max-named "
        f"{max_named}`\n"
        f"# from the train splits of {', '.join(sets)}: asked at least {min_asked} times, named by\n"
        f"# the evidence or its title at most {max_named:.0%} of the time. Re-run it; do not edit.\n"
    )
    lines = [f"  - '{re.escape(t)}'" for t in things]
    return head + "unnamed_things:\n" + "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--min-asked", type=int, default=4)
    parser.add_argument("--max-named", type=float, default=0.2)
    parser.add_argument("--write", action="store_true", help=f"rewrite {OUT.name}")
    args = parser.parse_args()
    asked: Counter[str] = Counter()
    named: Counter[str] = Counter()
    sets = []
    for dataset in DATASETS:
        folder = args.eval_dir / "answers" / dataset
        if (folder / "questions.jsonl").exists():
            set_asked, set_named = counts(folder, dataset)
            asked.update(set_asked)
            named.update(set_named)
            sets.append(dataset)
    if not sets:
        raise SystemExit(
            f"no answer set under {args.eval_dir / 'answers'}: pass --eval-dir, the folder that "
            "holds answers/<set>/questions.jsonl"
        )
    for t, times in sorted(asked.items(), key=lambda x: (named[x[0]] / x[1], -x[1]))[:60]:
        print(f"{named[t] / times:5.2f} {times:5d}  {t}")
    things = unnamed(asked, named, args.min_asked, args.max_named)
    print(f"{len(things)} things: {', '.join(things)}")
    if args.write:
        OUT.write_text(render(things, args.min_asked, args.max_named, sets), encoding="utf-8")
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
