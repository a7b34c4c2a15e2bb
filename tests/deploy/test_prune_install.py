"""scripts/prune_install.py, the step the image runs after `pip install`: every rule still matches
the installed packages, and MiniLM (OpenVINO) and Chinese segmentation (jieba) give the same
results from a pruned copy of those packages as from the installed ones.

The copy is made of hard links, so pruning it deletes nothing from this venv; a subprocess puts
it first on its path, so `import openvino` and `import jieba` load the pruned packages."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.models
PACKAGES = ("openvino", "jieba")
CHINESE = "公司的年假政策是什么？员工每年有多少天带薪休假，未休的假期可以结转到下一年吗。"


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "prune_install", ROOT / "scripts/prune_install.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def installed_site() -> Path:
    spec = importlib.util.find_spec("openvino")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent.parent


@pytest.fixture(scope="module")
def pruned(tmp_path_factory) -> tuple[Path, int]:
    """A hard-linked copy of the installed packages, pruned; and the bytes pruning freed."""
    site = tmp_path_factory.mktemp("site")
    for package in PACKAGES:
        shutil.copytree(installed_site() / package, site / package, copy_function=os.link)
    return site, script().prune(site)


def test_every_rule_matches_an_installed_file():
    """A new OpenVINO or jieba release that moves a file fails here, not silently in the image."""
    prune = script()
    found = prune.targets(installed_site())  # raises naming any rule that matches nothing
    assert len(found) >= len(prune.RULES)


def test_pruning_frees_most_of_what_the_packages_take(pruned):
    site, freed = pruned
    assert freed > 100 * 2**20, freed
    left = {p.relative_to(site).as_posix() for p in site.rglob("*")}
    assert "openvino/libs/libopenvino_intel_cpu_plugin.so" in left
    assert not any(name.startswith("openvino/libs/libopenvino_intel_gpu") for name in left)


def test_minilm_and_jieba_give_the_same_results_from_the_pruned_packages(pruned, tmp_path):
    site, _ = pruned
    texts = ["How do I reset my VPN password?", "Как оформить командировку?", CHINESE]
    # Both ways MiniLM starts: a graph compiled in memory, and one kept as IR in a cache folder.
    run = f"""
import json, sys
import jieba, openvino
from ingest.minilm import MiniLMEmbedder
assert openvino.__file__.startswith({str(site)!r}) and jieba.__file__.startswith({str(site)!r})
texts = {texts!r}
plain = MiniLMEmbedder(threads=1).embed(texts)
cached = MiniLMEmbedder(threads=1, cache_dir=__import__("pathlib").Path({str(tmp_path)!r})).embed(texts)
json.dump({{"plain": plain.tolist(), "cached": cached.tolist(),
           "words": jieba.lcut({CHINESE!r})}}, sys.stdout)
"""
    done = subprocess.run(
        [sys.executable, "-c", run],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        encoding="utf-8",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)

    import jieba

    from ingest.minilm import MiniLMEmbedder

    want = MiniLMEmbedder(threads=1).embed(texts)
    np.testing.assert_allclose(got["plain"], want, atol=3e-3)
    np.testing.assert_allclose(got["cached"], want, atol=3e-3)
    assert got["words"] == jieba.lcut(CHINESE)
