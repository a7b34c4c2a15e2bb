"""Who may read a file, from the source itself. First rule found wins:

1. Markdown front-matter ``acl: [hr]``
2. a sidecar ``<file>.meta.yaml`` (also carries title, owner, updated, url for PDFs and DOCX)
3. the nearest ``_access.yaml`` in the file's folder or above it, up to the ingested root
4. the ``--acl`` default given to ``footnote ingest``
5. nothing: admins only — never everybody.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ingest.errors import BadDocument
from ingest.parse import DEFAULT_LIMITS, safe_yaml
from ingest.settings import IngestSettings

SIDECAR = ".meta.yaml"
FOLDER_RULE = "_access.yaml"


def is_document(path: Path) -> bool:
    return not (path.name.startswith(("_", ".")) or path.name.endswith(SIDECAR))


def read_yaml(path: Path, limits: IngestSettings = DEFAULT_LIMITS) -> dict[str, Any]:
    """A metadata file as a mapping, within the YAML limits; never through a symbolic link
    (it could pull another file's contents into the title or the access list)."""
    if path.is_symlink():
        raise BadDocument(f"metadata file {path.name} is a symbolic link: not followed")
    try:
        data = safe_yaml(path.read_text(encoding="utf-8"), limits) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise BadDocument(f"unreadable metadata file {path.name}: {exc}") from exc
    if not isinstance(data, dict):
        raise BadDocument(f"metadata file {path.name} must be a YAML mapping")
    return data


def sidecar_meta(path: Path, limits: IngestSettings = DEFAULT_LIMITS) -> dict[str, Any]:
    side = path.with_name(path.name + SIDECAR)
    return read_yaml(side, limits) if side.exists() or side.is_symlink() else {}


def normalise_acl(value: object) -> list[str]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",")]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadDocument(f"acl must be a list of group names, got {value!r}")
    return sorted({_principal(v.strip()) for v in value if v.strip()})


def _principal(value: str) -> str:
    """Group names stay as readers carry them (``group:hr`` is ``hr``); ``user:<email>`` is
    lower-cased, as askers carry it."""
    if value[:5].lower() == "user:":
        return "user:" + value[5:].strip().lower()
    return value.removeprefix("group:")


def own_rule(
    path: Path,
    root: Path,
    front_matter: dict[str, Any],
    sidecar: dict[str, Any],
    limits: IngestSettings = DEFAULT_LIMITS,
) -> list[str] | None:
    """The file's own access rule (1–3 above), or None when it has none: then the ``--acl``
    default decides, or nobody but the admins reads it."""
    for meta in (front_matter, sidecar):
        if "acl" in meta:
            return normalise_acl(meta["acl"])
    folder = path.parent
    while True:
        rule = folder / FOLDER_RULE
        if rule.exists() or rule.is_symlink():
            return normalise_acl(read_yaml(rule, limits).get("acl", []))
        if folder == root or root not in folder.parents:
            break
        folder = folder.parent
    return None
