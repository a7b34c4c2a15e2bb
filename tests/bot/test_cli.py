"""The `footnote` CLI as a new user meets it: the installed entry point run as its own process.

Each test starts the real command (models, Qdrant Edge, the answer loop) over a small index built
once for this module, and reads only what a person at a shell sees: stdout, stderr, the exit
code, and how fast Ctrl-C works.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

from agent.settings import PROVIDER_EXTRAS, missing_extra
from bot import bad_settings
from bot.cli import main as footnote_main
from bot.settings import Settings
from ingest.backends import vector_dims
from ingest.edge_index import EdgeIndex

ROOT = Path(__file__).resolve().parents[2]
HR = ROOT / "examples" / "handbook" / "hr"
ENTRY = Path(sys.executable).with_name("footnote")  # the console script pip installed
STATUS = re.compile(r"^(answered|partial|unknown|needs_confirmation|error) · ", re.M)


def command() -> list[str]:
    return [str(ENTRY)] if ENTRY.exists() else [sys.executable, "-m", "bot.cli"]


def environment(data_dir: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no FOOTNOTE_* variable of the machine leaks in, no COLUMNS."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(data_dir.parent),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONUNBUFFERED": "1",
        "PYTHONIOENCODING": "utf-8",
        "FOOTNOTE_DATA_DIR": str(data_dir),
        **extra,
    }


def footnote(
    *args: str, data_dir: Path, stdin: str = "", timeout: float = 180, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command(), *args],
        cwd=ROOT,
        env=environment(data_dir, **env),
        input=stdin,
        capture_output=True,
        encoding="utf-8",
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, embedders) -> Path:
    """A data folder holding two open HR documents, indexed with the real embedders."""
    from bot.app import build_deps

    docs = tmp_path_factory.mktemp("docs")
    for name in ("faq-2024.html", "faq-2024.html.meta.yaml", "leave-policy-2026.md"):
        shutil.copy(HR / name, docs / name)
    data_dir = tmp_path_factory.mktemp("cli") / "data"
    deps = build_deps(Settings(data_dir=data_dir))
    deps.__dict__["embedders"] = embedders
    try:
        report = deps.ingester.ingest(docs)
    finally:
        deps.close()
    assert len(report.added) == 2 and not report.failed, report
    return data_dir


# ------------------------------------------------------------------------ a bad setting
@pytest.mark.parametrize(
    ("variable", "value", "accepted"),
    [
        ("FOOTNOTE_SERVER__PORT", "abc", "use a whole number"),
        (
            "FOOTNOTE_LLM__PROVIDER",
            "foo",
            "use one of 'openai', 'openai_like', 'azure', 'anthropic' or 'cohere'",
        ),
        ("FOOTNOTE_INGEST__CHUNK_TOKENS", "-5", "use a number greater than 0"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_variable_and_what_it_accepts(
    tmp_path, variable, value, accepted
):
    done = footnote("search", "vacation", data_dir=tmp_path / "data", **{variable: value})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [f"configuration error: {variable}={value!r} is not accepted; {accepted}"]
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.parametrize("provider", ["anthropic", "azure", "openai_like", "cohere"])
def test_a_provider_whose_extra_is_not_installed_names_the_extra_to_install(tmp_path, provider):
    """requirements.lock alone carries no LLM client: choosing a provider without its extra stops
    at start with the one line that installs it, not with an ImportError at the first question."""
    extra, module = PROVIDER_EXTRAS[provider]
    assert missing_extra(provider) is None  # installed here (the dev lock has every extra)
    # Python's own way to make a module absent: None in sys.modules, set before Footnote starts.
    start = (
        f"import sys; sys.modules[{module!r}] = None; "
        "from bot.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", start, "search", "vacation"],
        cwd=ROOT,
        env=environment(tmp_path / "data", FOOTNOTE_LLM__PROVIDER=provider),
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"configuration error: FOOTNOTE_LLM__PROVIDER={provider!r} is not accepted; its client "
        f"is the optional {extra!r} extra, not installed: pip install --require-hashes --no-deps "
        f"-r requirements-{extra}.lock (or pip install 'footnote[{extra}]')"
    ]
    assert (ROOT / f"requirements-{extra}.lock").is_file()  # the lock the line names exists


def test_a_postgresql_url_without_its_driver_names_the_extra_and_hides_the_password(tmp_path):
    """requirements.lock alone has no PostgreSQL driver (SQLite is the default): a postgresql://
    URL stops at start with the line that installs the extra, and the URL, a secret, is not shown."""
    start = (
        "import sys; sys.modules['psycopg'] = None; "
        "from bot.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    url = "postgresql://footnote:s3cret@db.internal:5432/footnote"
    done = subprocess.run(
        [sys.executable, "-c", start, "search", "vacation"],
        cwd=ROOT,
        env=environment(tmp_path / "data", FOOTNOTE_DATABASE__URL=url),
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("configuration error: FOOTNOTE_DATABASE__URL")
    assert lines[0].endswith(
        "its driver is the optional 'postgres' extra, not installed: pip install "
        "--require-hashes --no-deps -r requirements-postgres.lock (or pip install 'footnote[postgres]')"
    )
    assert "s3cret" not in done.stderr and "db.internal" not in done.stderr
    assert (ROOT / "requirements-postgres.lock").is_file()


def test_a_missing_setting_is_named_and_the_secret_beside_it_is_not_echoed(tmp_path):
    done = footnote(
        "search", "vacation", data_dir=tmp_path / "data", FOOTNOTE_SLACK__BOT_TOKEN="xoxb-s3cret"
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "configuration error: FOOTNOTE_SLACK__SIGNING_SECRET is not set; "
        "it is required once any FOOTNOTE_SLACK__* variable is set"
    ]
    assert "s3cret" not in done.stderr + done.stdout


def test_a_list_setting_that_is_not_json_says_how_to_write_it(monkeypatch, capsys):
    monkeypatch.setenv("FOOTNOTE_EMBEDDING__MODELS", "minilm")
    assert footnote_main(["search", "vacation"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("configuration error: FOOTNOTE_EMBEDDING__MODELS='minilm' ")
    assert 'JSON, e.g. ["minilm", "use"]' in err and len(err.strip().splitlines()) == 1


class _Inner(BaseModel):
    size: int = Field(1, ge=1)


class _Section(BaseModel):
    token: SecretStr
    inner: _Inner = _Inner()


class _OtherSettings(BaseSettings):
    """Settings laid out unlike Footnote's: the mapping reads whatever model it is given."""

    model_config = SettingsConfigDict(env_prefix="ACME_", env_nested_delimiter="__")
    section: _Section | None = None
    tags: list[str] = []


