"""Metrics and traces come out of REAL turns and a REAL ingest through the product: the handbook
index, the offline reasoner, the answer loop. Metrics are read back by scraping ``/metrics`` over
HTTP; spans with the OpenTelemetry SDK's in-memory exporter, and over OTLP/HTTP from a loopback
collector stand-in."""

from __future__ import annotations

import asyncio
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import redis.asyncio as aioredis
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client.parser import text_string_to_metric_families

from agent.assistant import build_assistant
from agent.settings import TelemetrySettings
from agent.telemetry import build_telemetry
from agent.turns import Turn
from bot.app import build_deps
from bot.identity.directory import FileDirectory
from bot.settings import Settings
from bot.web.links import link_secret
from tests.conftest import HANDBOOK, ROOT
from tests.deploy.conftest import free_port, ops_server

DIRECTORY = FileDirectory.load(ROOT / "examples" / "directory.yaml")
QUESTIONS = {
    "answered": ("alice", "How many vacation days can I carry over?"),
    "unknown": ("alice", "What is our policy on pet insurance?"),
    "smalltalk": ("bob", "Good morning!"),
}


def turn(user: str, text: str) -> Turn:
    person = DIRECTORY.find(user)
    return Turn(user_id=user, text=text, groups=person.groups, display_name=person.name)


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.fixture(scope="module")
def turns(handbook_deps):
    """Three real turns through the assistant, with telemetry exporting to memory."""
    exporter = InMemorySpanExporter()
    telemetry = build_telemetry(TelemetrySettings(), exporter=exporter)
    assistant = build_assistant(handbook_deps, telemetry=telemetry)
    answers = {}
    for want, (user, text) in QUESTIONS.items():
        answers[want] = asyncio.run(assistant.answer(turn(user, text)))
        assert answers[want].status == want, answers[want].text
    return telemetry, exporter.get_finished_spans(), answers


async def test_metrics_scraped_after_real_turns(handbook_deps, turns):
    telemetry, _, answers = turns
    client = aioredis.Redis.from_url("redis://127.0.0.1:6379/0", socket_connect_timeout=0.5)
    async with ops_server(handbook_deps, telemetry.metrics, client) as (url, session):
        resp = await session.get(url + "/metrics")
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain")
        got = samples(await resp.text())
    await client.aclose()
    for status in ("answered", "unknown", "smalltalk"):
        assert got[("footnote_turns_total", (("status", status),))] == 1
    for status in ("partial", "needs_confirmation", "error"):
        assert got[("footnote_turns_total", (("status", status),))] == 0  # present from the start
    assert got[("footnote_turn_rounds_count", ())] == 3
    rounds = [max(s.round for s in a.trace) for a in answers.values()]
    assert got[("footnote_turn_rounds_sum", ())] == sum(rounds)
    searches = sum(len(s.queries) for a in answers.values() for s in a.trace if s.step == "search")
    assert got[("footnote_tool_calls_total", (("tool", "search_docs"),))] == searches > 0
    # The "unknown" answer offers a ticket.
    assert got[("footnote_tool_calls_total", (("tool", "create_ticket"),))] == 1
    for step in ("route", "plan", "search", "grade", "answer"):
        assert got[("footnote_step_seconds_count", (("step", step),))] >= 1
    assert got[("footnote_turn_seconds_count", ())] == 3


def test_one_span_per_turn_with_a_child_per_loop_step(turns):
    _, spans, answers = turns
    roots = [s for s in spans if s.name == "footnote.turn"]
    assert len(roots) == 3
    for root in roots:
        status = root.attributes["footnote.status"]
        answer = answers[status]
        children = [
            s for s in spans if s.parent is not None and s.parent.span_id == root.context.span_id
        ]
        assert all(c.context.trace_id == root.context.trace_id for c in children)
        assert [c.attributes["footnote.step"] for c in children] == [s.step for s in answer.trace]
        for child in children:
            assert root.start_time <= child.start_time <= child.end_time <= root.end_time
        assert root.attributes["footnote.rounds"] == max(s.round for s in answer.trace)
        assert root.attributes["footnote.citations"] == len(answer.citations)
    answered = next(r for r in roots if r.attributes["footnote.status"] == "answered")
    steps = {s.name for s in spans if s.parent and s.parent.span_id == answered.context.span_id}
    assert {
        "footnote.route",
        "footnote.plan",
        "footnote.search",
        "footnote.grade",
        "footnote.answer",
    } <= steps
    grade = next(
        s
        for s in spans
        if s.name == "footnote.grade" and s.parent.span_id == answered.context.span_id
    )
    assert grade.attributes["footnote.decision"] in ("enough", "broaden", "rewrite")


