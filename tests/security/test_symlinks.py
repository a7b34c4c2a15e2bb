"""Ingest never reads through a symbolic link: not out of the folder (a link to the host's
``/etc/passwd`` beside an ``_access.yaml`` open to everyone was published), and not within it
either (a link in a public folder to a file in ``hr/`` would publish it under the public rule).
Each link is reported as skipped, naming it; what an earlier run published through one is
deleted. No model: the seeded stand-in embedder of the crash tests makes the vectors.
"""

from __future__ import annotations

from pathlib import Path

from ingest.edge_index import EdgeIndex
from ingest.pipeline import Ingester
from ingest.settings import IngestSettings
from ingest.sparse import BM25Encoder
from tests.security.test_crash_narrowing import DIMS, EMBEDDERS

HOST_SECRET = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
SALARIES = "# Salary bands\n\nGrade 7 earns between 91,000 and 104,000 a year.\n"


def company(tmp_path: Path) -> tuple[Path, Path]:
    """A folder to ingest (pub/ open to everyone, hr/ to hr) and, outside it, a host file."""
    host = tmp_path / "host"
    (host / "etc").mkdir(parents=True)
    (host / "etc" / "passwd").write_text(HOST_SECRET)
    root = tmp_path / "company"
    (root / "pub").mkdir(parents=True)
    (root / "hr").mkdir()
    (root / "pub" / "_access.yaml").write_text("acl: ['*']\n")
    (root / "hr" / "_access.yaml").write_text("acl: [hr]\n")
    (root / "pub" / "welcome.md").write_text("# Welcome\n\nThe office opens at nine.\n")
    (root / "hr" / "salaries.md").write_text(SALARIES)
    return root, host


def ingester(tmp_path: Path) -> Ingester:
    index = EdgeIndex(tmp_path / "index", DIMS)
    return Ingester(index, EMBEDDERS, BM25Encoder(), IngestSettings(), ["admins"])


def everything_everyone_reads(ing: Ingester) -> str:
    return "\n".join(
        c["text"] for d in ing.index.documents() for c in ing.index.chunks(d, ["engineering"])
    )


def test_links_out_of_the_folder_and_within_it_are_skipped_and_reported(tmp_path):
    root, host = company(tmp_path)
    (root / "pub" / "passwd.txt").symlink_to(host / "etc" / "passwd")  # out of the folder
    (root / "pub" / "bands.md").symlink_to(root / "hr" / "salaries.md")  # within it
    (root / "pub" / "etc").symlink_to(host / "etc", target_is_directory=True)  # a folder
    ing = ingester(tmp_path)

    report = ing.ingest(root)

    reasons = dict(report.failed)
    assert set(reasons) == {"company/pub/passwd.txt", "company/pub/bands.md", "company/pub/etc"}
    for doc_id, reason in reasons.items():
        assert reason.startswith("a symbolic link (") and "not followed" in reason, doc_id
    assert str(host / "etc" / "passwd") in reasons["company/pub/passwd.txt"]  # names the target
    assert sorted(report.added) == ["company/hr/salaries.md", "company/pub/welcome.md"]
    public = everything_everyone_reads(ing)
    assert "office opens at nine" in public  # the rest of the batch is there
    assert "root:x:0:0" not in public and "91,000" not in public
    assert ing.index.chunks("company/hr/salaries.md", ["hr"])  # the real file, its own rule


def test_a_file_published_before_and_now_a_link_is_deleted(tmp_path):
    root, host = company(tmp_path)
    secret = root / "pub" / "passwd.txt"
    secret.write_text(HOST_SECRET)  # what an earlier run indexed through the link
    ing = ingester(tmp_path)
    assert "company/pub/passwd.txt" in ing.ingest(root).added
    secret.unlink()
    secret.symlink_to(host / "etc" / "passwd")

    report = ing.ingest(root)

    assert report.deleted == ["company/pub/passwd.txt"]
    assert "root:x:0:0" not in everything_everyone_reads(ing)
    assert "company/pub/passwd.txt" not in ing.index.documents()


def test_a_file_named_to_ingest_through_a_linked_folder_is_skipped(tmp_path):
    root, host = company(tmp_path)
    (root / "pub" / "etc").symlink_to(host / "etc", target_is_directory=True)
    (host / "etc" / "motd.txt").write_text("Host message of the day: maintenance at midnight.\n")
    ing = ingester(tmp_path)

    report = ing.ingest(
        root, files=[root / "pub" / "etc" / "motd.txt", root / "pub" / "welcome.md"]
    )

    assert report.added == ["company/pub/welcome.md"]
    assert [d for d, _ in report.failed] == ["company/pub/etc/motd.txt"]
    assert "maintenance at midnight" not in everything_everyone_reads(ing)


def test_a_metadata_file_that_is_a_link_is_not_read(tmp_path):
    root, host = company(tmp_path)
    (host / "etc" / "secret.yaml").write_text("title: db password is hunter2\n")
    (root / "pub" / "welcome.md.meta.yaml").symlink_to(host / "etc" / "secret.yaml")
    ing = ingester(tmp_path)

    report = ing.ingest(root)

    assert "symbolic link" in dict(report.failed)["company/pub/welcome.md"]
    assert "company/pub/welcome.md" not in ing.index.documents()