def test_the_variable_is_read_from_the_settings_model_not_a_list_of_names(monkeypatch):
    monkeypatch.setenv("ACME_SECTION__TOKEN", "hunter2")
    monkeypatch.setenv("ACME_SECTION__INNER__SIZE", "0")
    with pytest.raises(ValidationError) as bad:
        _OtherSettings()
    assert bad_settings.describe(bad.value, _OtherSettings) == [
        "ACME_SECTION__INNER__SIZE='0' is not accepted; use a number of at least 1"
    ]
    monkeypatch.delenv("ACME_SECTION__INNER__SIZE")
    monkeypatch.setenv("ACME_TAGS", "red")
    with pytest.raises(SettingsError) as unparsable:
        _OtherSettings()
    [line] = bad_settings.describe(unparsable.value, _OtherSettings)
    assert line.startswith("ACME_TAGS='red' is not accepted; write it as JSON")
    assert "hunter2" not in line


# ------------------------------------------------------------------------ who is asking
def test_ask_says_on_stderr_who_it_acts_as_and_keeps_json_clean(ingested):
    done = footnote("ask", "How many vacation days can I carry over?", "--json", data_dir=ingested)
    assert done.returncode == 0, done.stderr
    assert "acting as alice (Alice Moreau · hr, managers); --user NAME acts as someone else" in (
        done.stderr
    )
    assert json.loads(done.stdout)["status"]  # stdout is the Answer and nothing else


