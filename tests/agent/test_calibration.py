"""The offline answer step's numbers live in one place, each with what set it: a weight written
inline in the reasoner could be moved to pass one question without anyone seeing it."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from agent.calibration import SEARCHED_ON_DEV, Calibration

ROOT = Path(__file__).resolve().parents[2]
# the modules whose weights and cut-offs decide what an offline answer quotes and when it refuses
REASONER = ["agent/extract.py", "agent/offline.py"]


def _inline_numbers(path: Path) -> list[str]:
    """Float literals other than 0 and 1 (an empty sum, a full share) and rounding tolerances,
    with their lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.name}:{node.lineno}: {node.value}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, float)
        and node.value not in (0.0, 1.0)
        and abs(node.value) >= 1e-3
    ]


def test_the_reasoner_writes_no_weight_inline() -> None:
    found = [n for f in REASONER for n in _inline_numbers(ROOT / f)]
    assert not found, f"move these into agent/calibration.py with what set them: {found}"


def test_the_check_finds_an_inline_weight(tmp_path: Path) -> None:
    module = tmp_path / "scoring.py"
    module.write_text("def score(x):\n    return 0.35 * x + 1.0\n", encoding="utf-8")
    assert _inline_numbers(module) == ["scoring.py:2: 0.35"]


def test_every_number_says_what_it_is() -> None:
    """Each attribute's line, or the comment block right above it, says what it does; each
    section's heading says what set its numbers."""
    lines = inspect.getsource(Calibration).splitlines()
    names = [n for n in vars(Calibration) if not n.startswith("_")]
    assert len(names) >= 40
    for name in names:
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{name} ="))
        said = "#" in lines[at] or lines[at - 1].strip().startswith("#")
        assert said, f"Calibration.{name} needs a comment saying what it does"
    headings = [line for line in lines if line.strip().startswith("# ---")]
    assert headings and all(
        "by hand" in h or "by data" in h or "read off" in h for h in headings
    ), "every section of Calibration says what set its numbers"


def test_what_the_dev_search_set_are_numbers_of_the_calibration() -> None:
    names = {n for n in vars(Calibration) if not n.startswith("_")}
    assert SEARCHED_ON_DEV and names >= SEARCHED_ON_DEV, SEARCHED_ON_DEV - names