def test_no_question_document_text_or_query_in_any_span_attribute(turns, handbook_deps):
    _, spans, answers = turns
    secret = link_secret(handbook_deps.settings, generate=True).get_secret_value()
    forbidden = {text for _, text in QUESTIONS.values()} | {secret}
    for a in answers.values():
        forbidden |= (
            {a.text[:60]} | {c.quote[:60] for c in a.citations} | {c.title for c in a.citations}
        )
        for s in a.trace:
            forbidden |= set(s.queries) | {s.reason} | set(s.dropped)
    forbidden = {f for f in forbidden if len(f) >= 12}
    values = []
    for span in spans:
        for value in span.attributes.values():
            values += [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
    assert values
    leaks = [(f, v) for f in forbidden for v in values if f in v]
    assert not leaks


def test_ingest_counts_by_outcome_from_real_runs(tmp_path, embedders):
    telemetry = build_telemetry(TelemetrySettings(), exporter=(exporter := InMemorySpanExporter()))
    deps = build_deps(Settings(data_dir=tmp_path / "data"))
    deps.__dict__["embedders"] = embedders
    docs = tmp_path / "docs"
    shutil.copytree(HANDBOOK / "engineering", docs)  # two documents
    (docs / "team-lunch-menu.md").write_text(
        (HANDBOOK / "general" / "team-lunch-menu.md").read_text()
    )
    (docs / "empty.md").write_text("   \n")
    first = deps.ingester.ingest(docs)  # 3 added, 1 failed
    telemetry.ingest(first)
    changed = docs / "team-lunch-menu.md"
    changed.write_text(changed.read_text() + "\n\nFridays: pizza.\n")
    (docs / "empty.md").unlink()
    (docs / "oncall-runbook.md").unlink()
    second = deps.ingester.ingest(docs)  # 1 updated, 1 deleted, 1 unchanged
    telemetry.ingest(second)
    deps.close()
    got = samples(telemetry.metrics.render()[0].decode())

    def count(outcome: str) -> float:
        return got[("footnote_ingest_documents_total", (("outcome", outcome),))]

    assert count("added") == len(first.added) > 0
    assert count("failed") == 1
    assert count("updated") == 1 and count("deleted") == 1
    assert count("unchanged") == len(second.unchanged) > 0
    assert got[("footnote_ingest_chunks_total", ())] == first.chunks + second.chunks
    # The second run had no failure.
    assert got[("footnote_ingest_last_success_timestamp_seconds", ())] > 0
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["footnote.ingest", "footnote.ingest"]
    assert spans[0].attributes["footnote.documents.failed"] == 1 and not spans[0].status.is_ok


class Recorder(BaseHTTPRequestHandler):
    """A loopback OTLP collector / Pushgateway: remembers what was sent where."""

    received: list[tuple[str, str, str, bytes]] = []

    def log_message(self, *args) -> None:
        pass

    def _take(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.received.append((self.command, self.path, self.headers.get("Content-Type", ""), body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_PUT = _take


@pytest.fixture
def recorder():
    Recorder.received = []
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", Recorder.received
    server.shutdown()
    server.server_close()


def test_otlp_http_export_and_pushgateway_when_configured(handbook_deps, recorder):
    url, received = recorder
    telemetry = build_telemetry(
        TelemetrySettings(otlp_endpoint=url, service_name="footnote-test", pushgateway_url=url)
    )
    assistant = build_assistant(handbook_deps, telemetry=telemetry)
    asyncio.run(assistant.answer(turn("bob", "Was the login error fixed in 2.3.1?")))
    from ingest.pipeline import IngestReport

    telemetry.ingest(IngestReport(added=["x/a.md"], chunks=3, seconds=0.5))
    telemetry.close()  # flushes the batch processor
    traces = [r for r in received if r[1] == "/v1/traces"]
    assert traces and all(r[0] == "POST" and r[2] == "application/x-protobuf" for r in traces)
    names, services = set(), set()
    for *_, body in traces:
        req = ExportTraceServiceRequest.FromString(body)
        for rs in req.resource_spans:
            services |= {
                a.value.string_value for a in rs.resource.attributes if a.key == "service.name"
            }
            names |= {s.name for ss in rs.scope_spans for s in ss.spans}
    assert services == {"footnote-test"}
    assert {"footnote.turn", "footnote.search", "footnote.answer", "footnote.ingest"} <= names
    pushes = [r for r in received if r[0] == "PUT"]
    assert pushes and pushes[0][1] == "/metrics/job/footnote-ingest"
    assert b"footnote_ingest_documents_total" in pushes[0][3]


def test_default_telemetry_records_nothing_and_costs_no_exporter(handbook_deps):
    """``Telemetry()`` (the assistant's default) is a no-op: no metrics object, a no-op tracer."""
    from agent.assistant import Assistant

    assert Assistant.__dataclass_fields__["telemetry"].default_factory().metrics is None
    t = build_telemetry(TelemetrySettings())
    # Metrics always; traces only when an endpoint is configured.
    assert t.provider is None and t.metrics is not None
