"""Agent tests never reach a real model: sockets may connect to loopback only (cf. pydantic-ai's
``ALLOW_MODEL_REQUESTS``), and ``fake_openai`` gives each test its own OpenAI-compatible server."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from tests.agent.openai_fake import FakeOpenAI


def _loopback(address: object) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX paths and the like
        return True
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def no_remote_network(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guard(address: object) -> None:
        if not _loopback(address):
            raise RuntimeError(f"a test tried to reach {address!r}; use ScriptedLLM or FakeOpenAI")

    def connect(self: socket.socket, address: object) -> None:
        guard(address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: object) -> int:
        guard(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture
def fake_openai():
    with FakeOpenAI() as fake:
        yield fake
