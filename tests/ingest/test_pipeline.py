"""Ingestion end to end on real files, real embedders and a real Qdrant Edge folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bot.cli import main as cli_main
from bot.settings import Settings
from ingest.edge_index import EdgeIndex
from ingest.index import vector_dims
from ingest.pipeline import Ingester, point_id
from ingest.settings import IngestSettings
from ingest.sparse import BM25Encoder


def make_ingester(tmp_path: Path, embedders, **ingest) -> Ingester:
    settings = Settings(data_dir=tmp_path / "data", ingest=IngestSettings(**ingest))
    index = EdgeIndex(
        settings.index_dir, vector_dims(embedders, settings.embedding.sentence_vectors)
    )
    return Ingester(index, embedders, BM25Encoder(), settings.ingest, settings.admin_groups)


def md(title: str, body: str, acl: str = "['*']") -> str:
    return f"---\ntitle: {title}\nacl: {acl}\nupdated: 2026-01-01\n---\n# {title}\n\n{body}\n"


def test_rerun_skips_unchanged_replaces_changed_deletes_removed(tmp_path, embedders):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(
        md("Alpha", "## One\n\nFirst part about budgets.\n\n## Two\n\nSecond part about travel.")
    )
    (docs / "b.md").write_text(md("Beta", "Beta talks about parking."))
    ing = make_ingester(tmp_path, embedders)

    first = ing.ingest(docs)
    assert sorted(first.added) == ["docs/a.md", "docs/b.md"] and not first.failed
    assert ing.ingest(docs).unchanged == ["docs/a.md", "docs/b.md"]

    (docs / "a.md").write_text(md("Alpha", "Only one short part now, about lunch."))
    (docs / "b.md").unlink()
    third = ing.ingest(docs)
    assert third.updated == ["docs/a.md"] and third.deleted == ["docs/b.md"]
    chunks = ing.index.chunks("docs/a.md", ["*"])
    assert len(chunks) == 1 and "lunch" in chunks[0]["text"]
    assert set(ing.index.documents()) == {"docs/a.md"}
    assert ing.index.count() == 1  # stale chunks of the old version are gone, not just hidden


def test_an_access_change_alone_relabels_the_points_without_embedding_again(tmp_path, embedders):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.txt").write_text("A note about the office plants.\n\n" * 3)
    (docs / "memo.md").write_text("# Memo\n\n## One\n\nBudgets.\n\n## Two\n\nTravel.\n")  # no rule
    ing = make_ingester(tmp_path, embedders)
    ing.ingest(docs)
    assert ing.index.chunks("docs/note.txt", ["admins"])  # no rule: admins only
    assert not ing.index.chunks("docs/note.txt", ["engineering"])
    embedded: list[int] = []
    embed = ing.embed_chunks
    ing.embed_chunks = lambda chunks: embedded.append(len(chunks)) or embed(chunks)  # type: ignore[method-assign]

    (docs / "_access.yaml").write_text("acl: [engineering]\n")
    report = ing.ingest(docs)

    assert report.readers_changed == ["docs/memo.md", "docs/note.txt"] and not report.updated
    assert embedded == []  # nothing embedded again
    for doc in ("docs/memo.md", "docs/note.txt"):
        chunks = ing.index.chunks(doc, ["engineering"])
        assert chunks and all(c["acl"] == ["engineering"] for c in chunks)
        assert not ing.index.chunks(doc, ["sales"])
    assert ing.ingest(docs).unchanged == ["docs/memo.md", "docs/note.txt"]  # state relabelled too

    (docs / "note.txt").write_text("A note about the office plants, watered on Fridays.")
    assert ing.ingest(docs).updated == ["docs/note.txt"] and embedded  # an edit embeds again


def test_an_index_from_before_body_hashes_writes_an_access_change_whole(tmp_path, embedders):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.txt").write_text("A note about the office plants.")
    ing = make_ingester(tmp_path, embedders)
    ing.ingest(docs)
    ing.index.set_payloads([(point_id("docs/note.txt", 0), {"body_hash": ""})])  # as before
    (docs / "_access.yaml").write_text("acl: [engineering]\n")
    report = ing.ingest(docs)
    assert report.updated == ["docs/note.txt"] and not report.readers_changed
    assert ing.index.chunks("docs/note.txt", ["engineering"])


def test_bad_files_are_reported_and_the_rest_is_indexed(tmp_path, embedders):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text(md("Good", "This one is fine."))
    (docs / "corrupt.pdf").write_bytes(b"%PDF-1.4\n" + os.urandom(2000))
    (docs / "empty.txt").write_text("")
    (docs / "junk.md").write_bytes(b"\x00\x01\x02binary\x00junk" * 50)
    (docs / "huge.txt").write_text("word " * 400_000)
    (docs / "gone.md").symlink_to(docs / "missing.md")
    ing = make_ingester(tmp_path, embedders, max_file_mb=1.0)
    report = ing.ingest(docs)
    reasons = dict(report.failed)
    assert report.added == ["docs/good.md"]
    assert set(reasons) == {
        "docs/corrupt.pdf",
        "docs/empty.txt",
        "docs/junk.md",
        "docs/huge.txt",
        "docs/gone.md",
    }
    assert "PDF" in reasons["docs/corrupt.pdf"]
    assert reasons["docs/empty.txt"] == "empty file"
    assert reasons["docs/junk.md"] == "not a text file"
    assert reasons["docs/huge.txt"].startswith("too large")
    assert reasons["docs/gone.md"].startswith("a symbolic link")  # never read through


@pytest.mark.models  # `footnote ingest` builds its own embedders from the settings
def test_cli_exit_code_says_some_files_failed(tmp_path, monkeypatch, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text(md("Ok", "Fine text."))
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    assert cli_main(["ingest", str(docs)]) == 0
    (docs / "bad.pdf").write_bytes(b"not a pdf at all")
    assert cli_main(["ingest", str(docs)]) == 1
    out = capsys.readouterr().out
    assert "bad.pdf" in out and "failed 1" in out


KILL_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from bot.app import build_deps
    from bot.settings import Settings

    deps = build_deps(Settings(data_dir=Path(sys.argv[2])))
    deps.ingester.batch_chunks = 1  # write each document as soon as it is embedded
    stop_after = int(sys.argv[3])  # written documents; 0: never stop
    written = 0
    def on_file(doc_id, status):
        global written
        print(status, doc_id, flush=True)
        written += status in ("added", "updated")
        if written == stop_after:
            sys.stdin.readline()  # wait here, mid-batch, for the SIGKILL: the test's chosen point
    deps.ingester.ingest(Path(sys.argv[1]), on_file=on_file)
    print("done", flush=True)
    """
)


