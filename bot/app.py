"""The composition root: settings in, every client built once, passed down as ``Deps``.

Each client's module is imported by the property that builds it, so ``build_deps`` itself costs
nothing and a command pays only for the clients it touches: ``footnote ask`` starts loading the
models (``bot.cli.process.preload_models``) before it has imported the answer loop, the index or the
telemetry.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.answer_model import AnswerModel
    from agent.desk import SqliteCRM
    from agent.retrieval import Retriever
    from agent.second_source import CollectionFallback
    from agent.telemetry import Telemetry
    from bot.identity.directory import Directory
    from bot.settings import Settings
    from ingest.embed import Embedder
    from ingest.index import Index
    from ingest.pipeline import Ingester
    from ingest.settings import QdrantSettings
    from ingest.sparse import BM25Encoder
    from ingest.workers import WorkerPool

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@dataclass
class Deps:
    settings: Settings
    # False for a process nobody scrapes and that pushes nothing (a one-shot ``footnote ask``):
    # its telemetry keeps no Prometheus series.
    metrics: bool = True
    _extra_indexes: list[Index] = field(default_factory=list)

    @cached_property
    def embedders(self) -> list[Embedder]:
        from ingest.backends import build_embedders

        s = self.settings
        return build_embedders(s.embedding, s.cohere, cache_dir=s.data_dir / "cache")

    @cached_property
    def answer_model(self) -> AnswerModel:
        """The offline reasoner's second opinion (``agent.answer_model``); its cross-encoder
        compiles on first use, or when a command preloads it (``bot.cli.preload_models``)."""
        from agent.answer_model import build_answer_model

        s = self.settings
        return build_answer_model(s.embedding.threads, s.data_dir / "cache")

    def warmers(self, answer_model: bool = True) -> list[Callable[[], object]]:
        """What loads and warms each model the answer path reads, one call per model, to run on
        threads of their own: each embedder encodes a word; with ``answer_model``, the answer
        model's cross-encoder reads a pair. The first question then meets warm models."""
        calls: list[Callable[[], object]] = [
            partial(e.embed, ["warm up"], kind="query") for e in self.embedders
        ]
        cross = self.answer_model.cross if answer_model else None
        if cross is not None:
            calls.append(cross.warm)
        return calls

    @cached_property
    def sparse(self) -> BM25Encoder:
        from ingest.sparse import BM25Encoder

        return BM25Encoder.from_settings(self.settings.retrieval)

    @cached_property
    def index(self) -> Index:
        return self._open(self.settings.qdrant)

    @cached_property
    def retriever(self) -> Retriever:
        from agent.rerank import build_reranker
        from agent.retrieval import Retriever

        return Retriever(
            self.index,
            self.embedders,
            self.sparse,
            self.settings.retrieval,
            reranker=build_reranker(self.settings.cohere),
        )

    @cached_property
    def ingester(self) -> Ingester:
        # Imported here: the parsers (PDF, DOCX, HTML) are a third of a second that answering
        # a question never needs.
        from ingest.pipeline import Ingester

        s = self.settings
        return Ingester(self.index, self.embedders, self.sparse, s.ingest, s.admin_groups)

    @cached_property
    def directory(self) -> Directory:
        """``settings.directory_source``: what the identity provider pushed over SCIM, Microsoft
        Graph (cached in Redis), or the directory file (the demo's)."""
        s = self.settings
        source = s.directory_source
        if source == "scim":
            from bot.identity.scim import ScimDirectory

            return ScimDirectory.open(s.database, s.data_dir)
        if source == "graph":
            import redis

            from bot.chat.conversation_state import redis_pool_kwargs
            from bot.identity.directory_cache import CachedDirectory
            from bot.identity.graph_directory import GraphDirectory

            pool = redis.BlockingConnectionPool.from_url(s.redis.url, **redis_pool_kwargs(s.redis))
            graph = GraphDirectory.from_settings(s.graph, s.directory.group_names)
            return CachedDirectory(
                graph,
                redis.Redis(connection_pool=pool),
                prefix=s.redis.key_prefix,
                ttl_s=s.directory.cache_ttl_s,
                negative_ttl_s=s.directory.negative_ttl_s,
                worth=graph.asks_about,
            )
        from bot.identity.directory import FileDirectory

        return FileDirectory.load(s.directory_file)

    @cached_property
    def telemetry(self) -> Telemetry:
        """Metrics for /metrics (unless ``metrics`` is False), and traces to
        FOOTNOTE_TELEMETRY__OTLP_ENDPOINT when it is set."""
        from agent.telemetry import build_telemetry

        return build_telemetry(self.settings.telemetry, metrics=self.metrics)

    @cached_property
    def fallback(self) -> CollectionFallback | None:
        """The second source, when ``FOOTNOTE_FALLBACK__COLLECTION`` names one."""
        fb = self.settings.fallback
        if fb is None:
            return None
        from agent.retrieval import Retriever
        from agent.second_source import CollectionFallback

        index = self._open(self.settings.qdrant.model_copy(update={"collection": fb.collection}))
        self._extra_indexes.append(index)
        return CollectionFallback(
            Retriever(index, self.embedders, self.sparse, self.settings.retrieval), label=fb.label
        )

    @cached_property
    def crm(self) -> SqliteCRM:
        """The demo CRM in the data dir, first filled from ``crm.json`` next to the directory file."""
        from agent.desk import SqliteCRM

        s = self.settings
        return SqliteCRM(s.data_dir / "crm.sqlite", s.directory_file.parent / "crm.json")

    def worker_pool(self, workers: int) -> WorkerPool | None:
        """The processes ``--workers N`` parses and embeds in, for this index; None for N=1
        (everything in this process, exactly as without the option). The caller closes it."""
        if workers < 2:
            return None
        from ingest.settings import BM25Settings
        from ingest.workers import WorkerPool, WorkerSetup

        s = self.settings
        bm25 = BM25Settings(**s.retrieval.model_dump(include=set(BM25Settings.model_fields)))
        setup = WorkerSetup(
            embedding=s.embedding,
            bm25=bm25,
            ingest=s.ingest,
            admin_groups=tuple(s.admin_groups),
            dims=dict(self.index.dims),
            cohere=s.cohere,
            cache_dir=s.data_dir / "cache",
        )
        return WorkerPool(workers, setup)

    def _open(self, qdrant: QdrantSettings) -> Index:
        from ingest.backends import open_index

        s = self.settings
        return open_index(qdrant, s.data_dir, self.embedders, s.embedding.sentence_vectors)

    def close(self, index: bool = True) -> None:
        """Close what was built. ``index=False`` leaves the indexes to the end of a process that
        only read them and ends at once (``bot.cli.process.end_process``)."""
        if index:
            for extra in self._extra_indexes:
                extra.close()
            if "index" in self.__dict__:
                self.index.close()
        if "telemetry" in self.__dict__:
            self.telemetry.close()
        close = getattr(self.__dict__.get("directory"), "close", None)
        if close is not None:
            close()


def build_deps(settings: Settings, *, metrics: bool = True) -> Deps:
    return Deps(settings, metrics=metrics)