def test_ask_ends_its_process_at_once_with_everything_written_and_the_index_free(ingested):
    """`footnote ask` ends with os._exit once the answer is out (bot.cli.process.end_process): the
    whole answer is printed, its trace is kept, and the index is free for the next process."""
    import sqlite3

    def traces() -> int:  # 0 before any turn of this data dir made the table
        with contextlib.closing(sqlite3.connect(ingested / "traces.sqlite")) as db:
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'traces'").fetchone():
                return 0
            return int(db.execute("SELECT COUNT(*) FROM traces").fetchone()[0])

    before = traces()
    for _ in range(2):
        done = footnote("ask", "How many vacation days can I carry over?", data_dir=ingested)
        assert done.returncode == 0, done.stderr
        assert STATUS.search(done.stdout), done.stdout  # the last line printed is there
    assert traces() == before + 2


def test_without_the_sample_directory_ask_needs_user(tmp_path, monkeypatch, capsys):
    company = tmp_path / "people.yaml"
    company.write_text("users:\n  alice: {name: Alice Other, groups: [admins]}\n")
    monkeypatch.setenv("FOOTNOTE_DIRECTORY_FILE", str(company))
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    assert footnote_main(["ask", "How many vacation days?"]) == 2
    err = capsys.readouterr().err
    assert "pass --user NAME" in err and str(company) in err


# ------------------------------------------------------------------------ the index
def test_a_locked_index_says_who_holds_it_and_never_advises_deleting_it(tmp_path, embedders):
    data_dir = tmp_path / "data"
    held = EdgeIndex(
        Settings(data_dir=data_dir).index_dir,
        vector_dims(embedders, Settings().embedding.sentence_vectors),
    )  # this process plays the running `footnote serve`
    try:
        asked = footnote("ask", "How many vacation days?", data_dir=data_dir)
        ingesting = footnote("ingest", str(HR), data_dir=data_dir)
    finally:
        held.close()
    for done in (asked, ingesting):
        assert done.returncode == 2, done.stderr
        message = done.stderr.strip().splitlines()[-1]
        assert "in use by another process" in message and "footnote serve" in message
        assert "FOOTNOTE_QDRANT__URL" in message
        assert "delete" not in done.stderr.lower() and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "stdin"),
    [(("ask", "How many vacation days?"), ""), (("search", "vacation"), ""), (("chat",), "hi\n")],
)
def test_asking_an_empty_index_says_to_ingest_first(tmp_path, args, stdin):
    done = footnote(*args, data_dir=tmp_path / "data", stdin=stdin)
    assert done.returncode == 1
    assert "error: nothing is ingested yet: run footnote ingest examples/handbook" in done.stderr
    assert "I don't know" not in done.stdout and "no passages" not in done.stdout


