"""The answer's draft while an LLM writes it: the partial JSON read as it arrives, and the deltas
the reasoner tells its ``draft`` on the wire (``FakeOpenAI`` streaming SSE chunks)."""

from __future__ import annotations

import json
import time

import pytest
from pydantic import SecretStr

from agent.drafts import DraftText, plain_draft, sentences_so_far
from agent.fallback_reasoner import FallbackReasoner, StepTimeouts, take_llm_fallback
from agent.llm_reasoner import LLMReasoner
from agent.llms import build_llms, provider_errors
from agent.reasoning import Draft, Sentence
from agent.settings import LLMSettings
from testing.llm import FakeOpenAI, Reply
from tests.agent.test_llm_reasoner import PASSAGES

ANSWER = {
    "sentences": [
        {"text": "You get 25 days [1].", "citations": [1]},
        {"text": "Up to 10 unused days carry over.", "citations": [3]},
    ],
    "missing": None,
}
PLAIN = "You get 25 days. Up to 10 unused days carry over."


async def test_every_prefix_of_the_reply_gives_a_prefix_of_the_draft():
    """However the JSON is cut, the deltas only ever continue the text, markers left out."""
    content = json.dumps(ANSWER)
    got: list[str] = []

    async def collect(delta: str) -> None:
        got.append(delta)

    text = DraftText(collect)
    for end in range(len(content) + 1):
        await text.update(content[:end])

    assert "".join(got) == PLAIN
    assert len(got) > 10  # character by character, not at the end
    assert not any("[" in d or "]" in d for d in got)


def test_partial_reading_keeps_an_unfinished_string_and_ignores_non_json():
    assert sentences_so_far('{"sentences": [{"text": "Ten da') == ["Ten da"]
    assert sentences_so_far('{"sente') == []
    assert sentences_so_far("Sure! Here is") == []
    assert plain_draft(["Ten days [1", "x"]) == "Ten days x"  # a marker being written is held


def http_reasoner(fake: FakeOpenAI, **overrides) -> LLMReasoner:
    settings = LLMSettings(
        provider="openai_like",
        api_key=SecretStr("test"),
        base_url=fake.base_url,
        model="fake",
        max_retries=0,
    )
    cheap, strong = build_llms(settings.model_copy(update=overrides))
    return LLMReasoner(cheap, strong)


@pytest.mark.parametrize("mode", ["json_schema", "json_object"])
async def test_the_answer_is_told_as_it_streams_before_the_reply_ends(fake_openai, mode):
    reasoner = http_reasoner(fake_openai, structured_output=mode)
    fake_openai.enqueue(Reply(content=json.dumps(ANSWER), chunk_s=0.03, piece=5))
    deltas: list[tuple[float, str]] = []

    async def draft(delta: str) -> None:
        deltas.append((time.perf_counter(), delta))

    result = await reasoner.answer("How many days?", [], PASSAGES, [], draft=draft)
    done = time.perf_counter()

    assert result == Draft(
        [Sentence("You get 25 days.", [0]), Sentence("Up to 10 unused days carry over.", [2])]
    )
    assert "".join(d for _, d in deltas) == PLAIN
    assert len(deltas) > 5
    assert deltas[0][0] < done - 0.5  # the first words long before the last chunk (~0.9 s)
    [body] = fake_openai.bodies
    assert body["stream"] is True and body["response_format"]["type"] == mode


async def test_a_forced_tool_call_tells_whole_sentences(fake_openai):
    """LlamaIndex yields no partial nested text on this route: sentences come whole."""
    reasoner = http_reasoner(fake_openai, structured_output="tool_call")
    fake_openai.enqueue(Reply(tool_calls=[{"name": None, "arguments": ANSWER}], piece=5))
    deltas: list[str] = []

    async def draft(delta: str) -> None:
        deltas.append(delta)

    await reasoner.answer("How many days?", [], PASSAGES, [], draft=draft)

    assert "".join(deltas) == PLAIN
    assert "tools" in fake_openai.bodies[0]


async def test_no_draft_no_change_on_the_wire(fake_openai):
    """Without a draft the answer goes the way it went before (LlamaIndex's streamed predict)."""
    reasoner = http_reasoner(fake_openai)
    fake_openai.enqueue(Reply(content=json.dumps(ANSWER)))

    draft = await reasoner.answer("How many days?", [], PASSAGES, [])

    assert [s.text for s in draft.sentences] == [
        "You get 25 days.",
        "Up to 10 unused days carry over.",
    ]


async def test_streaming_off_tells_nothing(fake_openai):
    settings = LLMSettings(
        provider="openai_like", api_key=SecretStr("t"), base_url=fake_openai.base_url, model="f"
    )
    reasoner = LLMReasoner(*build_llms(settings), stream=False)
    fake_openai.enqueue(Reply(content=json.dumps(ANSWER), piece=5))
    deltas: list[str] = []

    async def draft(delta: str) -> None:
        deltas.append(delta)

    await reasoner.answer("How many days?", [], PASSAGES, [], draft=draft)
    assert deltas == [] and not reasoner.streams


class Whole:
    """A fallback that answers at once (what the offline reasoner does), and says if it was told
    of a draft."""

    streams = False

    def __init__(self) -> None:
        self.got_draft: object = "not asked"

    async def answer(self, question, subquestions, passages, facts, *, asker, said, draft, topic):
        self.got_draft = draft
        return Draft([Sentence("Ten days carry over.", [2])])


async def test_an_error_mid_stream_falls_back_after_the_draft_began(fake_openai):
    reasoner = http_reasoner(fake_openai)
    fake_openai.enqueue(
        Reply(content=json.dumps(ANSWER), piece=5, fail_after=6, error="overloaded")
    )
    fallback = Whole()
    settings = LLMSettings(provider="openai_like", base_url=fake_openai.base_url)
    both = FallbackReasoner(
        reasoner, fallback, StepTimeouts.every(10), recoverable=provider_errors(settings)
    )
    deltas: list[str] = []

    async def draft(delta: str) -> None:
        deltas.append(delta)

    result = await both.answer("How many days?", [], PASSAGES, [], draft=draft)

    assert deltas and "".join(deltas) != PLAIN  # some of the draft, then the error
    assert result == Draft([Sentence("Ten days carry over.", [2])])
    assert fallback.got_draft is None  # the offline answer comes whole
    assert take_llm_fallback().startswith("llm error: APIError")
    assert both.streams


async def test_a_connection_dropped_mid_stream_falls_back_too(fake_openai):
    """httpx raises the drop itself (the OpenAI SDK does not wrap errors once the stream began):
    it is a provider error all the same, not our bug."""
    reasoner = http_reasoner(fake_openai)
    fake_openai.enqueue(Reply(content=json.dumps(ANSWER), piece=5, drop_after=6))
    settings = LLMSettings(provider="openai_like", base_url=fake_openai.base_url)
    both = FallbackReasoner(
        reasoner, Whole(), StepTimeouts.every(10), recoverable=provider_errors(settings)
    )
    deltas: list[str] = []

    async def draft(delta: str) -> None:
        deltas.append(delta)

    result = await both.answer("How many days?", [], PASSAGES, [], draft=draft)

    assert deltas and result == Draft([Sentence("Ten days carry over.", [2])])
    assert take_llm_fallback().startswith("llm error: RemoteProtocolError")
