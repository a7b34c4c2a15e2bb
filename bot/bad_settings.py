"""A bad ``FOOTNOTE_*`` variable, told as one line that names it and what it accepts.

pydantic reports a field path (``server.port``) and its own wording; a person at a shell set an
environment variable. The path is turned back into that variable by walking the settings model
itself (prefix, nested delimiter, nested sections), so new settings and new sections need no
change here. The value is echoed unless the field holds a secret.
"""

from __future__ import annotations

import json
import os
import re
import types
from collections.abc import Iterator, Mapping
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsError

# The types pydantic-settings reads from an environment variable as JSON.
_JSON_ORIGINS = (list, tuple, set, frozenset, dict)


def describe(
    exc: ValidationError | SettingsError,
    model: type[BaseSettings],
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """One line per bad variable (usually one), each naming the variable and the fix."""
    environ = os.environ if environ is None else environ
    if isinstance(exc, ValidationError):
        lines: dict[str, str] = {}
        for error in exc.errors(include_url=False):
            name, field = _variable(error["loc"], model)
            lines.setdefault(name, _line(name, field, error))
        return list(lines.values())
    return _unparsable(exc, model, environ)


# -- ValidationError --------------------------------------------------------------------------
def _variable(loc: tuple[int | str, ...], model: type[BaseSettings]) -> tuple[str, Any]:
    """The environment variable for a pydantic error location, and the field it sets.

    Only nested sections get ``__`` parts: a list or dict is one JSON variable, so an index or a
    key inside it names that variable. Locations pydantic adds for unions and validators are not
    field names of the current section and are passed over."""
    names: list[str] = []
    section: type[BaseModel] | None = model
    field = None
    for part in loc:
        if section is None:
            break
        if not isinstance(part, str) or part not in section.model_fields:
            continue
        field = section.model_fields[part]
        alias = field.validation_alias if isinstance(field.validation_alias, str) else None
        names.append(alias or part)
        section = _section(field.annotation)
    prefix = model.model_config.get("env_prefix", "")
    delimiter = model.model_config.get("env_nested_delimiter") or "__"
    return (prefix + delimiter.join(names)).upper(), field


def _section(annotation: Any) -> type[BaseModel] | None:
    """The settings section a field holds (``SlackSettings | None`` → SlackSettings), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType):
        for arg in get_args(annotation):
            if (found := _section(arg)) is not None:
                return found
    return None


def _line(name: str, field: Any, error: Mapping[str, Any]) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "missing" and isinstance(error["loc"][-1], int):  # a tuple with too few items
        size = len(get_args(field.annotation)) if field is not None else 0
        return (
            f"{name}={_short(error.get('input'))} is not accepted; use a JSON list of {size} values"
        )
    if kind == "missing":
        section = name.rpartition("__")[0]
        needed = f" once any {section}__* variable is set" if section else ""
        return f"{name} is not set; it is required{needed}"
    shown = "(hidden)" if _is_secret(field) else _short(error.get("input"))
    return f"{name}={shown} is not accepted; {_accepted(kind, ctx, error['msg'])}"


def _accepted(kind: str, ctx: Mapping[str, Any], message: str) -> str:
    if kind == "literal_error":
        return f"use one of {ctx['expected']}"
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return "use a whole number"
    if kind in ("float_parsing", "float_type"):
        return "use a number"
    if kind in ("bool_parsing", "bool_type"):
        return "use true or false"
    bounds = {
        "greater_than": ("greater than", "gt"),
        "greater_than_equal": ("of at least", "ge"),
        "less_than": ("less than", "lt"),
        "less_than_equal": ("of at most", "le"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"use a number {words} {ctx[key]}"
    # Our own validators already word their message; pydantic prefixes it.
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _is_secret(field: Any) -> bool:
    return field is not None and SecretStr in set(_leaves(field.annotation))


def _leaves(annotation: Any) -> Iterator[Any]:
    yield annotation
    for arg in get_args(annotation):
        yield from _leaves(arg)


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- SettingsError: a list, tuple or dict variable that is not JSON ---------------------------
def _unparsable(
    exc: SettingsError, model: type[BaseSettings], environ: Mapping[str, str]
) -> list[str]:
    prefix = model.model_config.get("env_prefix", "")
    delimiter = model.model_config.get("env_nested_delimiter") or "__"
    top = re.search(r'field "([^"]+)"', str(exc))
    stem = (prefix + (top.group(1) if top else "")).upper()
    lines = []
    for name, value in sorted(environ.items()):
        upper = name.upper()
        if not (upper == stem or upper.startswith(stem + delimiter.upper())):
            continue
        annotation = _annotation(upper.removeprefix(prefix.upper()).split(delimiter), model)
        if annotation is None or not _is_json(annotation):
            continue
        try:
            json.loads(value)
        except ValueError:
            lines.append(
                f"{upper}={_short(value)} is not accepted; write it as JSON, "
                f"e.g. {_json_example(annotation)}"
            )
    return lines or [f"cannot read the {stem}{delimiter}* variables: {exc}"]


def _annotation(parts: list[str], model: type[BaseModel]) -> Any:
    section: type[BaseModel] | None = model
    annotation = None
    for part in parts:
        if section is None:
            return None
        field = section.model_fields.get(part.lower())
        if field is None:
            return None
        annotation = field.annotation
        section = _section(annotation)
    return annotation


def _is_json(annotation: Any) -> bool:
    return any(
        get_origin(a) in _JSON_ORIGINS
        or a in _JSON_ORIGINS
        or (isinstance(a, type) and issubclass(a, BaseModel))
        for a in _leaves(annotation)
    )


def _json_example(annotation: Any) -> str:
    choices = [v for a in _leaves(annotation) if get_origin(a) is Literal for v in get_args(a)]
    if any(get_origin(a) is dict or a is dict for a in _leaves(annotation)):
        return '{"key": "value"}'
    if choices:
        return json.dumps(choices[:2]) + f" (each one of {', '.join(map(repr, choices))})"
    return '["first", "second"]'
