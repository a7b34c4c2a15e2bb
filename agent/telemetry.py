"""Metrics (Prometheus) and traces (OpenTelemetry) for the answer loop and for ingest.

Nothing here is global: ``build_telemetry(settings.telemetry)`` runs once in the composition root, each
``Metrics`` owns its ``CollectorRegistry`` and each ``Telemetry`` its tracer provider, so tests and
several apps in one process never share a counter.

Spans carry ids, step names, decisions, counts and timings — never the question, document text or
secrets — because traces leave the process for a collector that may sit outside the company.

The loop touches this in two places: ``Assistant.answer`` wraps a turn in ``telemetry.turn(turn)``
and ends it with ``.finish(answer)``; ``Run.record`` hands each finished ``TraceStep`` to
``.step(trace_step)``, which becomes a child span with the step's real start and end. Steps run in
the Workflow's own tasks, so the parent is passed explicitly rather than through contextvars.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from agent.settings import TelemetrySettings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.util.types import AttributeValue

    from agent.turns import Answer, TraceStep, Turn
    from ingest.pipeline import IngestReport

STATUSES = ("answered", "partial", "unknown", "needs_confirmation", "smalltalk", "error")
TOOLS = ("search_docs", "get_document", "query_crm", "create_ticket", "fallback_search")
INGEST_OUTCOMES = ("added", "updated", "unchanged", "deleted", "failed")
REASONER_STEPS = ("route", "tools", "plan", "grade", "rewrite", "broaden", "answer", "check")


class Metrics:
    """Every Prometheus series Footnote exports; docs/operations.md says what each one means."""

    def __init__(self) -> None:
        # Imported here: a process that keeps no metrics (a one-shot ``footnote ask``) never
        # pays for the client (~20 ms of its start, most of it http.server and urllib).
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        r = self.registry = CollectorRegistry()
        self.turns = Counter(
            "footnote_turns", "Turns answered, by outcome.", ["status"], registry=r
        )
        self.turn_seconds = Histogram(
            "footnote_turn_seconds",
            "Wall time of a whole turn.",
            buckets=(0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60),
            registry=r,
        )
        self.rounds = Histogram(
            "footnote_turn_rounds",
            "Search rounds per turn (0: smalltalk or a ticket request).",
            buckets=(0, 1, 2, 3),
            registry=r,
        )
        self.tool_calls = Counter(
            "footnote_tool_calls", "Tool calls by the answer loop.", ["tool"], registry=r
        )
        self.step_seconds = Histogram(
            "footnote_step_seconds",
            "Latency of each answer-loop step.",
            ["step"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=r,
        )
        self.llm_fallbacks = Counter(
            "footnote_llm_fallbacks",
            "Loop steps the offline reasoner made because the configured LLM failed or was skipped.",
            ["step"],
            registry=r,
        )
        self.ingest_documents = Counter(
            "footnote_ingest_documents",
            "Documents seen by ingest, by outcome.",
            ["outcome"],
            registry=r,
        )
        self.ingest_chunks = Counter(
            "footnote_ingest_chunks", "Chunks embedded and written.", registry=r
        )
        self.ingest_last_success = Gauge(
            "footnote_ingest_last_success_timestamp_seconds",
            "Unix time an ingest run last finished with no failed file.",
            registry=r,
        )
        for label in STATUSES:  # every series exists from the start, so rate() and alerts see 0
            self.turns.labels(label)
        for label in TOOLS:
            self.tool_calls.labels(label)
        for label in INGEST_OUTCOMES:
            self.ingest_documents.labels(label)
        for label in REASONER_STEPS:
            self.llm_fallbacks.labels(label)

    def render(self) -> tuple[bytes, str]:
        """The exposition text for ``/metrics`` and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class TurnTelemetry:
    """One turn's span and metrics; lives in the loop's ``Run``, so concurrent turns share nothing."""

    def __init__(self, owner: Telemetry, span: Span):
        self.owner, self.span, self.finished = owner, span, False
        self._parent = trace.set_span_in_context(span)

    def step(self, ts: TraceStep) -> None:
        """A finished loop step: a child span spanning its real duration, and its latency."""
        end = time.time_ns()
        attrs: dict[str, AttributeValue] = {
            "footnote.step": ts.step,
            "footnote.round": ts.round,
            "footnote.ms": ts.ms,
            "footnote.hits": ts.hits,
            "footnote.queries": len(ts.queries),
            "footnote.kept": len(ts.kept),
            "footnote.dropped": len(ts.dropped),
        }
        if ts.decision:  # decisions are the loop's own words ("rewrite", "2 sub-question(s)")
            attrs["footnote.decision"] = ts.decision[:64]
        if ts.llm_fallback:  # our words too: "llm timeout after 20.0 s", an exception's type name
            attrs["footnote.llm_fallback"] = ts.llm_fallback[:160]
        span = self.owner.tracer.start_span(
            f"footnote.{ts.step}",
            context=self._parent,
            start_time=end - int(ts.ms * 1e6),
            attributes=attrs,
        )
        span.end(end_time=end)
        if self.owner.metrics is not None:
            self.owner.metrics.step_seconds.labels(ts.step).observe(ts.ms / 1000)
            if ts.llm_fallback:
                self.owner.metrics.llm_fallbacks.labels(ts.step).inc()

    def finish(self, answer: Answer) -> None:
        """Count the turn by outcome, its rounds and tool calls; put the same numbers on the span."""
        self.finished = True
        rounds = max((s.round for s in answer.trace), default=0)
        calls = tool_calls(answer)
        m = self.owner.metrics
        if m is not None:
            m.turns.labels(answer.status).inc()
            m.rounds.observe(rounds)
            for tool, n in calls.items():
                if n:
                    m.tool_calls.labels(tool).inc(n)
        self.span.set_attributes(
            {
                "footnote.status": answer.status,
                "footnote.rounds": rounds,
                "footnote.citations": len(answer.citations),
                "footnote.cited_doc_ids": sorted({c.doc_id for c in answer.citations}),
                **{f"footnote.tool_calls.{tool}": n for tool, n in calls.items()},
            }
        )
        if answer.status == "error":
            # The note of an error answer is the exception's type name, never its message.
            self.span.set_status(Status(StatusCode.ERROR, answer.note[:64]))


