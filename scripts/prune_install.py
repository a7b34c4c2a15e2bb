"""Delete the parts of installed packages that Footnote never loads (~110 MB of a runtime venv).

    python scripts/prune_install.py [--venv DIR | --site DIR] [--dry-run]

A wheel cannot be edited and no smaller official build of these packages exists, so the image
(deploy/Dockerfile) runs this right after ``pip install``, and anyone may run it on a runtime venv:

- OpenVINO runs MiniLM on the CPU from a graph Footnote builds itself (ingest/minilm.py) and keeps
  as IR: the GPU and NPU plugins, the GPU kernel cache, every model reader but IR's (ONNX,
  TensorFlow, TF Lite, PaddlePaddle, PyTorch, JAX, GGUF), the C++ headers and the model converter
  (ovc) are never loaded.
- jieba segments Chinese with its dictionary and HMM (jieba.cut): its part-of-speech tagger
  (posseg), its PaddlePaddle LAC model (lac_small) and its keyword extraction (analyse) are never
  imported.

Every rule must match an installed file: a release that renames or drops one fails here, so the
list is looked at again instead of silently deleting nothing. tests/deploy/test_prune_install.py
prunes a copy of the installed packages and checks that MiniLM and jieba give the same results.
Reinstalling a package (``pip install --force-reinstall``) brings its files back.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

# (glob under site-packages, why it can go)
RULES: tuple[tuple[str, str], ...] = (
    ("openvino/libs/libopenvino_intel_gpu_plugin.so", "GPU plugin: Footnote compiles for CPU"),
    ("openvino/libs/libopenvino_intel_npu_plugin.so", "NPU plugin"),
    ("openvino/libs/cache.json", "the GPU plugin's kernel tuning cache"),
    ("openvino/libs/libopenvino_onnx_frontend.so*", "ONNX reader: the graph is built in OpenVINO"),
    ("openvino/libs/libopenvino_tensorflow_frontend.so*", "TensorFlow reader"),
    ("openvino/libs/libopenvino_tensorflow_lite_frontend.so*", "TF Lite reader"),
    ("openvino/libs/libopenvino_paddle_frontend.so*", "PaddlePaddle reader"),
    ("openvino/libs/libopenvino_pytorch_frontend.so*", "PyTorch reader"),
    ("openvino/libs/libopenvino_jax_frontend.so*", "JAX reader"),
    ("openvino/libs/libopenvino_gguf_frontend.so*", "GGUF reader"),
    ("openvino/frontend/onnx", "Python side of the ONNX reader"),
    ("openvino/frontend/tensorflow", "Python side of the TensorFlow reader"),
    ("openvino/frontend/paddle", "Python side of the PaddlePaddle reader"),
    ("openvino/frontend/pytorch", "Python side of the PyTorch reader"),
    ("openvino/frontend/jax", "Python side of the JAX reader"),
    ("openvino/include", "C++ headers"),
    ("openvino/tools", "the model converter (ovc)"),
    ("jieba/posseg", "part-of-speech tagging"),
    ("jieba/lac_small", "PaddlePaddle LAC segmentation (paddle mode)"),
    ("jieba/analyse", "keyword extraction (TF-IDF, TextRank)"),
)


def site_packages(venv: Path) -> Path:
    found = sorted((venv / "lib").glob("python3*/site-packages"))
    if not found:
        raise SystemExit(f"{venv} is not a venv: no lib/python3*/site-packages")
    return found[0]


def disk(path: Path) -> int:
    """Bytes ``path`` takes on disk (blocks, as du counts), a folder with all it holds."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(f.lstat().st_blocks * 512 for f in files)


def targets(site: Path) -> list[Path]:
    """What the rules match under ``site``; fails naming every rule that matches nothing."""
    found, unmatched = [], []
    for pattern, _why in RULES:
        matches = sorted(site.glob(pattern))
        if not matches:
            unmatched.append(pattern)
        found.extend(matches)
    if unmatched:
        raise SystemExit(
            f"nothing in {site} matches {', '.join(unmatched)}: a new release moved it; "
            "update RULES in scripts/prune_install.py (or reinstall: it may be pruned already)"
        )
    return found


def prune(site: Path, dry_run: bool = False) -> int:
    """Delete every target under ``site``; returns the bytes freed (or that would be)."""
    freed = 0
    for path in targets(site):
        freed += disk(path)
        print(f"{'would delete' if dry_run else 'deleted'} {path.relative_to(site)}")
        if dry_run:
            continue
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    return freed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--venv", type=Path, help="a venv (default: the one running this)")
    where.add_argument("--site", type=Path, help="a site-packages folder")
    parser.add_argument("--dry-run", action="store_true", help="list, delete nothing")
    args = parser.parse_args()
    if args.site:
        site = args.site
    elif args.venv:
        site = site_packages(args.venv)
    else:
        site = site_packages(Path(sys.prefix))
    freed = prune(site, args.dry_run)
    print(f"{'would free' if args.dry_run else 'freed'} {freed / 2**20:.0f} MB in {site}")


if __name__ == "__main__":
    main()
