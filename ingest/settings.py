"""The one settings object. Built once in ``main()`` and passed down; tests build it directly.

Environment variables use the ``FOOTNOTE_`` prefix and ``__`` for nesting, e.g.
``FOOTNOTE_QDRANT__URL=http://qdrant:6333`` or ``FOOTNOTE_SLACK__BOT_TOKEN=xoxb-…``.
Every optional section is ``None`` until one of its variables is set, so a deployment
turns on only what it has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

HANDBOOK_DIRECTORY = Path(__file__).resolve().parent.parent / "examples" / "directory.yaml"


class QdrantSettings(BaseModel):
    """Where the index lives: an embedded Qdrant Edge folder by default, a server when ``url`` is set."""

    url: str | None = None
    api_key: SecretStr | None = None
    collection: str = "footnote"
    shard_number: int = 1
    replication_factor: int = 1


class EmbeddingSettings(BaseModel):
    """Which dense vectors each chunk gets. Both local models ship their weights in a package."""

    models: list[Literal["minilm", "use", "cohere"]] = ["minilm", "use"]
    # Models that also embed each sentence of a chunk (a max-sim multivector): a question then
    # meets the one sentence that answers it, not the chunk's average. XQuAD zh→en / ru→en
    # R@5 0.922 / 0.923 → 0.947 / 0.946; ingest encodes ~60% more text with USE.
    sentence_vectors: list[Literal["minilm", "use", "cohere"]] = ["use"]
    cohere_model: str = "embed-multilingual-v3.0"
    threads: int = 2
    batch_size: int = 32


class RetrievalSettings(BaseModel):
    """How search fuses its signals; tuned on train splits only (docs/retrieval.md)."""

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
    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    bm25_avgdl: float = 120.0
    rerank_depth: int = 30  # passages a configured reranker sees before it keeps top_k


class IngestSettings(BaseModel):
    chunk_tokens: int = Field(default=220, gt=0)
    chunk_overlap: int = Field(default=40, ge=0)
    max_file_mb: float = Field(default=50.0, gt=0)
    default_acl: list[str] = Field(default_factory=list)


class CohereSettings(BaseModel):
    api_key: SecretStr
    base_url: str = "https://api.cohere.com"
    rerank_model: str = "rerank-v3.5"


class LLMSettings(BaseModel):
    """An LLM for the answer loop. Without it the offline reasoner answers."""

    provider: Literal["openai", "openai_like", "azure", "anthropic", "cohere"] = "openai_like"
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
    # Retries of a failed LLM call (a 5xx, a 429, a dropped connection) before the step falls back.
    max_retries: int = Field(1, ge=0)
    # After a step fails on the LLM (timeout or error), later steps skip it this long; 0 = never.
    pause_after_failure_s: float = Field(30.0, ge=0)


class CRMSettings(BaseModel):
    """Who may read customer records through ``query_crm``, and which fields are contact data."""

    reader_groups: list[str] = ["sales", "support", "managers"]
    # Shown only when the question asks for them ("what's their email?").
    contact_fields: list[str] = ["contact", "email", "phone"]


class LimitsSettings(BaseModel):
    """Bounds on one turn, whatever a user sends."""

    max_question_chars: int = Field(4000, ge=1)


class ChannelSettings(BaseModel):
    """Answers in channels. A member the directory does not know (a guest, a Slack Connect user of
    another organisation) reads only public documents, so the channel's answers shrink to those;
    ``unknown_members="refuse"`` answers nothing at all in such a channel."""

    unknown_members: Literal["public", "refuse"] = "public"


class RedisSettings(BaseModel):
    url: str = "redis://127.0.0.1:6379/0"
    key_prefix: str = (
        "footnote:"  # every key the bot writes starts with this (share a Redis safely)
    )
    history_turns: int = 10
    history_ttl_s: int = 7 * 24 * 3600
    pending_ttl_s: int = 15 * 60
    rate_per_minute: int = 20  # questions per user in any rolling 60 s (0: no limit)
    pool_size: int = Field(32, ge=1)  # connections per client; a burst waits for one


class SlackSettings(BaseModel):
    bot_token: SecretStr
    signing_secret: SecretStr
    app_token: SecretStr | None = None
    api_url: str | None = None  # tests point the Web API at a local server
    # Answer a reply in a channel thread where Footnote has answered as a follow-up, without a
    # new @mention. Off by default: it needs the message.channels / message.groups events, and
    # with them Slack sends Footnote every message of every channel it is in (docs/connect.md).
    thread_followups: bool = False


BOT_FRAMEWORK_OPENID_METADATA_URL = (
    "https://login.botframework.com/v1/.well-known/openidconfiguration"
)
ENTRA_LOGIN_URL = "https://login.microsoftonline.com"


class TeamsSettings(BaseModel):
    """The Azure Bot that Teams talks to. Any ``FOOTNOTE_TEAMS__*`` variable turns Teams on, and then
    ``footnote serve`` demands ``app_id`` and ``app_password`` (``bot/teams_auth.py``): every
    activity must carry a Bot Framework token signed for this app id."""

    app_id: str = ""
    app_password: SecretStr = SecretStr("")
    tenant_id: str | None = None  # single-tenant bots only
    # No token checks at all, for the Bot Framework Emulator; refused unless the server listens
    # on a loopback address.
    allow_unauthenticated: bool = False
    # Where the keys that sign inbound tokens are published (Bot Framework's OpenID document).
    openid_metadata_url: str = BOT_FRAMEWORK_OPENID_METADATA_URL
    # Where the bot asks for its own token before it replies: the Entra ID authority is
    # ``{login_url}/{tenant_id or "botframework.com"}``.
    login_url: str = ENTRA_LOGIN_URL


class OIDCSettings(BaseModel):
    """Sign-in for ``/docs`` links with the company's OpenID Connect provider (Sign in with Slack,
    Microsoft Entra ID, ...). When set, a link opens only for the person who signs in, and only
    if THEY may read the document: a forwarded link shows nothing to the wrong reader."""

    issuer: str  # e.g. https://slack.com or https://login.microsoftonline.com/<tenant-id>/v2.0
    client_id: str
    client_secret: SecretStr
    scopes: list[str] = ["openid", "email", "profile"]
    # The ID-token claim that holds the e-mail the directory knows (Entra: often preferred_username).
    email_claim: str = "email"
    session_ttl_s: int = Field(default=3600, gt=0)  # how long one sign-in lasts in the browser

    @field_validator("issuer")
    @classmethod
    def _https_issuer(cls, value: str) -> str:
        url = urlsplit(value)
        loopback = url.hostname in ("localhost", "127.0.0.1", "::1")
        if url.scheme != "https" and not (url.scheme == "http" and loopback):
            raise ValueError(
                "FOOTNOTE_SERVER__OIDC__ISSUER must be an https:// URL (plain http only on loopback)"
            )
        return value.rstrip("/")


class ServerSettings(BaseModel):
    # Loopback unless told otherwise: the container image, compose file and Helm chart set
    # FOOTNOTE_SERVER__HOST=0.0.0.0 themselves.
    host: str = "127.0.0.1"
    port: int = 3000
    public_url: str = "http://localhost:3000"
    # No default: `footnote serve` refuses to start without a strong one (bot/links.py:link_secret);
    # local runs generate one in data_dir.
    link_secret: SecretStr | None = None
    link_ttl_s: int = Field(default=900, gt=0)
    oidc: OIDCSettings | None = None


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


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="FOOTNOTE_", env_nested_delimiter="__", extra="ignore"
    )

    data_dir: Path = Path(".footnote")
    directory_file: Path = HANDBOOK_DIRECTORY
    admin_groups: list[str] = ["admins"]
    qdrant: QdrantSettings = QdrantSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    ingest: IngestSettings = IngestSettings()
    redis: RedisSettings = RedisSettings()
    server: ServerSettings = ServerSettings()
    telemetry: TelemetrySettings = TelemetrySettings()
    crm: CRMSettings = CRMSettings()
    limits: LimitsSettings = LimitsSettings()
    channels: ChannelSettings = ChannelSettings()
    cohere: CohereSettings | None = None
    fallback: FallbackSettings | None = None
    llm: LLMSettings | None = None
    slack: SlackSettings | None = None
    teams: TeamsSettings | None = None

    @property
    def index_dir(self) -> Path:
        """The Qdrant Edge folder of the configured collection."""
        name = self.qdrant.collection
        return self.data_dir / ("index" if name == "footnote" else f"index-{name}")