class Telemetry:
    """The process's metrics and tracer. ``Telemetry()`` alone records nothing: the no-op default."""

    def __init__(
        self,
        metrics: Metrics | None = None,
        tracer: Tracer | None = None,
        provider: TracerProvider | None = None,
        pushgateway_url: str | None = None,
    ):
        self.metrics = metrics
        self.tracer = tracer or trace.NoOpTracer()
        self.provider = provider  # the SDK TracerProvider when we built one, to flush on close
        self.pushgateway_url = pushgateway_url

    @contextmanager
    def turn(self, turn: Turn) -> Iterator[TurnTelemetry]:
        """One span per turn; a turn that escapes without ``finish`` still counts, as an error."""
        started = time.perf_counter()
        span = self.tracer.start_span(
            "footnote.turn",
            attributes={
                "footnote.turn_id": turn.turn_id,
                "footnote.user_id": turn.user_id,
                "footnote.channel_kind": turn.channel_kind,
                "footnote.history_messages": len(turn.history),
            },
        )
        handle = TurnTelemetry(self, span)
        try:
            yield handle
        except Exception as exc:  # a cancelled turn (shutdown) is not counted as an error
            # The type only: an exception's message may quote the question or a document.
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            if self.metrics is not None and not handle.finished:
                self.metrics.turns.labels("error").inc()
            raise
        finally:
            if self.metrics is not None:
                self.metrics.turn_seconds.observe(time.perf_counter() - started)
            span.end()

    def ingest(self, report: IngestReport, job: str = "footnote-ingest") -> None:
        """Count one ingest run (and push it when a Pushgateway is set: a job is never scraped)."""
        counts = {
            "added": len(report.added),
            "updated": len(report.updated),
            "unchanged": len(report.unchanged),
            "deleted": len(report.deleted),
            "failed": len(report.failed),
        }
        end = time.time_ns()
        span = self.tracer.start_span(
            "footnote.ingest",
            start_time=end - int(report.seconds * 1e9),
            attributes={
                "footnote.chunks": report.chunks,
                **{f"footnote.documents.{k}": v for k, v in counts.items()},
            },
        )
        if report.failed:
            span.set_status(Status(StatusCode.ERROR, f"{len(report.failed)} file(s) failed"))
        span.end(end_time=end)
        m = self.metrics
        if m is None:
            return
        for outcome, n in counts.items():
            m.ingest_documents.labels(outcome).inc(n)
        m.ingest_chunks.inc(report.chunks)
        if not report.failed:
            m.ingest_last_success.set_to_current_time()
        if self.pushgateway_url:
            from prometheus_client import push_to_gateway

            push_to_gateway(self.pushgateway_url, job=job, registry=m.registry, timeout=5)

    def close(self) -> None:
        """Flush spans still queued for the collector."""
        if self.provider is not None:
            self.provider.shutdown()


def tool_calls(answer: Answer) -> dict[str, int]:
    """Tool calls, read back from the trace: the loop records every call it makes there."""
    return {
        "search_docs": sum(len(s.queries) for s in answer.trace if s.step == "search")
        + sum(1 for s in answer.trace if s.step == "search_docs"),  # a model's own searches
        "get_document": sum(1 for s in answer.trace if s.step == "get_document"),
        "query_crm": sum(1 for s in answer.trace if s.step == "query_crm"),
        "create_ticket": int(answer.pending_action is not None),
        "fallback_search": sum(1 for s in answer.trace if s.step == "fallback"),
    }


def otlp_traces_url(endpoint: str) -> str:
    """A collector base URL (``http://collector:4318``) → its OTLP/HTTP traces path."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


def build_telemetry(
    t: TelemetrySettings, exporter: SpanExporter | None = None, *, metrics: bool = True
) -> Telemetry:
    """Metrics (unless ``metrics`` is False: a process nobody scrapes and that pushes nothing);
    a tracer that exports over OTLP/HTTP when an endpoint is set, or to ``exporter`` (tests pass
    the SDK's in-memory one). Otherwise spans cost nothing, and the SDK is not even imported."""
    kept = Metrics() if metrics else None
    if exporter is None and not t.otlp_endpoint:
        return Telemetry(kept, pushgateway_url=t.pushgateway_url)
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": t.service_name}))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    if t.otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_traces_url(t.otlp_endpoint)))
        )
    return Telemetry(kept, provider.get_tracer("footnote"), provider, t.pushgateway_url)
