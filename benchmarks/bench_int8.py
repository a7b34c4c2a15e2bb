"""Would 8-bit MiniLM make ingest faster? Post-training quantization against float32, same run.

MiniLM's arithmetic is most of ingest (docs/operations.md), so int8 weights and activations are
the one lever left. This quantizes the product's own graph (``ingest.minilm.bert_graph``) with
NNCF, calibrated on 300 Doc2Dial paragraphs (not a test set), and encodes 400 SQuAD paragraphs
with both models on one thread, three times interleaved: tokens per CPU-second, the cosine
between each paragraph's two vectors, and how often 400 SQuAD questions find the same paragraph
first. NNCF is not a dependency of Footnote; install it beside the venv for this run:

    .venv/bin/pip install --target /tmp/nncfpk nncf
    ONEDNN_MAX_CPU_ISA=AVX2 python benchmarks/bench_int8.py --nncf /tmp/nncfpk   # an AVX2 CPU
    python benchmarks/bench_int8.py --nncf /tmp/nncfpk                           # this CPU
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.retrieval import default_eval_dir
from ingest.minilm import bert_graph, length_batches, model_dir, wordpiece
from ingest.openvino_models import import_openvino, machine


def paragraphs(folder: Path, n: int, seed: int) -> list[str]:
    found = [
        p.strip()
        for f in sorted(folder.glob("*.md"))
        for p in f.read_text(encoding="utf-8").split("\n\n")
        if len(p.strip()) > 200
    ]
    random.Random(seed).shuffle(found)
    return found[:n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nncf", type=Path, required=True, help="folder NNCF was installed to")
    args = parser.parse_args()
    sys.path.append(str(args.nncf))  # after the venv: its numpy and openvino stay the ones used
    try:
        import nncf
    except ImportError:
        raise SystemExit(f"no NNCF in {args.nncf}: pip install --target {args.nncf} nncf") from None
    ov = import_openvino()
    core = ov.Core()
    tokenizer = wordpiece(256)
    answers = default_eval_dir() / "answers"
    calibration = paragraphs(answers / "doc2dial" / "corpus", 300, seed=1)
    texts = paragraphs(answers / "squad2" / "corpus", 400, seed=2)
    lines = (answers / "squad2" / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines[:400]]

    def feeds(batch_texts: list[str], size: int) -> list[dict[str, np.ndarray]]:
        ids = [e.ids for e in tokenizer.encode_batch(batch_texts)]
        return [{"input_ids": t, "mask": m} for _, t, m in length_batches(ids, size)]

    graph = bert_graph(model_dir() / "model.safetensors")
    batches = feeds(calibration, 8)
    quantized = nncf.quantize(
        graph,
        nncf.Dataset(batches),
        model_type=nncf.ModelType.TRANSFORMER,
        subset_size=len(batches),
    )
    config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": 1}
    config["INFERENCE_PRECISION_HINT"] = "f32"
    models = {"float32": core.compile_model(graph, "CPU", config)}
    models["int8"] = core.compile_model(quantized, "CPU", config)

    def embed(compiled, batch_texts: list[str]) -> np.ndarray:
        request = compiled.create_infer_request()
        ids = [e.ids for e in tokenizer.encode_batch(batch_texts)]
        out = np.empty((len(ids), 384), np.float32)
        for rows, tokens, mask in length_batches(ids, 32):
            request.infer({"input_ids": tokens, "mask": mask})
            out[rows] = request.get_output_tensor(0).data
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    tokens = sum(len(e.ids) for e in tokenizer.encode_batch(texts))
    speed: dict[str, list[float]] = {name: [] for name in models}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(3):
        for name, compiled in models.items():
            started = time.process_time()
            vectors[name] = embed(compiled, texts)
            speed[name].append(tokens / (time.process_time() - started))
    here = machine()
    print(f"{here.cpu}, {here.key}, one thread, {tokens} tokens")
    for name, runs in speed.items():
        print(f"  {name}: {', '.join(f'{s:,.0f}' for s in runs)} tokens per CPU-second")
    ratio = np.median(speed["int8"]) / np.median(speed["float32"])
    print(f"  int8 / float32: {ratio:.2f}x")
    cos = (vectors["float32"] * vectors["int8"]).sum(1)
    print(f"  cosine, int8 against float32: min {cos.min():.4f}, mean {cos.mean():.4f}")
    asked = {name: embed(compiled, questions) for name, compiled in models.items()}
    first = {name: np.argmax(asked[name] @ vectors[name].T, axis=1) for name in models}
    same = float(np.mean(first["float32"] == first["int8"]))
    print(f"  questions whose first paragraph is the same: {same:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