@pytest.mark.slow
@pytest.mark.models  # the ingest runs in a child process, with its own embedders
def test_a_kill_mid_batch_leaves_each_document_fully_old_or_fully_new(tmp_path):
    docs, data = tmp_path / "docs", tmp_path / "data"
    docs.mkdir()

    def write(version: str, paragraphs: int) -> None:
        for i in range(12):
            body = "\n\n".join(
                f"## Part {p}\n\n{version} paragraph {p} of document {i}. "
                + "Filler words about policies. " * 30
                for p in range(paragraphs)
            )
            (docs / f"doc{i:02d}.md").write_text(md(f"Doc {i}", body))

    def run(kill_after: int | None) -> list[str]:
        """The ingest's lines; with ``kill_after``, it waits after that many documents are
        written (reading its stdin) and is SIGKILLed there, however fast the machine."""
        proc = subprocess.Popen(
            [sys.executable, "-c", KILL_SCRIPT, str(docs), str(data), str(kill_after or 0)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            encoding="utf-8",
            cwd=Path(__file__).resolve().parents[2],
        )
        seen: list[str] = []
        deadline = time.time() + 240
        for line in proc.stdout:
            seen.append(line.strip())
            if (
                kill_after is not None
                and sum(s.startswith(("added", "updated")) for s in seen) >= kill_after
            ):
                proc.send_signal(signal.SIGKILL)
                break
            if time.time() > deadline:
                proc.kill()
                break
        proc.wait(timeout=60)
        proc.stdin.close()
        return seen

    write("v1", paragraphs=4)
    assert run(None)[-1] == "done"
    write("v2", paragraphs=1)  # every document changes and shrinks
    seen = run(kill_after=5)
    assert "done" not in seen and sum(s.startswith("updated") for s in seen) == 5

    index = EdgeIndex(data / "index", {"minilm": 384, "use": 512, "use_sentences": 512})
    states = []
    for i in range(12):
        chunks = index.chunks(f"docs/doc{i:02d}.md", ["*"])
        versions = {c["text"].split("paragraph")[0].split()[-1] for c in chunks}
        assert len(versions) == 1, f"doc{i:02d} mixes versions: {versions}"
        (version,) = versions
        assert len(chunks) == chunks[0]["doc_chunks"], f"doc{i:02d} is missing chunks"
        states.append(version)
    index.close()
    assert "v1" in states and "v2" in states  # the kill really fell mid-batch


def test_default_acl_setting_opens_files_without_a_rule_to_those_groups(
    tmp_path, embedders, monkeypatch
):
    """``FOOTNOTE_INGEST__DEFAULT_ACL`` means what ``footnote ingest --acl`` means; --acl wins."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "note.txt").write_text("A note about the office plants.")
    (docs / "ruled.md").write_text(md("Ruled", "Only engineering reads this.", "[engineering]"))
    monkeypatch.setenv("FOOTNOTE_INGEST__DEFAULT_ACL", '["hr"]')
    settings = Settings(data_dir=tmp_path / "data")
    assert settings.ingest.default_acl == ["hr"]
    index = EdgeIndex(
        settings.index_dir, vector_dims(embedders, settings.embedding.sentence_vectors)
    )
    ing = Ingester(index, embedders, BM25Encoder(), settings.ingest, settings.admin_groups)
    ing.ingest(docs)
    assert ing.index.chunks("docs/note.txt", ["hr"])
    assert not ing.index.chunks("docs/note.txt", ["engineering"])
    assert not ing.index.chunks("docs/ruled.md", ["hr"])  # a file's own rule still decides
    assert ing.ingest(docs, default_acl=["finance"]).readers_changed == ["docs/note.txt"]
    assert ing.index.chunks("docs/note.txt", ["finance"])
    assert not ing.index.chunks("docs/note.txt", ["hr"])


def test_bm25_parameters_are_recorded_in_the_index_and_a_change_asks_for_a_reingest(
    tmp_path, embedders
):
    from agent.retrieval import Retriever
    from agent.settings import RetrievalSettings
    from ingest.errors import ConfigError
    from ingest.sparse import INDEX_KEY

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(md("Alpha", "Budgets and travel."))
    ing = make_ingester(tmp_path, embedders)
    ing.ingest(docs)
    assert ing.index.metadata()[INDEX_KEY] == {"k1": 0.9, "b": 0.4, "avgdl": 120.0}
    Retriever(ing.index, embedders, BM25Encoder(), RetrievalSettings())  # same values: fine

    changed = RetrievalSettings(bm25_k1=1.2)
    other = Ingester(ing.index, embedders, BM25Encoder.from_settings(changed), ing.settings, [])
    (docs / "b.md").write_text(md("Beta", "Plants."))
    with pytest.raises(ConfigError) as at_ingest:
        other.ingest(docs)
    assert "FOOTNOTE_RETRIEVAL__BM25_K1=0.9" in str(at_ingest.value)
    assert "re-ingest" in str(at_ingest.value)
    assert "docs/b.md" not in ing.index.documents()  # nothing was written with the new k1
    with pytest.raises(ConfigError, match="BM25_K1=0.9.*re-ingest"):
        Retriever(ing.index, embedders, BM25Encoder.from_settings(changed), changed)

    assert ing.ingest(docs).added == ["docs/b.md"]  # the recorded values still ingest
    for doc_id in list(ing.index.documents()):
        ing.index.delete_document(doc_id)
    other.ingest(docs)  # an emptied index takes the new values
    assert ing.index.metadata()[INDEX_KEY]["k1"] == 1.2


def test_chunk_and_sentence_vectors_come_from_one_pass(tmp_path, embedders):
    """Each stored sentence vector is the sentence's own; the chunk's is pooled from them."""
    import numpy as np

    from ingest.chunk import chunk_document
    from ingest.sentences import sentences

    docs = tmp_path / "docs"
    docs.mkdir()
    body = (
        "## Per diem\n\nEmployees get 66 EUR a day. Contractors get none. Meals are paid at cost."
    )
    (docs / "t.md").write_text(md("Travel", body))
    ing = make_ingester(tmp_path, embedders)
    doc = ing.load(docs / "t.md", docs, "docs/t.md", [])
    (chunk,) = chunk_document(doc, max_tokens=200, overlap=0)
    (point,) = ing.embed_chunks([chunk])
    (use,) = [e for e in embedders if e.name == "use"]
    said = sentences(chunk.body)
    assert len(said) == 3
    np.testing.assert_allclose(point.dense["use_sentences"], use.embed(said), atol=1e-5)
    assert float(np.dot(point.dense["use"], use.embed([chunk.text])[0])) > 0.9


def test_ingest_says_how_many_files_only_admins_can_read_and_how_to_open_them(
    tmp_path, embedders, capsys
):
    from bot.app import build_deps
    from bot.cli.ingesting import run_ingest

    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "ruled.md").write_text(md("Ruled", "The kiln is fired on Thursdays.", "[pottery]"))
    (docs / "plain.txt").write_text("The glaze shelf is restocked monthly.")
    (docs / "notes" / "draft.md").write_text("# Draft\n\nThe wheel room opens at nine.\n")
    deps = build_deps(Settings(data_dir=tmp_path / "data"))
    deps.__dict__["embedders"] = embedders
    try:
        capsys.readouterr()
        report = run_ingest(deps, docs, None)
        out = " ".join(capsys.readouterr().out.split())
        assert report.admins_only == ["docs/notes/draft.md", "docs/plain.txt"]
        assert (
            "2 of 3 files have no access rule: only admins can read them — add `--acl GROUPS` "
            "or an `_access.yaml`" in out
        )
        (docs / "notes" / "_access.yaml").write_text("acl: [pottery]\n")
        run_ingest(deps, docs, None)  # a rerun says it again for what is still unruled
        assert "1 of 3 files has no access rule: only admins can read it" in " ".join(
            capsys.readouterr().out.split()
        )
        report = run_ingest(deps, docs, ["pottery"])  # --acl: every file has readers
        assert report.admins_only == [] and "no access rule" not in capsys.readouterr().out
    finally:
        deps.close()


def test_a_worker_planned_file_with_no_access_rule_is_reported_too(tmp_path, embedders):
    """``--workers N``: the plan carries it from the worker to the writer's report."""
    from ingest.pipeline import IngestReport

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "plain.txt").write_text("The glaze shelf is restocked monthly.")
    (docs / "ruled.md").write_text(md("Ruled", "The kiln is fired on Thursdays.", "[pottery]"))
    ing = make_ingester(tmp_path, embedders)
    report = IngestReport()
    for name in ("plain.txt", "ruled.md"):
        doc = ing.load(docs / name, docs, f"docs/{name}", [])
        ing.apply(ing.plan(doc, None), report, lambda doc_id, status: None)
    assert report.admins_only == ["docs/plain.txt"] and len(report.added) == 2
    ing.index.close()


