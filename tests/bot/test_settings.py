"""Settings by the layer that owns them, with every FOOTNOTE_* variable keeping its name."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from pydantic import BaseModel

from agent.settings import LLMSettings, RetrievalSettings
from bot.settings import Settings, SlackSettings
from ingest.settings import BM25Settings, IngestSettings

ROOT = Path(__file__).resolve().parents[2]

# Every variable the settings accepted before they were split by layer (walked from the models of
# ingest/settings.py at the time). A rename breaks deployments: a new variable is added here;
# none is renamed or dropped.
ACCEPTED = {
    "FOOTNOTE_ADMIN_GROUPS",
    "FOOTNOTE_CHANNELS__UNKNOWN_MEMBERS",
    "FOOTNOTE_COHERE__API_KEY",
    "FOOTNOTE_COHERE__BASE_URL",
    "FOOTNOTE_COHERE__RERANK_MODEL",
    "FOOTNOTE_CRM__CONTACT_FIELDS",
    "FOOTNOTE_CRM__READER_GROUPS",
    "FOOTNOTE_DATABASE__URL",
    "FOOTNOTE_PRIVACY__RETENTION_DAYS",
    "FOOTNOTE_CONFLUENCE__EMAIL",
    "FOOTNOTE_CONFLUENCE__API_TOKEN",
    "FOOTNOTE_GRAPH__TENANT_ID",
    "FOOTNOTE_GRAPH__CLIENT_ID",
    "FOOTNOTE_GRAPH__CLIENT_SECRET",
    "FOOTNOTE_GRAPH__AUTHORITY",
    "FOOTNOTE_GRAPH__URL",
    "FOOTNOTE_GDRIVE__KEY_FILE",
    "FOOTNOTE_GDRIVE__SUBJECT",
    "FOOTNOTE_GDRIVE__TOKEN_URI",
    "FOOTNOTE_GDRIVE__API_URL",
    "FOOTNOTE_DIGEST__SLACK_CHANNEL",
    "FOOTNOTE_DIGEST__TEAMS_CONVERSATION",
    "FOOTNOTE_DIGEST__TEAMS_SERVICE_URL",
    "FOOTNOTE_DIGEST__WEEKDAY",
    "FOOTNOTE_DIGEST__HOUR_UTC",
    "FOOTNOTE_DIGEST__PERIOD_DAYS",
    "FOOTNOTE_DIGEST__TOPICS",
    "FOOTNOTE_DIGEST__STALE_DAYS",
    "FOOTNOTE_DIGEST__STALE_MIN_CITATIONS",
    "FOOTNOTE_DATA_DIR",
    "FOOTNOTE_DIRECTORY_FILE",
    "FOOTNOTE_DIRECTORY__CACHE_TTL_S",
    "FOOTNOTE_DIRECTORY__GROUP_NAMES",
    "FOOTNOTE_DIRECTORY__NEGATIVE_TTL_S",
    "FOOTNOTE_DIRECTORY__SOURCE",
    "FOOTNOTE_EMBEDDING__BATCH_SIZE",
    "FOOTNOTE_EMBEDDING__COHERE_MODEL",
    "FOOTNOTE_EMBEDDING__MODELS",
    "FOOTNOTE_EMBEDDING__SENTENCE_VECTORS",
    "FOOTNOTE_EMBEDDING__THREADS",
    "FOOTNOTE_FALLBACK__COLLECTION",
    "FOOTNOTE_FALLBACK__LABEL",
    "FOOTNOTE_INGEST__CHUNK_OVERLAP",
    "FOOTNOTE_INGEST__CHUNK_TOKENS",
    "FOOTNOTE_INGEST__DEFAULT_ACL",
    "FOOTNOTE_INGEST__FETCH_TIMEOUT_S",
    "FOOTNOTE_INGEST__MAX_DOCX_PARAGRAPHS",
    "FOOTNOTE_INGEST__MAX_EXPANDED_MB",
    "FOOTNOTE_INGEST__MAX_FILE_MB",
    "FOOTNOTE_INGEST__MAX_NESTING",
    "FOOTNOTE_INGEST__MAX_PDF_PAGES",
    "FOOTNOTE_INGEST__MAX_YAML_ALIASES",
    "FOOTNOTE_LIMITS__MAX_QUESTION_CHARS",
    "FOOTNOTE_LLM__API_KEY",
    "FOOTNOTE_LLM__BASE_URL",
    "FOOTNOTE_LLM__CHEAP_MODEL",
    "FOOTNOTE_LLM__MAX_REPLY_TOKENS",
    "FOOTNOTE_LLM__MAX_RETRIES",
    "FOOTNOTE_LLM__MODEL",
    "FOOTNOTE_LLM__PAUSE_AFTER_FAILURE_S",
    "FOOTNOTE_LLM__PROVIDER",
    "FOOTNOTE_LLM__STEP_TIMEOUT_S",
    "FOOTNOTE_LLM__STREAM",
    "FOOTNOTE_LLM__STRUCTURED_OUTPUT",
    "FOOTNOTE_LLM__TIMEOUT_S",
    "FOOTNOTE_LLM__TURN_BUDGET_S",
    "FOOTNOTE_QDRANT__API_KEY",
    "FOOTNOTE_QDRANT__COLLECTION",
    "FOOTNOTE_QDRANT__REPLICATION_FACTOR",
    "FOOTNOTE_QDRANT__SHARD_NUMBER",
    "FOOTNOTE_QDRANT__URL",
    "FOOTNOTE_REDIS__HISTORY_TTL_S",
    "FOOTNOTE_REDIS__HISTORY_TURNS",
    "FOOTNOTE_REDIS__KEY_PREFIX",
    "FOOTNOTE_REDIS__PENDING_TTL_S",
    "FOOTNOTE_REDIS__POOL_SIZE",
    "FOOTNOTE_REDIS__RATE_PER_MINUTE",
    "FOOTNOTE_REDIS__URL",
    "FOOTNOTE_RETRIEVAL__BM25_AVGDL",
    "FOOTNOTE_RETRIEVAL__BM25_B",
    "FOOTNOTE_RETRIEVAL__BM25_K1",
    "FOOTNOTE_RETRIEVAL__FUSION",
    "FOOTNOTE_RETRIEVAL__PREFETCH",
    "FOOTNOTE_RETRIEVAL__RERANK_DEPTH",
    "FOOTNOTE_RETRIEVAL__RRF_K",
    "FOOTNOTE_RETRIEVAL__WEIGHTS_EN",
    "FOOTNOTE_RETRIEVAL__WEIGHTS_OTHER",
    "FOOTNOTE_SCIM__TOKEN",
    "FOOTNOTE_SERVER__ADMIN_LINK_TTL_S",
    "FOOTNOTE_SERVER__ADMIN_SESSION_TTL_S",
    "FOOTNOTE_SERVER__HOST",
    "FOOTNOTE_SERVER__LINK_SECRET",
    "FOOTNOTE_SERVER__LINK_TTL_S",
    "FOOTNOTE_SERVER__OIDC__CLIENT_ID",
    "FOOTNOTE_SERVER__OIDC__CLIENT_SECRET",
    "FOOTNOTE_SERVER__OIDC__EMAIL_CLAIM",
    "FOOTNOTE_SERVER__OIDC__ISSUER",
    "FOOTNOTE_SERVER__OIDC__SCOPES",
    "FOOTNOTE_SERVER__OIDC__SESSION_TTL_S",
    "FOOTNOTE_SERVER__PORT",
    "FOOTNOTE_SERVER__PUBLIC_URL",
    "FOOTNOTE_SLACK__API_URL",
    "FOOTNOTE_SLACK__APP_TOKEN",
    "FOOTNOTE_SLACK__BOT_TOKEN",
    "FOOTNOTE_SLACK__SIGNING_SECRET",
    "FOOTNOTE_SLACK__SUGGESTED_PROMPTS",
    "FOOTNOTE_SLACK__THREAD_FOLLOWUPS",
    "FOOTNOTE_TEAMS__ALLOW_UNAUTHENTICATED",
    "FOOTNOTE_TEAMS__APP_ID",
    "FOOTNOTE_TEAMS__APP_PASSWORD",
    "FOOTNOTE_TEAMS__LOGIN_URL",
    "FOOTNOTE_TEAMS__OPENID_METADATA_URL",
    "FOOTNOTE_TEAMS__SUGGESTED_PROMPTS",
    "FOOTNOTE_TEAMS__TENANT_ID",
    "FOOTNOTE_TELEMETRY__OTLP_ENDPOINT",
    "FOOTNOTE_TELEMETRY__PUSHGATEWAY_URL",
    "FOOTNOTE_TELEMETRY__SERVICE_NAME",
}


def variables(model: type[BaseModel], stem: str = "FOOTNOTE_") -> set[str]:
    names = set()
    for name, field in model.model_fields.items():
        sections = [
            a
            for a in (get_args(field.annotation) or (field.annotation,))
            if isinstance(a, type) and issubclass(a, BaseModel)
        ]
        if sections:
            names |= variables(sections[0], f"{stem}{name.upper()}__")
        else:
            names.add(f"{stem}{name.upper()}")
    return names


def test_every_variable_keeps_its_name():
    assert variables(Settings) == ACCEPTED


def test_each_layer_reads_its_variables_from_the_environment(monkeypatch):
    monkeypatch.setenv("FOOTNOTE_RETRIEVAL__BM25_K1", "1.1")
    monkeypatch.setenv("FOOTNOTE_RETRIEVAL__RRF_K", "42")
    monkeypatch.setenv("FOOTNOTE_INGEST__DEFAULT_ACL", '["hr","managers"]')
    monkeypatch.setenv("FOOTNOTE_LLM__MODEL", "m")
    monkeypatch.setenv("FOOTNOTE_SLACK__BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("FOOTNOTE_SLACK__SIGNING_SECRET", "s")
    s = Settings()
    assert isinstance(s.retrieval, RetrievalSettings) and isinstance(s.retrieval, BM25Settings)
    assert (s.retrieval.bm25_k1, s.retrieval.rrf_k) == (1.1, 42)
    assert isinstance(s.ingest, IngestSettings) and s.ingest.default_acl == ["hr", "managers"]
    assert isinstance(s.llm, LLMSettings) and s.llm.model == "m"
    assert isinstance(s.slack, SlackSettings) and s.slack.bot_token.get_secret_value() == "xoxb-1"
