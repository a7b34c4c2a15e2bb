"""The agent layer's settings: retrieval fusion, rerank, the LLM, tools, the fallback source and
telemetry. Assembled by the root ``Settings`` (``bot/settings.py``); agent code takes only the
section it reads and never imports the bot's settings."""

from __future__ import annotations

import importlib.util
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

from ingest.settings import BM25Settings


class RetrievalSettings(BM25Settings):
    """How search fuses its signals; tuned on train splits only (docs/retrieval.md).

    The inherited ``bm25_*`` fields belong to ingest (they are baked into the index); they sit in
    this section so that ``FOOTNOTE_RETRIEVAL__BM25_*`` keep their names."""

    # "sum": Σ weight × raw score — cosine per dense model, plus BM25 divided by the number of
    # distinct query terms; beat every weighted-RRF setting on SciFact train (0.745 vs 0.734).
    fusion: Literal["sum", "rrf"] = "sum"
    prefetch: int = 100  # candidates per signal
    # Weights of (bm25, minilm, use, use's best sentence) when the query is English / in another
    # language (a zero weight skips that model's query embedding). USE barely moves English
    # rankings but gives every passage the cross-lingual similarity the offline grader reads
    # (``sim_use``). Without sentence vectors in the index, the last weight goes to ``use``.
    weights_en: tuple[float, float, float, float] = (0.2, 1.0, 0.2, 0.0)
    weights_other: tuple[float, float, float, float] = (0.2, 0.0, 0.5, 0.5)
    rrf_k: int = 60  # "rrf" only
    rerank_depth: int = 30  # passages a configured reranker sees before it keeps top_k


class CohereSettings(BaseModel):
    """Cohere's hosted rerank, and the "cohere" embedding model (ingest receives the key)."""

    api_key: SecretStr
    base_url: str = "https://api.cohere.com"
    rerank_model: str = "rerank-v3.5"


Provider = Literal["openai", "openai_like", "azure", "anthropic", "cohere"]

# Each provider's client is an optional extra (pyproject.toml), so the default install, which
# answers with the offline reasoner, carries no LLM SDK: provider -> (extra, a module it installs).
PROVIDER_EXTRAS: dict[str, tuple[str, str]] = {
    "openai": ("openai", "llama_index.llms.openai"),
    "openai_like": ("openai", "llama_index.llms.openai_like"),
    "cohere": ("openai", "llama_index.llms.openai_like"),  # Cohere's OpenAI-compatible API
    "azure": ("azure", "llama_index.llms.azure_openai"),
    "anthropic": ("anthropic", "llama_index.llms.anthropic"),
}


def missing_extra(provider: str) -> str | None:
    """The extra to install for ``provider``, or None when its client is installed."""
    extra, module = PROVIDER_EXTRAS[provider]
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package (llama_index.llms) is missing too
        found = False
    return None if found else extra


class LLMSettings(BaseModel):
    """An LLM for the answer loop. Without it the offline reasoner answers."""

    provider: Provider = "openai_like"
    api_key: SecretStr | None = None
    base_url: str | None = None
    model: str = "gpt-4o"
    cheap_model: str | None = None
    # How openai_like asks for route/grade/check/answer replies of a given JSON schema:
    # "json_schema" is OpenAI's response_format (vLLM, Ollama, llama.cpp's llama-server);
    # "json_object" puts the schema in {"type": "json_object", "schema": …}, the form
    # llama-cpp-python's server reads (it ignores "json_schema"); "tool_call" forces a tool call.
    structured_output: Literal["json_schema", "json_object", "tool_call"] = "json_schema"
    timeout_s: float = 60.0  # one HTTP request
    # Tokens one reply may have: a model that runs on (an endless list, a string never closed) is
    # cut there, and the step, its reply unusable, is made offline.
    max_reply_tokens: int = Field(4096, gt=0)
    # A step (route, grade, answer…) that waits longer for the LLM, or whose call fails, is made
    # by the offline reasoner instead (agent.fallback_reasoner).
    step_timeout_s: float = Field(20.0, gt=0)
    # What the LLM may take of one turn, all steps together: each step waits at most what is left,
    # and the rest of the turn is made offline, so a slow provider cannot push a turn past the
    # answer loop's own 90 s limit (which would end it with an error).
    turn_budget_s: float = Field(60.0, gt=0, lt=90)
    # Retries of a failed LLM call (a 5xx, a 429, a dropped connection) before the step falls back.
    max_retries: int = Field(1, ge=0)
    # After a step fails on the LLM (timeout or error), later steps skip it this long; 0 = never.
    pause_after_failure_s: float = Field(30.0, ge=0)
    # Show the answer in the chat while the model writes it (Slack's assistant threads, Teams
    # personal chat), replaced by the checked answer when it is done; off: the answer comes whole.
    stream: bool = True

    @field_validator("provider")
    @classmethod
    def _client_installed(cls, provider: str) -> str:
        """Stop at start, not at the first question, when the provider's extra is missing."""
        extra = missing_extra(provider)
        if extra is not None:
            raise ValueError(
                f"its client is the optional {extra!r} extra, not installed: "
                f"pip install --require-hashes --no-deps -r requirements-{extra}.lock "
                f"(or pip install 'footnote[{extra}]')"
            )
        return provider


class CRMSettings(BaseModel):
    """Who may read customer records through ``query_crm``, and which fields are contact data."""

    reader_groups: list[str] = ["sales", "support", "managers"]
    # Shown only when the question asks for them ("what's their email?").
    contact_fields: list[str] = ["contact", "email", "phone"]


class LimitsSettings(BaseModel):
    """Bounds on one turn, whatever a user sends."""

    max_question_chars: int = Field(4000, ge=1)


class FallbackSettings(BaseModel):
    """A second collection searched only when the company documents are silent (off by default).

    Fill it with ``footnote ingest FOLDER --collection NAME``; answers from it are labelled.
    """

    collection: str
    label: str = "external"


class TelemetrySettings(BaseModel):
    """Where traces go (an OTLP/HTTP collector) and what the service is called in them.

    ``otlp_endpoint`` is the collector's base URL (``http://otel-collector:4318``); unset, no
    traces leave the process. ``pushgateway_url`` lets a one-shot ``footnote ingest`` job push its
    counts, since Prometheus cannot scrape a job that has already exited.
    """

    otlp_endpoint: str | None = None
    service_name: str = "footnote"
    pushgateway_url: str | None = None
