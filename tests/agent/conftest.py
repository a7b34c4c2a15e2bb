"""Agent tests never reach a real model (the root conftest allows loopback sockets only, cf.
pydantic-ai's ``ALLOW_MODEL_REQUESTS``); ``fake_openai`` gives each test its own OpenAI-compatible
server."""

from __future__ import annotations

import pytest

from testing.llm import FakeOpenAI


@pytest.fixture
def fake_openai():
    with FakeOpenAI() as fake:
        yield fake
