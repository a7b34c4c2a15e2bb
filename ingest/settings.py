"""The ingest layer's settings: where the index lives, how documents are cut, embedded and scored.

Each layer owns its sections (``agent/settings.py``, ``bot/settings.py``); the root ``Settings``
in ``bot/settings.py`` assembles them, is built once in ``main()`` and passes each piece of ingest
code only the section it reads.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator

DEFAULT_COLLECTION = "footnote"


class QdrantSettings(BaseModel):
    """Where the index lives: an embedded Qdrant Edge folder by default, a server when ``url`` is set."""

    url: str | None = None
    api_key: SecretStr | None = None
    collection: str = DEFAULT_COLLECTION
    shard_number: int = 1
    replication_factor: int = 1

    def edge_dir(self, data_dir: Path) -> Path:
        """The Qdrant Edge folder of this collection under the data dir."""
        name = self.collection
        return data_dir / ("index" if name == DEFAULT_COLLECTION else f"index-{name}")


class EmbeddingSettings(BaseModel):
    """Which dense vectors each chunk gets. Both local models ship their weights in a package."""

    models: list[Literal["minilm", "use", "cohere"]] = ["minilm", "use"]
    # Models that also embed each sentence of a chunk (a max-sim multivector): a question then
    # meets the one sentence that answers it, not the chunk's average. XQuAD zh→en / ru→en
    # R@5 0.922 / 0.923 → 0.947 / 0.946; ingest encodes ~60% more text with USE.
    sentence_vectors: list[Literal["minilm", "use", "cohere"]] = ["use"]
    cohere_model: str = "embed-multilingual-v3.0"
    threads: int = 2  # MiniLM's (OpenVINO); USE encodes on one BLAS thread beside it
    # texts MiniLM reads at once: under an AVX2 cap 8 read a turn's units (sentences) in 0.66x
    # the time of 32 and chunks of ~180 words in 0.97x (``benchmarks/bench_batches.py``)
    batch_size: int = 8


class BM25Settings(BaseModel):
    """BM25's document side. ``k1``, ``b`` and ``avgdl`` are baked into every stored sparse vector
    at ingest and recorded in the index (``ingest.sparse.INDEX_KEY``), so changing one means
    re-ingesting. Read from ``FOOTNOTE_RETRIEVAL__BM25_*``, the names they have always had: the
    agent's ``RetrievalSettings`` extends this section."""

    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    bm25_avgdl: float = 120.0


class IngestSettings(BaseModel):
    """How documents are read and cut, and the bounds on what one file or page may cost: past a
    limit, the file is skipped with a message naming the setting, and the batch goes on
    (``docs/security.md`` lists them)."""

    chunk_tokens: int = Field(default=220, gt=0)
    chunk_overlap: int = Field(default=40, ge=0)
    # bytes per file, and per page or document a sync fetches (read no further than this)
    max_file_mb: float = Field(default=50.0, gt=0)
    # what a compressed input may expand to: a DOCX's parts, a gzip sitemap
    max_expanded_mb: float = Field(default=100.0, gt=0)
    # one fetch of a sync, its whole body and redirects included, however slowly it drips
    fetch_timeout_s: float = Field(default=30.0, gt=0)
    # elements nested in elements (HTML), collections in collections (YAML)
    max_nesting: int = Field(default=200, gt=0)
    max_docx_paragraphs: int = Field(default=20_000, gt=0)
    max_pdf_pages: int = Field(default=1_000, gt=0)
    # aliases (``*name``) in YAML front matter and sidecars: each may copy a whole subtree, so a
    # few hundred bytes of them expand to gigabytes
    max_yaml_aliases: int = Field(default=20, ge=0)
    # Principals for files with no access rule of their own; ``footnote ingest --acl`` overrides
    # it. Empty: such files are readable by the admin groups only.
    default_acl: list[str] = Field(default_factory=list)


class ConfluenceSettings(BaseModel):
    """Confluence Cloud credentials for ``footnote sync``: an Atlassian account's e-mail and an API
    token (id.atlassian.com → Security → API tokens). Read from the environment only, never stored
    in the sources table, so a copied state database carries no key."""

    email: str = ""
    api_token: SecretStr | None = None


class GraphSettings(BaseModel):
    """A Microsoft Entra ID app registration for the SharePoint / OneDrive source: app-only
    access to Microsoft Graph with a client secret. Read from the environment only, never stored
    with the source. ``authority`` and ``url`` name the real hosts; tests point them at a
    loopback fake."""

    tenant_id: str = ""
    client_id: str = ""
    client_secret: SecretStr | None = None
    authority: str = "https://login.microsoftonline.com"
    url: str = "https://graph.microsoft.com/v1.0"


class GoogleDriveSettings(BaseModel):
    """Google Drive credentials for ``footnote sync``: a service account's JSON key file, and the
    Workspace user it acts as when the account has domain-wide delegation (empty: the service
    account itself, which then reads what is shared with it). From the environment only; the
    key never enters the sources table or a log. The two URLs are Google's; tests point them at
    a loopback fake."""

    key_file: Path | None = None
    subject: str = ""
    token_uri: str = "https://oauth2.googleapis.com/token"
    api_url: str = "https://www.googleapis.com"


class DatabaseSettings(BaseModel):
    """Where sync state lives (``ingest/sources/state.py``): unset, SQLite in the data dir;
    ``postgresql://user:password@host:5432/db`` when several machines sync."""

    url: SecretStr | None = None

    @field_validator("url")
    @classmethod
    def _driver_installed(cls, url: SecretStr | None) -> SecretStr | None:
        """PostgreSQL's driver is the optional ``postgres`` extra: stop at start, naming it."""
        scheme = (url.get_secret_value() if url else "").partition("://")[0]
        if scheme.startswith("postgres") and importlib.util.find_spec("psycopg") is None:
            raise ValueError(
                "its driver is the optional 'postgres' extra, not installed: pip install "
                "--require-hashes --no-deps -r requirements-postgres.lock "
                "(or pip install 'footnote[postgres]')"
            )
        return url
