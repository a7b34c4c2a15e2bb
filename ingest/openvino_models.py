"""Models run by OpenVINO: built once as a graph, compiled once per machine, kept on disk.

A model is a ``build(weights) -> ov.Model`` function over a weights file. The first start writes
the graph as OpenVINO IR under the cache folder (named by the graph's version and the weights'
path, size and time) and OpenVINO compiles it into its model cache; a later start reads the
compiled model back, a fifth of a second instead of a second or two. The compiled models sit in
a folder of their own per OpenVINO version and CPU (its name and the instruction sets OpenVINO
reports), so a data dir shared by two kinds of machine, or kept across an upgrade, never hands
one a model compiled for another. Adding a model costs a build function and a ``compile`` call.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

_core_lock = threading.Lock()
# OpenVINO's compile_model sets the whole process's locale to "C" and back (LC_ALL, around its
# model cache), a save-set-restore that two threads compiling at once can interleave so that the
# second restores the first's "C": the process then reads and writes text as ASCII. Models load
# on threads of their own, so compiles take turns.
_compile_lock = threading.Lock()

log = logging.getLogger(__name__)


_import_lock = threading.Lock()


def import_openvino() -> Any:
    """``openvino``, without the model converter its ``__init__`` also imports (``ovc``, for
    ONNX / TensorFlow files, which Footnote never reads): half of the import's 0.2 CPU-s. The
    converter stays importable by its own name afterwards. Under a lock: models load on threads
    of their own, and a second thread must not take the module while the first imports it."""
    with _import_lock:
        return _import_openvino()


def _import_openvino() -> Any:
    if "openvino" in sys.modules:
        return sys.modules["openvino"]
    name = "openvino.tools.ovc"
    blocked = name not in sys.modules
    if blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # Python's "absent": ImportError
    try:
        import openvino
    finally:
        if blocked and sys.modules.get(name, False) is None:
            del sys.modules[name]
    return openvino


@lru_cache(maxsize=1)
def core() -> Any:
    """One OpenVINO Core per process: its CPU plugin is loaded once for every model."""
    with _core_lock:
        return import_openvino().Core()


@dataclass(frozen=True)
class Machine:
    """What a compiled model depends on: OpenVINO's version and the CPU it was compiled for."""

    openvino: str
    cpu: str
    capabilities: tuple[str, ...]  # OpenVINO's OPTIMIZATION_CAPABILITIES: FP32, BF16, INT8 …

    @property
    def bf16(self) -> bool:
        """bfloat16 matrix units (AMX or AVX-512 BF16): OpenVINO runs the encoders in bf16."""
        return "BF16" in self.capabilities

    @property
    def key(self) -> str:
        text = f"{self.openvino}|{self.cpu}|{','.join(self.capabilities)}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]


# oneDNN's instruction-set caps below AVX-512 BF16 (``ONEDNN_MAX_CPU_ISA``, which OpenVINO's
# kernels obey): under one, a CPU that has bf16 is treated as one without it.
_NO_BF16_ISAS = {
    "SSE41",
    "AVX",
    "AVX2",
    "AVX2_VNNI",
    "AVX2_VNNI_2",
    "AVX512_CORE",
    "AVX512_CORE_VNNI",
}


@lru_cache(maxsize=1)
def machine() -> Machine:
    """This CPU as OpenVINO sees it. ``ONEDNN_MAX_CPU_ISA=AVX2`` makes a CPU with AVX-512 BF16
    stand in for one with AVX2 only: float32, oneDNN's AVX2 kernels, a cache of its own (the
    matrix products OpenVINO hands to MLAS still use what the CPU has, so it is an estimate)."""
    ov, c = import_openvino(), core()
    capabilities = set(c.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
    if os.environ.get("ONEDNN_MAX_CPU_ISA", "").upper() in _NO_BF16_ISAS:
        capabilities.discard("BF16")
    return Machine(
        openvino=ov.get_version(),
        cpu=str(c.get_property("CPU", "FULL_DEVICE_NAME")),
        capabilities=tuple(sorted(capabilities)),
    )


def cpu_features() -> list[str]:
    """The vector instruction sets of this CPU that matter to the encoders (Linux's cpuinfo)."""
    try:
        flags = (
            Path("/proc/cpuinfo")
            .read_text(encoding="utf-8")
            .split("flags")[1]
            .split("\n")[0]
            .split()
        )
    except (OSError, IndexError):
        return []
    wanted = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_tile")
    return [f for f in wanted if f in flags]


def graph_file(name: str, weights: Path, cache_dir: Path, version: int) -> Path:
    """Where the graph of ``weights`` is kept (OpenVINO IR: this ``.xml`` and a ``.bin`` beside
    it): named by the graph's version and the weights' path, size and time, so an upgraded
    package or a changed graph gets a file (and a compiled model) of its own."""
    stat = weights.stat()
    key = f"{version}:{weights.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
    return cache_dir / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.xml"


def cached_graph(
    name: str, build: Callable[[Path], Any], weights: Path, cache_dir: Path, version: int
) -> Path:
    """The graph of ``weights`` as IR files in ``cache_dir``, written on first use."""
    ov = import_openvino()
    path = graph_file(name, weights, cache_dir, version)
    if not path.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed, the .bin first: a second process starting at the same time
        # finds the .xml only once both are whole.
        with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".part-") as tmp:
            aside = Path(tmp) / "graph.xml"
            # float32 as built: save_model would otherwise halve the weights to float16.
            ov.save_model(build(weights), aside, compress_to_fp16=False)
            os.replace(aside.with_suffix(".bin"), path.with_suffix(".bin"))
            os.replace(aside, path)
    return path


def compile_model(
    name: str,
    build: Callable[[Path], Any],
    weights: Path,
    *,
    version: int,
    threads: int,
    cache_dir: Path | None = None,
) -> Any:
    """``build(weights)`` compiled for this CPU, through the disk caches when ``cache_dir`` is
    given: for one request at a time on ``threads`` threads, in bf16 where the CPU has it."""
    config: dict[str, Any] = {
        "PERFORMANCE_HINT": "LATENCY",  # one request at a time, all threads on it
        "INFERENCE_NUM_THREADS": threads,
        # Unpinned: another model encodes the same question on the other core at the same time.
        "ENABLE_CPU_PINNING": False,
    }
    here = machine()
    # Said either way: OpenVINO would pick bf16 by itself on a CPU that has it.
    config["INFERENCE_PRECISION_HINT"] = "bf16" if here.bf16 else "f32"
    if cache_dir is None:
        return _compiled(build(weights), config)
    try:
        graph = cached_graph(name, build, weights, cache_dir, version)
        return _compiled(
            str(graph), {**config, "CACHE_DIR": str(cache_dir / "openvino" / here.key)}
        )
    except (OSError, RuntimeError) as exc:  # a full or read-only disk (OpenVINO raises Runtime)
        log.warning(
            "model cache in %s not written (%s): building the model in memory; free space "
            "there or make it writable",
            cache_dir,
            exc,
        )
        return _compiled(build(weights), config)


def _compiled(model: Any, config: dict[str, Any]) -> Any:
    """One compile at a time in the process (``_compile_lock`` says why)."""
    with _compile_lock:
        return core().compile_model(model, "CPU", config)


def precision(compiled: Any) -> str:
    """The precision OpenVINO chose for a compiled model: f32, or bf16 on AMX / AVX-512 BF16."""
    hint = compiled.get_property("INFERENCE_PRECISION_HINT")
    return str(hint.to_string() if hasattr(hint, "to_string") else hint)