def test_given_a_dict_an_ingest_adds_up_the_seconds_of_each_stage(tmp_path, embedders):
    """What `footnote bench ingest` prints: where an ingest's time went, stage by stage."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(md("Alpha", "## One\n\nBudgets.\n\n## Two\n\nTravel by rail."))
    (docs / "b.md").write_text(md("Beta", "Beta talks about parking."))
    ing = make_ingester(tmp_path, embedders)
    assert ing.stages is None  # off unless asked for: an ingest times nothing by default
    ing.stages = {}
    report = ing.ingest(docs)
    encoders = {f"encoder {e.name}" for e in embedders}
    read_ahead = {"parse", "chunk"}  # on a thread of their own, beside the encoders
    one_after_another = {
        "sentences",
        "encoders, all at once",
        "sparse and payload",
        "index write",
        "index optimize",
    }
    assert set(ing.stages) == read_ahead | one_after_another | encoders
    assert all(s > 0 for s in ing.stages.values())
    assert sum(ing.stages[s] for s in one_after_another) <= report.seconds
    assert sum(ing.stages[s] for s in read_ahead) <= report.seconds
    # the encoders run at the same time: each within the time of both together
    assert all(ing.stages[e] <= ing.stages["encoders, all at once"] for e in encoders)
    assert ing.chunks_written == report.chunks
    ing.ingest(docs)  # unchanged: nothing parsed into chunks again, nothing written
    assert ing.chunks_written == report.chunks


def test_files_are_read_ahead_while_the_encoders_work(tmp_path, embedders):
    """The last file is parsed while the first one's chunks are still being embedded: the
    embedding waits for it, so without reading ahead it would wait in vain."""
    import threading

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a", "b", "c"):
        (docs / f"{name}.md").write_text(md(name.upper(), f"Text about {name}."))
    ing = make_ingester(tmp_path, embedders)
    ing.batch_chunks = 1  # every document embedded and written on its own
    last_read, load, embed = threading.Event(), ing.load, ing.embed_chunks
    read_during_embedding: list[bool] = []

    def loading(path, *args):
        doc = load(path, *args)
        if path.name == "c.md":
            last_read.set()
        return doc

    def embedding(chunks):
        if not read_during_embedding:  # a.md, the first batch
            read_during_embedding.append(last_read.wait(timeout=60))
        return embed(chunks)

    ing.load, ing.embed_chunks = loading, embedding  # type: ignore[method-assign]
    report = ing.ingest(docs)
    assert read_during_embedding == [True]
    assert report.added == ["docs/a.md", "docs/b.md", "docs/c.md"]


def test_a_fault_reading_ahead_is_raised_by_the_ingest_and_the_reader_stops(tmp_path, embedders):
    import threading

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a", "b", "c"):
        (docs / f"{name}.md").write_text(md(name.upper(), f"Text about {name}."))
    ing = make_ingester(tmp_path, embedders)
    load = ing.load

    def loading(path, *args):
        if path.name == "b.md":
            raise PermissionError(13, "Permission denied", str(path))
        return load(path, *args)

    ing.load = loading  # type: ignore[method-assign]
    with pytest.raises(PermissionError):
        ing.ingest(docs)
    for thread in [t for t in threading.enumerate() if t.name == "read-ahead"]:
        thread.join(timeout=60)  # ends once it sees the ingest stopped reading
        assert not thread.is_alive()
