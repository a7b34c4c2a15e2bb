"""The layers' imports, read from the source (every import: top level, in a function, or only
for type checking): ``bot → agent → ingest`` and never back, nothing of ours imports the
benchmarks, and no two modules of bot/, agent/ or ingest/ import each other by any path."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("bot", "agent", "ingest")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every module name ``path`` imports; ``from a.b import c`` names ``a.b.c`` as well, since
    ``c`` may be a module (names that are not modules are dropped by the caller)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def modules() -> dict[str, Path]:
    return {module_name(p): p for layer in LAYERS for p in sorted((ROOT / layer).rglob("*.py"))}


def import_graph() -> dict[str, set[str]]:
    """Module → the modules of bot/, agent/ and ingest/ it imports (packages' ``__init__`` only
    when named: importing ``a.b.c`` runs ``a.b``'s too, but that is no dependency on it)."""
    mods = modules()
    return {name: {m for m in imported(path) if m in mods} - {name} for name, path in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_by_a_circle():
    """A circle means two modules are one room in two files: ``links`` and ``signin`` both
    showing pages, ``index`` and ``sparse`` sharing the vector type. Move what both need down."""
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    ("layer", "above"),
    [
        ("ingest", ("agent", "bot", "benchmarks")),
        ("agent", ("bot", "benchmarks")),
        ("bot", ("benchmarks",)),
    ],
)
def test_imports_go_one_way(layer, above):
    """bot → agent → ingest: no module of a lower layer imports a higher one, settings included;
    the benchmarks measure the product and are not part of it (``footnote bench`` finds them
    through an entry point)."""
    wrong = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in (ROOT / layer).rglob("*.py")
        for name in imported(path)
        if name.split(".")[0] in above
    }
    assert not wrong