def test_feedback_export_writes_cases_that_eval_cases_runs(ingested, tmp_path):
    from bot.app import build_deps
    from bot.reports.feedback import CitedDocument, FeedbackRecord, FeedbackStore, TurnRecord
    from ingest.settings import DatabaseSettings

    deps = build_deps(Settings(data_dir=ingested))
    try:  # the export checks each cited document against the reviewer's access to the index
        [leave] = [d for d in deps.index.documents() if d.endswith("leave-policy-2026.md")]
    finally:
        deps.close()
    store = FeedbackStore.open(DatabaseSettings(), ingested)  # where `footnote serve` records
    store.record_turn(
        TurnRecord(
            turn_id="cli-turn-1",
            platform="slack",
            conversation="slack:T:D1",
            user_id="alice",
            groups=("hr", "managers"),
            channel_kind="dm",
            question="How many vacation days can I carry over?",
            status="answered",
            answer="Five [1].",
            citations=(CitedDocument(leave, "Leave policy"),),
        )
    )
    store.record_feedback(FeedbackRecord("cli-turn-1", "alice", "down", "outdated"))
    store.close()
    cases = tmp_path / "cases.yaml"
    export = footnote(
        "feedback", "export", "--since", "1d", "--reviewer", "alice", "--out", str(cases),
        data_dir=ingested,
    )  # fmt: skip
    assert export.returncode == 0, export.stderr
    assert "wrote 1 cases (1 👎, 0 👍)" in export.stdout
    assert "Five" not in cases.read_text(encoding="utf-8")
    run = footnote("eval", "--cases", str(cases), "--failures", data_dir=ingested)
    assert run.returncode == 0, run.stderr
    assert "full set (1)" in run.stdout and "feedback" in run.stdout
    assert "original" not in run.stdout  # none of the golden set's own questions
    missing = footnote("eval", "--cases", str(tmp_path / "none.yaml"), data_dir=ingested)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_privacy_forget_and_purge_say_how_many_they_deleted(tmp_path):
    from bot.reports.feedback import FeedbackRecord, FeedbackStore, TurnRecord, ago
    from ingest.settings import DatabaseSettings

    data_dir = tmp_path / "data"
    store = FeedbackStore.open(DatabaseSettings(), data_dir)
    for turn_id, user, at in [
        ("a1", "alice", ago(0)),
        ("a2", "alice", ago(40)),
        ("b1", "bob", ago(40)),
    ]:
        store.record_turn(
            TurnRecord(turn_id, "teams", "c", user, (), "dm", "q", "answered", "a", at=at)
        )
    store.record_feedback(FeedbackRecord("a1", "alice", "up"))
    store.close()
    forget = footnote(
        "privacy", "forget", "--user", "alice@northwind.example", data_dir=data_dir,
        FOOTNOTE_REDIS__KEY_PREFIX=f"footnote-test-cli-{os.getpid()}:",
    )  # fmt: skip
    assert forget.returncode == 0, forget.stderr
    assert "forgot alice:" in forget.stdout
    assert "2  turns" in forget.stdout and "1  feedback records" in forget.stdout
    purge = footnote("privacy", "purge", data_dir=data_dir, FOOTNOTE_PRIVACY__RETENTION_DAYS="30")
    assert "deleted 1 turns and 0 feedback records older than 30 days" in purge.stdout


def test_search_piped_keeps_every_line_whole(ingested):
    done = footnote("search", "carry over unused vacation days", "-k", "3", data_dir=ingested)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 9, done.stdout  # heading, text and link of each passage
    # a line cut at 80 columns would continue without the indent
    assert all(re.match(r"\d+\. |   \S", line) for line in lines), done.stdout
    links = lines[2::3]
    assert max(len(line) for line in links) > 80
    assert all(Path(line.strip().partition("#")[0]).is_file() for line in links)


