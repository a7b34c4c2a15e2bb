"""The root settings object, and the sections only the bot reads (chat, server, Redis, channels).

Built once in ``main()`` and passed down; tests build it directly. Environment variables use the
``FOOTNOTE_`` prefix and ``__`` for nesting, e.g. ``FOOTNOTE_QDRANT__URL=http://qdrant:6333`` or
``FOOTNOTE_SLACK__BOT_TOKEN=xoxb-…``. Every optional section is ``None`` until one of its variables
is set, so a deployment turns on only what it has. Each layer owns its sections
(``ingest/settings.py``, ``agent/settings.py``); this root assembles them and hands each layer's
code only the section it reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agent.settings import (
    CohereSettings,
    CRMSettings,
    FallbackSettings,
    LimitsSettings,
    LLMSettings,
    RetrievalSettings,
    TelemetrySettings,
)
from ingest.errors import ConfigError
from ingest.settings import (
    ConfluenceSettings,
    DatabaseSettings,
    EmbeddingSettings,
    GoogleDriveSettings,
    GraphSettings,
    IngestSettings,
    QdrantSettings,
)

HANDBOOK_DIRECTORY = Path(__file__).resolve().parent.parent / "examples" / "directory.yaml"


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


class PrivacySettings(BaseModel):
    """What the bot keeps of its conversations beyond Redis's short history: each answered turn
    (question, answer, cited documents) and its feedback, deleted after ``retention_days``."""

    retention_days: int = Field(30, ge=1)


class ScimSettings(BaseModel):
    """The identity provider pushes people and groups to ``/scim/v2`` (``bot/identity/scim.py``), and they
    become the directory. Setting the token turns it on; there is no default token."""

    token: SecretStr

    @field_validator("token")
    @classmethod
    def _strong(cls, token: SecretStr) -> SecretStr:
        value = token.get_secret_value()
        if value != value.strip():
            # HTTP drops the whitespace around a header's value, so no request could carry it,
            # and the length check below would count it.
            raise ValueError(
                "it starts or ends with a space or line break (pasted with it?): set it without"
            )
        if len(value) < 32:
            raise ValueError(
                "it must be at least 32 characters: python -c 'import secrets; "
                "print(secrets.token_urlsafe(32))'"
            )
        return token


class DirectorySettings(BaseModel):
    """Where people and their groups come from. ``source`` unset: SCIM when
    ``FOOTNOTE_SCIM__TOKEN`` is set, else the directory file. ``graph``: Microsoft Entra ID through
    Graph with the ``FOOTNOTE_GRAPH__*`` app registration (``bot/identity/graph_directory.py``), each
    person cached in Redis for ``cache_ttl_s`` (``bot/identity/directory_cache.py``)."""

    source: Literal["file", "scim", "graph"] | None = None
    cache_ttl_s: int = Field(15 * 60, ge=1)  # a group change in Entra ID shows within this
    negative_ttl_s: int = Field(60, ge=1)  # "nobody by that key" is remembered this long
    # YAML {Entra ID group object id: name or [names]}: extra names beside the object id
    group_names: Path | None = None


# What a new chat with Footnote offers to ask, in Slack's side panel and Teams' personal chat.
SUGGESTED_PROMPTS = (
    "What can you help me with?",
    "Which documents can you search for me?",
    "Open a support ticket for me",
)


class DigestSettings(BaseModel):
    """The weekly gap report for document owners (``bot/reports/digest.py``): where ``footnote serve`` posts
    it and when. Posting is on once a target is set: a Slack channel id (the bot must be a member)
    and/or a Teams conversation the bot is installed in, with its ``serviceUrl``."""

    slack_channel: str = ""  # e.g. C0123456789
    teams_conversation: str = ""  # e.g. 19:abc...@thread.tacv2
    # the serviceUrl of that conversation, e.g. https://smba.trafficmanager.net/emea/
    teams_service_url: str = ""
    weekday: int = Field(0, ge=0, le=6)  # the day a period starts: 0 = Monday
    hour_utc: int = Field(8, ge=0, le=23)
    period_days: int = Field(7, ge=1)  # weekly by default; the report covers one period
    topics: int = Field(5, ge=1)  # topics shown in a digest
    stale_days: int = Field(365, ge=1)  # "not updated for a year"
    stale_min_citations: int = Field(3, ge=1)  # "cited often": at least this many turns in a period

    @property
    def enabled(self) -> bool:
        return bool(self.slack_channel or self.teams_conversation)


class SlackSettings(BaseModel):
    bot_token: SecretStr
    signing_secret: SecretStr
    app_token: SecretStr | None = None
    api_url: str | None = None  # tests point the Web API at a local server
    # Answer a reply in a channel thread where Footnote has answered as a follow-up, without a
    # new @mention. Off by default: it needs the message.channels / message.groups events, and
    # with them Slack sends Footnote every message of every channel it is in (docs/connect.md).
    thread_followups: bool = False
    # Offered when someone opens a thread in Slack's assistant side panel (at most four; each is
    # sent as their question when clicked). [] offers none.
    suggested_prompts: list[str] = list(SUGGESTED_PROMPTS)


BOT_FRAMEWORK_OPENID_METADATA_URL = (
    "https://login.botframework.com/v1/.well-known/openidconfiguration"
)
ENTRA_LOGIN_URL = "https://login.microsoftonline.com"


class TeamsSettings(BaseModel):
    """The Azure Bot that Teams talks to. Any ``FOOTNOTE_TEAMS__*`` variable turns Teams on, and then
    ``footnote serve`` demands ``app_id`` and ``app_password`` (``bot/chat/teams_auth.py``): every
    activity must carry a Bot Framework token signed for this app id."""

    app_id: str = ""
    app_password: SecretStr = SecretStr("")
    # Offered as suggested actions when Footnote is added to a personal chat and after a greeting
    # there (at most four; a click sends it as the question). [] offers none.
    suggested_prompts: list[str] = list(SUGGESTED_PROMPTS)
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
    # No default: `footnote serve` refuses to start without a strong one (bot/web/links.py:link_secret);
    # local runs generate one in data_dir.
    link_secret: SecretStr | None = None
    link_ttl_s: int = Field(default=900, gt=0)
    oidc: OIDCSettings | None = None
    # /admin (bot/identity/admin_access.py): how long the sign-in link the bot sends an admin stays good
    # (it works once), and how long the session it opens lasts.
    admin_link_ttl_s: int = Field(default=600, gt=0)
    admin_session_ttl_s: int = Field(default=8 * 3600, gt=0)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="FOOTNOTE_", env_nested_delimiter="__", extra="ignore"
    )

    data_dir: Path = Path(".footnote")
    directory_file: Path = HANDBOOK_DIRECTORY
    directory: DirectorySettings = DirectorySettings()
    admin_groups: list[str] = ["admins"]
    qdrant: QdrantSettings = QdrantSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    ingest: IngestSettings = IngestSettings()
    database: DatabaseSettings = DatabaseSettings()
    confluence: ConfluenceSettings | None = None
    graph: GraphSettings | None = None
    gdrive: GoogleDriveSettings | None = None
    redis: RedisSettings = RedisSettings()
    server: ServerSettings = ServerSettings()
    telemetry: TelemetrySettings = TelemetrySettings()
    crm: CRMSettings = CRMSettings()
    limits: LimitsSettings = LimitsSettings()
    channels: ChannelSettings = ChannelSettings()
    privacy: PrivacySettings = PrivacySettings()
    digest: DigestSettings = DigestSettings()
    # Set FOOTNOTE_SCIM__TOKEN and the directory is what the identity provider pushes over SCIM,
    # not the directory file.
    scim: ScimSettings | None = None
    cohere: CohereSettings | None = None
    fallback: FallbackSettings | None = None
    llm: LLMSettings | None = None
    slack: SlackSettings | None = None
    teams: TeamsSettings | None = None

    @property
    def directory_source(self) -> Literal["file", "scim", "graph"]:
        """Which directory answers "who is this": ``FOOTNOTE_DIRECTORY__SOURCE``, else SCIM when
        its token is set, else the file. SCIM pushes that no one would read are refused."""
        chosen = self.directory.source or ("scim" if self.scim is not None else "file")
        if chosen == "scim" and self.scim is None:
            raise ConfigError(
                "FOOTNOTE_DIRECTORY__SOURCE=scim needs the token the identity provider sends: "
                "set FOOTNOTE_SCIM__TOKEN"
            )
        if chosen != "scim" and self.scim is not None:
            raise ConfigError(
                f"FOOTNOTE_DIRECTORY__SOURCE={chosen} but FOOTNOTE_SCIM__TOKEN is set: what the "
                "identity provider pushes would never be read; unset one of them"
            )
        return chosen

    @property
    def index_dir(self) -> Path:
        """The Qdrant Edge folder of the configured collection."""
        return self.qdrant.edge_dir(self.data_dir)
