"""Build the index and embedders the settings ask for: the composition of the ingest layer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pydantic import SecretStr

from ingest.embed import CohereEmbedder, Embedder, UseEmbedder
from ingest.errors import ConfigError
from ingest.index import Index, vector_dims
from ingest.settings import EmbeddingSettings, QdrantSettings


class CohereAccess(Protocol):
    """The Cohere key and URL; the agent's ``CohereSettings`` section holds them (it reranks too)."""

    api_key: SecretStr
    base_url: str


def build_embedders(
    embedding: EmbeddingSettings,
    cohere: CohereAccess | None = None,
    cache_dir: Path | None = None,
) -> list[Embedder]:
    """The embedders ``FOOTNOTE_EMBEDDING__MODELS`` names; "cohere" needs ``FOOTNOTE_COHERE__*``.
    ``cache_dir`` keeps the compiled models between starts (``<data dir>/cache``)."""
    embedders: list[Embedder] = []
    for name in embedding.models:
        if name == "minilm":
            from ingest.minilm import MiniLMEmbedder

            embedders.append(
                MiniLMEmbedder(
                    threads=embedding.threads,
                    batch_size=embedding.batch_size,
                    cache_dir=cache_dir,
                )
            )
        elif name == "use":
            embedders.append(UseEmbedder(cache_dir=cache_dir))
        elif name == "cohere":
            if cohere is None:
                raise ConfigError("embedding model 'cohere' needs FOOTNOTE_COHERE__API_KEY")
            embedders.append(
                CohereEmbedder(
                    cohere.api_key.get_secret_value(), embedding.cohere_model, cohere.base_url
                )
            )
    return embedders


def open_index(
    qdrant: QdrantSettings,
    data_dir: Path,
    embedders: Sequence[Embedder],
    sentence_vectors: Sequence[str] = (),
) -> Index:
    """A Qdrant server collection when ``qdrant.url`` is set, else a Qdrant Edge folder under
    ``data_dir``; with a named vector per embedder plus the ``sentence_vectors`` multivectors."""
    dims = vector_dims(embedders, sentence_vectors)
    if qdrant.url:
        from ingest.server_index import ServerIndex

        key = qdrant.api_key.get_secret_value() if qdrant.api_key else None
        return ServerIndex.connect(
            qdrant.url,
            key,
            qdrant.collection,
            dims,
            shard_number=qdrant.shard_number,
            replication_factor=qdrant.replication_factor,
        )
    from ingest.edge_index import EdgeIndex

    return EdgeIndex(qdrant.edge_dir(data_dir), dims)
