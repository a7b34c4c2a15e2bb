"""Build the index and embedders the settings ask for: the composition of the ingest layer."""

from __future__ import annotations

from collections.abc import Sequence

from ingest.embed import CohereEmbedder, Embedder, UseEmbedder
from ingest.errors import ConfigError
from ingest.index import vector_dims
from ingest.settings import Settings


def build_embedders(settings: Settings) -> list[Embedder]:
    embedders: list[Embedder] = []
    for name in settings.embedding.models:
        if name == "minilm":
            from ingest.minilm import MiniLMEmbedder

            embedders.append(
                MiniLMEmbedder(
                    threads=settings.embedding.threads,
                    batch_size=settings.embedding.batch_size,
                    cache_dir=settings.data_dir / "cache",
                )
            )
        elif name == "use":
            embedders.append(
                UseEmbedder(
                    threads=settings.embedding.threads, cache_dir=settings.data_dir / "cache"
                )
            )
        elif name == "cohere":
            if settings.cohere is None:
                raise ConfigError("embedding model 'cohere' needs FOOTNOTE_COHERE__API_KEY")
            embedders.append(
                CohereEmbedder(
                    settings.cohere.api_key.get_secret_value(),
                    settings.embedding.cohere_model,
                    settings.cohere.base_url,
                )
            )
    return embedders


def open_index(settings: Settings, embedders: Sequence[Embedder]):
    dims = vector_dims(embedders, settings.embedding.sentence_vectors)
    q = settings.qdrant
    if q.url:
        from ingest.server_index import ServerIndex

        key = q.api_key.get_secret_value() if q.api_key else None
        return ServerIndex.connect(
            q.url,
            key,
            q.collection,
            dims,
            shard_number=q.shard_number,
            replication_factor=q.replication_factor,
        )
    from ingest.edge_index import EdgeIndex

    return EdgeIndex(settings.index_dir, dims)
