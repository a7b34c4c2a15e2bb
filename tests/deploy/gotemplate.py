"""A tiny renderer for the subset of Go templates (Helm flavour) the chart uses, so the chart can be
rendered and validated without the helm binary.

Supported: ``{{ pipeline }}`` with ``{{-``/``-}}`` trimming; ``if``/``else``/``end``;
``range $v := …`` and ``range $k, $v := …`` (``.`` rebinds to the element, ``$`` is the root);
values ``.A.b``, ``$``, ``$x.y``, ``"strings"``, numbers; functions ``quote``, ``toYaml``,
``nindent``, ``indent``, ``not``, ``default``. Anything else raises, so the chart cannot quietly
grow past what this renders. A printed path that does not exist raises too (a typo in values).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import yaml

ACTION = re.compile(r"\{\{(-?)\s*(.*?)\s*(-?)\}\}", re.S)


class Missing:
    """A key that is not in the values: false in ``if``, an error when printed."""

    def __init__(self, path: str):
        self.path = path

    def __bool__(self) -> bool:
        return False


def _tokens(src: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    for m in ACTION.finditer(src):
        text = src[pos : m.start()]
        if m.group(1):
            text = text.rstrip()
        out.append(("text", text))
        out.append(("action", m.group(2)))
        pos = m.end()
        if m.group(3):
            rest = src[pos:]
            pos += len(rest) - len(rest.lstrip())
    out.append(("text", src[pos:]))
    return out


def _parse(
    tokens: list[tuple[str, str]], i: int = 0, stop: tuple[str, ...] = ()
) -> tuple[list, int, str]:
    """A node list up to one of ``stop`` (``else``/``end``); returns (nodes, next index, stopper)."""
    nodes: list = []
    while i < len(tokens):
        kind, value = tokens[i]
        i += 1
        if kind == "text":
            nodes.append(("text", value))
            continue
        word = value.split(None, 1)[0] if value else ""
        if word in stop:
            return nodes, i, word
        if word == "if":
            body, i, why = _parse(tokens, i, ("else", "end"))
            other: list = []
            if why == "else":
                other, i, _ = _parse(tokens, i, ("end",))
            nodes.append(("if", value[2:].strip(), body, other))
        elif word == "range":
            m = re.fullmatch(r"range\s+(?:(\$\w+)\s*(?:,\s*(\$\w+))?\s*:=\s*)?(.+)", value, re.S)
            if not m:
                raise ValueError(f"unsupported range: {value}")
            body, i, _ = _parse(tokens, i, ("end",))
            nodes.append(("range", m.group(1), m.group(2), m.group(3), body))
        elif word in ("else", "end", "define", "template", "include", "with", "block"):
            raise ValueError(f"unsupported or unbalanced action: {{{{ {value} }}}}")
        else:
            nodes.append(("print", value))
    if stop:
        raise ValueError(f"missing {{{{ end }}}} (wanted one of {stop})")
    return nodes, i, ""


def _lookup(base, path: str, name: str):
    for part in [p for p in path.split(".") if p]:
        if isinstance(base, dict) and part in base:
            base = base[part]
        else:
            return Missing(name)
    return base


def _to_yaml(v) -> str:
    return yaml.safe_dump(v, default_flow_style=False, sort_keys=True).rstrip("\n")


def _quote(*args) -> str:
    return " ".join(json.dumps(_str(a)) for a in args)


def _str(v) -> str:
    if isinstance(v, Missing):
        raise KeyError(f"no value for {v.path}")
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        raise TypeError(f"cannot print a {type(v).__name__} without toYaml: {v!r}")
    return str(v)


FUNCTIONS = {
    "quote": _quote,
    "toYaml": _to_yaml,
    "nindent": lambda n, s: (
        "\n" + "\n".join(" " * int(n) + line if line else line for line in _str(s).split("\n"))
    ),
    "indent": lambda n, s: "\n".join(
        " " * int(n) + line if line else line for line in _str(s).split("\n")
    ),
    "not": lambda v: not v,
    "default": lambda d, v=None: v if v else d,
}


class Scope:
    def __init__(self, root: dict, dot, variables: dict):
        self.root, self.dot, self.vars = root, dot, variables

    def operand(self, word: str):
        if word.startswith('"'):
            return json.loads(word)
        if re.fullmatch(r"-?\d+", word):
            return int(word)
        if word == ".":
            return self.dot
        if word.startswith("."):
            return _lookup(self.dot, word, word)
        if word.startswith("$"):
            name, _, rest = word.partition(".")
            base = self.root if name == "$" else self.vars[name]
            return _lookup(base, rest, word)
        raise ValueError(f"unsupported operand: {word}")

    def pipeline(self, expr: str):
        value, first = None, True
        for command in expr.split("|"):
            words = shlex.split(command, posix=False)
            if words[0] in FUNCTIONS:
                args = [self.operand(w) for w in words[1:]]
                if not first:
                    args.append(value)
                value = FUNCTIONS[words[0]](*args)
            elif first and len(words) == 1:
                value = self.operand(words[0])
            else:
                raise ValueError(f"unsupported command: {command.strip()}")
            first = False
        return value


def _render(nodes: list, scope: Scope) -> str:
    out = []
    for node in nodes:
        kind = node[0]
        if kind == "text":
            out.append(node[1])
        elif kind == "print":
            out.append(_str(scope.pipeline(node[1])))
        elif kind == "if":
            out.append(_render(node[2] if scope.pipeline(node[1]) else node[3], scope))
        elif kind == "range":
            _, first, second, expr, body = node
            seq = scope.pipeline(expr)
            items = sorted(seq.items()) if isinstance(seq, dict) else list(enumerate(seq or []))
            for key, value in items:
                names = (
                    {first: value}
                    if first and not second
                    else {first: key, second: value}
                    if first
                    else {}
                )
                out.append(_render(body, Scope(scope.root, value, {**scope.vars, **names})))
    return "".join(out)


def render(source: str, values: dict, release: str = "footnote", chart: dict | None = None) -> str:
    chart = chart or {}
    root = {
        "Values": values,
        "Release": {"Name": release, "Namespace": "default", "Service": "Helm"},
        "Chart": {
            "Name": chart.get("name", ""),
            "Version": chart.get("version", ""),
            "AppVersion": chart.get("appVersion", ""),
        },
    }
    nodes, _, _ = _parse(_tokens(source))
    return _render(nodes, Scope(root, root, {}))


def deep_merge(base: dict, override: dict) -> dict:
    out = dict(base)
    for k, v in override.items():
        out[k] = (
            deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        )
    return out


def render_chart(
    chart_dir: Path, overrides: dict | None = None, release: str = "footnote"
) -> list[tuple[str, dict]]:
    """(template file, object) for every Kubernetes object the chart makes with ``values.yaml`` plus ``overrides``, like
    ``helm template``: files starting with ``_`` and non-YAML files are skipped, empty documents dropped."""
    chart = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
    values = deep_merge(
        yaml.safe_load((chart_dir / "values.yaml").read_text()) or {}, overrides or {}
    )
    objects = []
    for path in sorted((chart_dir / "templates").glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        text = render(path.read_text(), values, release, chart)
        objects += [(path.name, doc) for doc in yaml.safe_load_all(text) if doc]
    return objects
