"""Size of the runtime install: a fresh venv from requirements.lock alone, as the image builds it.

    python scripts/install_size.py [--lock requirements.lock] [--top 25] [--keep DIR]
    python scripts/install_size.py --venv DIR      # measure an existing venv, build nothing

Builds the venv in a temporary folder with the Makefile's own steps (``pip install
--require-hashes --no-deps -r LOCK``, then the project itself, editable), then prints the venv's
total size (what ``du -s`` says) and the largest installed distributions; then runs
scripts/prune_install.py on it, as the image does, and prints both again. A distribution's size
is the disk its RECORD's files take (bytecode included), so a package that spreads over several top-level folders
(numpy and numpy.libs) counts once, under its own name. ``make size`` runs it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from importlib.metadata import Distribution
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MB = 1024 * 1024


def build(venv: Path, lock: Path) -> None:
    """The Makefile's install steps, so the figure is the one a user and the image get."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "--require-hashes", "--no-deps", "-r", str(lock)], check=True)
    subprocess.run([*pip, "--no-deps", "--no-build-isolation", "-e", str(ROOT)], check=True)


def tree_bytes(path: Path) -> int:
    """Bytes on disk under ``path``, counted as ``du`` counts them (allocated blocks)."""
    out = subprocess.run(["du", "-sk", str(path)], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[0]) * 1024


def site_packages(venv: Path) -> Path:
    found = sorted((venv / "lib").glob("python3*/site-packages"))
    if not found:
        raise SystemExit(f"{venv} is not a venv: no lib/python3*/site-packages")
    return found[0]


def distribution_sizes(site: Path) -> list[tuple[str, str, int]]:
    """(name, version, bytes) of each distribution installed in ``site``, largest first."""
    sizes = []
    for info in sorted(site.glob("*.dist-info")):
        dist = Distribution.at(info)
        total = 0
        for file in dist.files or []:
            path = Path(dist.locate_file(file))
            if path.is_file():
                total += path.stat().st_blocks * 512  # what du counts: many small files cost blocks
        sizes.append((dist.metadata["Name"], dist.version, total))
    return sorted(sizes, key=lambda row: row[2], reverse=True)


def report(venv: Path, top: int) -> None:
    site = site_packages(venv)
    sizes = distribution_sizes(site)
    print(f"venv {venv}: {tree_bytes(venv) / MB:.0f} MB on disk ({len(sizes)} distributions)")
    print(f"{'MB':>7}  distribution")
    for name, version, size in sizes[:top]:
        print(f"{size / MB:7.1f}  {name} {version}")
    rest = sum(size for _, _, size in sizes[top:])
    print(f"{rest / MB:7.1f}  the other {max(len(sizes) - top, 0)}")


def prune_and_report(venv: Path, top: int) -> None:
    """The same figures after the step the image runs (scripts/prune_install.py)."""
    print()
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "prune_install.py"), "--venv", str(venv)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    print("after scripts/prune_install.py (what the image keeps):")
    report(venv, top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", type=Path, default=ROOT / "requirements.lock")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--venv", type=Path, help="measure this venv instead of building one")
    parser.add_argument("--keep", type=Path, help="build the venv here and keep it")
    args = parser.parse_args()
    if args.venv:
        report(args.venv, args.top)
        return
    if args.keep:
        build(args.keep, args.lock)
        report(args.keep, args.top)
        prune_and_report(args.keep, args.top)
        return
    with tempfile.TemporaryDirectory(prefix="footnote-size-") as tmp:
        venv = Path(tmp) / "venv"
        build(venv, args.lock)
        report(venv, args.top)
        prune_and_report(venv, args.top)


if __name__ == "__main__":
    main()
