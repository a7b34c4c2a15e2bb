"""The LLM reasoner over the wire to a real OpenAI-compatible server (``make test-llm``).

Configured as a deployment sets it for vLLM or Ollama (provider openai_like, a base URL, a model
name), with the schema in the form this server reads (``json_object``). The model is a 270M base
model: what it says is noise, so nothing here reads its words. What must hold whatever it says:
every step's reply parses, a whole turn ends with a valid Answer whose citations are passages the
turn retrieved, and a garbled or late reply is made by the offline reasoner, which the trace says.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import get_args

import pytest

from agent.assistant import build_assistant, build_reasoner
from agent.fallback_reasoner import FallbackReasoner
from agent.llm_reasoner import LLMReasoner
from agent.llms import build_llms
from agent.reasoning import Check, Draft, Grade, Route
from agent.retrieval import Passage
from agent.turns import Answer, Status, Turn
from bot.directory import FileDirectory
from ingest.settings import LLMSettings
from tests.conftest import ROOT
from tests.llm.wire import ReplyProxy

pytestmark = pytest.mark.llm

DIRECTORY = FileDirectory.load(ROOT / "examples" / "directory.yaml")
QUESTION = ("alice", "How many vacation days can I carry over?")
STEPS = {"route", "plan", "grade", "answer", "check"}  # what every answered turn asks the LLM
# Far above a step of this model here (under 2 s); the late reply is held back beyond it.
STEP_TIMEOUT_S = 30.0
LATE = 6.0


def settings(proxy: ReplyProxy, **overrides) -> LLMSettings:
    base = dict(
        provider="openai_like",
        base_url=proxy.base_url,
        model="gemma3-270m",
        structured_output="json_object",
        step_timeout_s=STEP_TIMEOUT_S,
        max_retries=0,
        pause_after_failure_s=0,  # a late step must not send the steps after it offline
    )
    return LLMSettings(**(base | overrides))


def reasoner_for(handbook_deps, llm: LLMSettings) -> FallbackReasoner:
    """As ``footnote serve`` builds it: checked at start-up, the offline reasoner behind it."""
    deps = SimpleNamespace(
        settings=handbook_deps.settings.model_copy(update={"llm": llm}),
        index=handbook_deps.index,
        embedders=handbook_deps.embedders,
    )
    reasoner = build_reasoner(deps)
    assert isinstance(reasoner, FallbackReasoner) and isinstance(reasoner.primary, LLMReasoner)
    return reasoner


def ask(handbook_deps, reasoner, user: str, text: str) -> Answer:
    person = DIRECTORY.find(user)
    turn = Turn(user_id=user, text=text, groups=person.groups, display_name=person.name)
    return asyncio.run(build_assistant(handbook_deps, reasoner=reasoner).answer(turn))


def fallbacks(answer: Answer) -> dict[str, str]:
    return {s.step: s.llm_fallback for s in answer.trace if s.llm_fallback}


def assert_valid_answer(answer: Answer) -> None:
    """Whatever the model said: a known status, text, and citations of passages this turn read."""
    assert answer.status in get_args(Status) and answer.status != "error", answer.status
    assert answer.text.strip()
    read = {
        chunk.split("#", 1)[0]
        for s in answer.trace
        if s.step == "grade"
        for chunk in [*s.kept, *(d.split(":", 1)[0] for d in s.dropped)]
    }
    for c in answer.citations:
        assert c.doc_id in read, (c.doc_id, sorted(read))
        assert f"[{c.n}]" in answer.text


def some_passages(handbook_deps, n: int = 3) -> list[Passage]:
    groups = DIRECTORY.find("alice").groups
    return handbook_deps.retriever.search("vacation carry over", groups, top_k=n)


# ---------------------------------------------------------------- every step parses


def test_every_step_gets_a_reply_that_meets_its_schema(handbook_deps, proxy):
    reasoner = LLMReasoner(*build_llms(settings(proxy)))
    passages = some_passages(handbook_deps)
    assert passages

    async def steps():
        route = await reasoner.route(QUESTION[1], [])
        plan = await reasoner.plan(QUESTION[1])
        grades = await reasoner.grade(QUESTION[1], passages)
        query = await reasoner.rewrite(QUESTION[1], passages, "rewrite", [QUESTION[1]])
        draft = await reasoner.answer(QUESTION[1], plan, passages, [])
        check = await reasoner.check(QUESTION[1], draft, passages)
        return route, plan, grades, query, draft, check

    route, plan, grades, query, draft, check = asyncio.run(steps())

    assert isinstance(route, Route) and route.question
    assert plan and all(isinstance(q, str) and q for q in plan)
    assert len(grades) == len(passages) and all(isinstance(g, Grade) for g in grades)
    assert isinstance(query, str) and query.strip() and query != QUESTION[1]
    assert isinstance(draft, Draft)
    assert all(0 <= i < len(passages) for s in draft.sentences for i in s.sources)
    assert isinstance(check, Check)
    # One request per step, none retried: the server's grammar held each reply to its schema.
    asked = [(e.step, e.stream) for e in proxy.exchanges]
    assert asked == [
        ("route", False),
        ("plan", False),
        ("grade", False),
        ("rewrite", False),
        ("answer", True),
        *([("check", False)] if draft.sentences else []),
    ]
    assert all(e.parsed for e in proxy.exchanges), proxy.exchanges


# ---------------------------------------------------------------- whole turns


def test_a_turn_ends_with_a_valid_answer_made_by_the_llm(handbook_deps, proxy):
    reasoner = reasoner_for(handbook_deps, settings(proxy))

    answer = ask(handbook_deps, reasoner, *QUESTION)

    assert fallbacks(answer) == {}
    assert_valid_answer(answer)
    asked = {e.step for e in proxy.exchanges}
    assert STEPS - {"check"} <= asked, asked  # check only when the draft has sentences
    assert all(e.parsed for e in proxy.exchanges if e.step in STEPS), proxy.exchanges


@pytest.mark.parametrize("step", ["grade", "answer"])  # a plain reply, and a streamed one
def test_a_garbled_reply_is_made_offline_and_the_trace_says_so(handbook_deps, proxy, step):
    reasoner = reasoner_for(handbook_deps, settings(proxy))
    proxy.sabotage(garble=(step,))

    answer = ask(handbook_deps, reasoner, *QUESTION)

    assert fallbacks(answer).get(step, "").startswith(f"llm reply unusable: {step}: ")
    assert set(fallbacks(answer)) == {step}  # the other steps were the LLM's
    garbled = [e for e in proxy.exchanges if e.sabotaged]
    assert {e.step for e in garbled} == {step, f"{step} (retry)"}  # retried once, in plain JSON
    assert_valid_answer(answer)


def test_a_reply_later_than_the_step_timeout_is_made_offline_and_the_trace_says_so(
    handbook_deps, proxy
):
    reasoner = reasoner_for(handbook_deps, settings(proxy, step_timeout_s=LATE - 3))
    proxy.sabotage(hold={"route": LATE})

    answer = ask(handbook_deps, reasoner, *QUESTION)

    assert fallbacks(answer) == {"route": f"llm timeout after {LATE - 3:.1f} s"}
    route = next(s for s in answer.trace if s.step == "route")
    assert route.ms < (LATE - 1) * 1000  # it did not wait for the late reply
    assert_valid_answer(answer)