# ------------------------------------------------------------------------ tickets and chat
def test_chat_asks_to_file_a_ticket_and_a_question_instead_is_answered_not_swallowed(ingested):
    typed = [
        "Open a ticket: VPN drops every hour",
        "How many vacation days can I carry over?",  # not a y/N answer: the next question
        "Open a ticket: the printer on floor 2 is jammed",
        "y",
    ]
    done = footnote("chat", "--user", "bob", data_dir=ingested, stdin="\n".join(typed) + "\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count("File the ticket? [y/N] ") == 2
    statuses = STATUS.findall(out)
    assert len(statuses) == 3, out  # both tickets and the question in between
    assert statuses[0] == statuses[2] == "needs_confirmation" != statuses[1]
    assert "no ticket was filed" in out
    assert re.search(r"Filed \S+: the printer on floor 2 is jammed", out)
    assert out.index("no ticket was filed") < list(STATUS.finditer(out))[1].start()


def test_chat_reads_back_the_number_of_the_ticket_it_filed(ingested):
    typed = ["Open a ticket: the kiln room door sticks", "y", "What was the ticket number?"]
    done = footnote("chat", "--user", "bob", data_dir=ingested, stdin="\n".join(typed) + "\n")
    assert done.returncode == 0, done.stderr
    filed = re.search(r"Filed (\S+): the kiln room door sticks", done.stdout)
    assert filed, done.stdout
    after = done.stdout[filed.end() :]
    assert STATUS.findall(after) == ["answered"] and filed.group(1) in after, after


def stuck(process: subprocess.Popen) -> str:
    """Where a process that should have ended is: each thread's kernel wait, then every
    thread's Python stack (faulthandler prints them on SIGABRT), for the failure message."""
    waits = []
    with contextlib.suppress(OSError):  # which signals it ignores, blocks and catches
        status = Path(f"/proc/{process.pid}/status").read_text().splitlines()
        waits += [line for line in status if line.startswith(("SigBlk", "SigIgn", "SigCgt"))]
    for task in Path(f"/proc/{process.pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            name = (task / "comm").read_text().strip()
            waits.append(f"{task.name} {name}: {(task / 'wchan').read_text().strip()}")
    process.send_signal(signal.SIGABRT)
    process.wait(30)
    stacks = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
    return "\n".join([*waits, stacks[-6000:]])


def as_a_shell_starts_it() -> None:
    """In the child, before exec: Ctrl-C at its default and not blocked, as a shell at a
    terminal starts a foreground command. A child inherits an ignored or blocked SIGINT from
    the test process, whatever a library in it did, and would then never see the Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def test_ctrl_c_at_the_chat_prompt_exits_at_once(ingested):
    chat = subprocess.Popen(
        [*command(), "chat"],
        cwd=ROOT,
        env=environment(ingested, PYTHONFAULTHANDLER="1"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=as_a_shell_starts_it,
    )
    try:
        seen, deadline = b"", time.monotonic() + 180
        while b"you> " not in seen:
            assert time.monotonic() < deadline and chat.poll() is None, seen
            if select.select([chat.stdout], [], [], 1)[0]:
                seen += os.read(chat.stdout.fileno(), 4096)
        chat.send_signal(signal.SIGINT)
        try:  # stdin stays open, as at a terminal: closing it would end the chat by itself
            chat.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"`footnote chat` still runs 15 s after Ctrl-C at its prompt:\n{stuck(chat)}"
            )
        err = chat.stderr.read()
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
        for stream in (chat.stdin, chat.stdout, chat.stderr):
            stream.close()
    assert chat.returncode in (0, 130)
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err


# ------------------------------------------------------------------------ bench
@pytest.mark.parametrize("what", ["retrieval", "ingest"])
def test_bench_without_data_says_where_it_goes_and_fails(tmp_path, capsys, what):
    assert footnote_main(["bench", what, "--eval-dir", str(tmp_path / "eval")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'eval' / 'scifact' / 'corpus.jsonl'} is missing" in err
    assert "scifact/qrels/test.tsv" in err and "--eval-dir" in err


def test_bench_ingest_profile_takes_a_folder_and_says_what_is_wrong_with_one(tmp_path, capsys):
    missing = tmp_path / "no-such-folder"
    assert footnote_main(["bench", "ingest", "--profile", "--folder", str(missing)]) == 2
    assert f"--folder {missing} is not a folder of documents" in capsys.readouterr().err
    assert footnote_main(["bench", "ingest", "--folder", str(tmp_path)]) == 2
    assert "--folder goes with `footnote bench ingest --profile`" in capsys.readouterr().err


@pytest.mark.models  # `footnote bench` loads the embedders in its own process
def test_bench_shows_progress(tmp_path):
    scifact = tmp_path / "eval" / "scifact"
    (scifact / "qrels").mkdir(parents=True)
    abstracts = {
        "d1": "Vitamin D deficiency is linked to bone loss in older adults.",
        "d2": "Short sleep duration increases the risk of obesity in children.",
        "d3": "Coffee consumption is associated with a lower risk of type 2 diabetes.",
        "d4": "High salt intake raises blood pressure.",
    }
    claims = {"q1": ("vitamin D and bone loss", "d1"), "q2": ("salt and blood pressure", "d4")}
    (scifact / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in abstracts.items())
    )
    (scifact / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, (t, _) in claims.items())
    )
    (scifact / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, (_, d) in claims.items())
    )
    done = footnote(
        "bench", "retrieval", "--eval-dir", str(tmp_path / "eval"), data_dir=tmp_path / "data"
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for step, count in [
        ("BM25: 2 queries, scored once and timed 3×", "8/8"),
        ("Footnote: indexing 4 documents", "4/4"),
        ("Footnote: 2 queries, scored once and timed 3×", "8/8"),
    ]:
        assert f"{step} …" in out  # said as the step starts
        assert re.search(rf"{re.escape(step)}\s+\S+\s+{count}", out), out  # and its bar at the end
    assert "nDCG@10" in out


def test_report_gaps_and_a_digest_with_nowhere_to_post(tmp_path):
    """Nothing unanswered: the report needs no model; --post without a target names the setting."""
    import json

    from bot.reports.feedback import CitedDocument, FeedbackRecord, FeedbackStore, TurnRecord, ago
    from ingest.settings import DatabaseSettings

    data_dir = tmp_path / "data"
    store = FeedbackStore.open(DatabaseSettings(), data_dir)
    cited = (CitedDocument("handbook/hr/faq-2024.html", "HR FAQ (2024)"),)
    for turn_id, at in [("new", ago(1)), ("old", ago(20))]:
        store.record_turn(
            TurnRecord(turn_id, "slack", "c", "alice", ("hr",), "dm", f"q {turn_id}?", "answered",
                       "a", cited, at=at)
        )  # fmt: skip
        store.record_feedback(FeedbackRecord(turn_id, "alice", "down", "outdated"))
    store.close()
    gaps = footnote("report", "gaps", "--since", "7d", "--json", data_dir=data_dir)
    assert gaps.returncode == 0, gaps.stderr
    report = json.loads(gaps.stdout)
    assert (report["turns"], report["unanswered"], report["topics"]) == (1, 0, [])
    assert [o["question"] for o in report["outdated"]] == ["q new?"]
    text = footnote("report", "gaps", "--since", "30d", data_dir=data_dir)
    assert "2 questions asked, 0 the documents could not answer" in text.stdout
    assert "Answers marked outdated" in text.stdout and "q old?" in text.stdout
    post = footnote("report", "digest", "--post", data_dir=data_dir)
    assert post.returncode == 2 and "FOOTNOTE_DIGEST__SLACK_CHANNEL" in post.stderr


def test_digest_routes_are_added_listed_and_removed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FOOTNOTE_DATA_DIR", str(tmp_path / "data"))
    assert footnote_main(["digest", "routes"]) == 0
    assert "no routes" in capsys.readouterr().out
    assert (
        footnote_main(
            ["digest", "route", "--owner", "HR@x.example", "--slack-channel", "C0HR12345"]
        )
        == 0
    )
    assert (
        footnote_main(
            [
                "digest",
                "route",
                "--owner",
                "it@x.example",
                "--teams-conversation",
                "19:it@thread.tacv2",
            ]
        )
        == 0
    )
    assert "FOOTNOTE_DIGEST__TEAMS_SERVICE_URL" in capsys.readouterr().err
    assert (
        footnote_main(["digest", "route", "--owner", "ops@x.example", "--slack-channel", "#ops"])
        == 2
    )
    assert "not a channel id" in capsys.readouterr().err
    assert footnote_main(["digest", "routes"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split() for line in listed] == [
        ["hr@x.example", "slack", "C0HR12345"],
        ["it@x.example", "teams", "19:it@thread.tacv2"],
    ]
    assert footnote_main(["digest", "route", "--owner", "hr@x.example", "--remove"]) == 0
    assert footnote_main(["digest", "route", "--owner", "hr@x.example", "--remove"]) == 1
    capsys.readouterr()
    assert footnote_main(["digest", "routes"]) == 0
    assert "hr@x.example" not in capsys.readouterr().out
