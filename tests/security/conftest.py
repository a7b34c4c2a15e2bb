"""The permanent attack suite: every hole found when Footnote was attacked stays tested here.

Fixtures: the handbook, the real assistant and the running bot of the end-to-end suite (the same
loopback harness serves the Slack and Teams probes), a Redis server of our own, the corpus as the index holds it, the directory's people, and
a tally of the ACL probes that is printed at the end of the run.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.identity.directory import FileDirectory, Person
from tests.conftest import ROOT
from tests.e2e.conftest import (  # noqa: F401  (fixtures)
    assistant,
    bot,
    handbook,
    own_redis,
    redis_prefix,
)
from tests.security.leaks import Corpus

DIRECTORY = ROOT / "examples" / "directory.yaml"


@dataclass
class ProbeTally:
    """Probes run and leaks found, per probe class, in the order the classes ran."""

    rows: dict[str, tuple[int, int]]

    def add(self, kind: str, probes: int, leaks: int) -> None:
        done, found = self.rows.get(kind, (0, 0))
        self.rows[kind] = (done + probes, found + leaks)


_TALLY = pytest.StashKey[ProbeTally]()


@pytest.fixture(scope="session")
def probe_tally(request: pytest.FixtureRequest) -> ProbeTally:
    return request.config.stash.setdefault(_TALLY, ProbeTally({}))


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    tally = config.stash.get(_TALLY, None)
    if not tally or not tally.rows:
        return
    terminalreporter.section("ACL probes")
    for kind, (probes, leaks) in tally.rows.items():
        terminalreporter.write_line(f"ACL probes {kind:<28} {probes:>5} probes  {leaks:>3} leaks")
    total = sum(p for p, _ in tally.rows.values())
    leaked = sum(n for _, n in tally.rows.values())
    terminalreporter.write_line(f"ACL probes {'all':<28} {total:>5} probes  {leaked:>3} leaks")


@pytest.fixture(scope="session")
def corpus(handbook) -> Corpus:  # noqa: F811
    """The handbook's documents, titles, texts and ACLs as the index holds them."""
    return Corpus.from_index(handbook.index)


@pytest.fixture(scope="session")
def people() -> dict[str, Person]:
    return FileDirectory.load(DIRECTORY).people


# One document per kind of reader, for tests that run a command over an index of their own (the
# session's handbook index is held open by this process, and Qdrant Edge allows one per folder).
FEW_DOCUMENTS = [
    "hr/salary-bands.pdf", "hr/salary-bands.pdf.meta.yaml", "hr/leave-policy-2026.md",
    "hr/faq-2024.html", "hr/faq-2024.html.meta.yaml", "managers/performance-review-guide.pdf",
    "managers/performance-review-guide.pdf.meta.yaml", "drafts/reorg-plan-draft.md",
]  # fmt: skip


@pytest.fixture(scope="session")
def few_documents(tmp_path_factory, embedders) -> Path:
    """Five handbook documents (open, HR, managers, admins only) ingested into a Qdrant Edge
    folder, closed: copy the data folder and run a command over it."""
    from bot.app import build_deps
    from bot.settings import Settings

    root = tmp_path_factory.mktemp("few") / "handbook"
    for name in FEW_DOCUMENTS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "examples" / "handbook" / name, root / name)
    data_dir = root.parent / "data"
    deps = build_deps(Settings(data_dir=data_dir))
    deps.__dict__["embedders"] = embedders
    try:
        report = deps.ingester.ingest(root)
    finally:
        deps.close()
    assert len(report.added) == 5 and not report.failed, report
    return data_dir
