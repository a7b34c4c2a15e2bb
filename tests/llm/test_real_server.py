"""The LLM reasoner over the wire to a real OpenAI-compatible server (``make test-llm``).

Configured as a deployment sets it for vLLM or Ollama (provider openai_like, a base URL, a model
name), with the schema in the form this server reads (``json_object``). The model is a 270M base
model: what it says is noise, so nothing here reads its words. What must hold whatever it says:
every step's reply parses, a whole turn ends with a valid Answer whose citations are passages the
turn retrieved, and a garbled or late reply is made by the offline reasoner, which the trace says.
"""

from __future__ import annotations

import asyncio
import re
import time
from types import SimpleNamespace
from typing import get_args

import pytest

from agent.assistant import build_assistant, build_reasoner
from agent.fallback_reasoner import FallbackReasoner, take_llm_fallback
from agent.llm_reasoner import LLMReasoner
from agent.llms import build_llms
from agent.reasoning import Check, Draft, Grade, Route, Sentence, UnusableReply
from agent.retrieval import Passage
from agent.settings import LLMSettings
from agent.tools import ARGS
from agent.turns import Answer, Status, Turn
from bot.identity.directory import FileDirectory
from tests.conftest import ROOT
from tests.llm.wire import ReplyProxy

pytestmark = pytest.mark.llm

DIRECTORY = FileDirectory.load(ROOT / "examples" / "directory.yaml")
QUESTION = ("alice", "How many vacation days can I carry over?")
# The base model can run on (an endless list, a string never closed): cut there, such a reply is
# unusable and its step made offline. A cut reply of 128 tokens takes 3-20 s (the server's grammar
# weighs every token of Gemma's 262k vocabulary), up to 50 s on a slow, busy machine.
REPLY_TOKENS = 128
STEP_TIMEOUT_S = 120.0
# The LLM's share of a turn: what a deployment has by default. Steps after it is spent are made
# offline, so a whole turn ends in about this long however slow the machine.
TURN_BUDGET_S = 60.0
SPENT = f"llm skipped: the turn's {TURN_BUDGET_S:g} s for the llm are spent"


def settings(proxy: ReplyProxy, **overrides) -> LLMSettings:
    base = dict(
        provider="openai_like",
        base_url=proxy.base_url,
        model="gemma3-270m",
        structured_output="json_object",
        step_timeout_s=STEP_TIMEOUT_S,
        turn_budget_s=TURN_BUDGET_S,
        max_reply_tokens=REPLY_TOKENS,
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
        answer_model=handbook_deps.answer_model,
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
    """Whatever the model said: a known status, text, and citations of passages this turn read
    or of records its tools fetched."""
    assert answer.status in get_args(Status) and answer.status != "error", answer.status
    assert answer.text.strip()
    read = {
        chunk.split("#", 1)[0]
        for s in answer.trace
        if s.step == "grade"
        for chunk in [*s.kept, *(d.split(":", 1)[0] for d in s.dropped)]
    }
    ran = {s.step for s in answer.trace if s.decision == "found"}  # tools that returned a record
    for c in answer.citations:
        if c.tool:  # a tool's result the turn fetched as the asker (a CRM record)
            assert c.tool in ran, (c.tool, sorted(ran))
        else:
            assert c.doc_id in read, (c.doc_id, sorted(read))
        assert f"[{c.n}]" in answer.text


def some_passages(handbook_deps, n: int = 3) -> list[Passage]:
    groups = DIRECTORY.find("alice").groups
    return handbook_deps.retriever.search("vacation carry over", groups, top_k=n)


def assert_replies_meet_their_schema_or_were_cut(proxy: ReplyProxy) -> None:
    """The server's grammar held every reply that ended by itself to its step's schema."""
    replies = [e for e in proxy.exchanges if not e.sabotaged and not e.step.endswith("(retry)")]
    assert replies
    assert all(e.parsed or e.cut for e in replies), [e for e in replies if not e.parsed]


def within_budget(reason: str) -> bool:
    """The turn's budget ran out: the step waited only what was left, or was not asked at all."""
    late = re.fullmatch(r"llm timeout after (\d+\.\d) s", reason)
    return reason == SPENT or (late is not None and float(late.group(1)) <= TURN_BUDGET_S)


def assert_fell_back_only_where_cut(answer: Answer, proxy: ReplyProxy, skip: str = "") -> None:
    """A step the LLM did not make had its reply cut at max_tokens, or came after the turn's budget
    for the LLM was spent; nothing failed."""
    cut = {e.step for e in proxy.exchanges if e.cut}
    for step, reason in fallbacks(answer).items():
        if step != skip:
            assert (
                reason.startswith(f"llm reply unusable: {step}: ") and step in cut
            ) or within_budget(reason), (step, reason)


# ---------------------------------------------------------------- every step parses


def test_every_step_gets_a_reply_that_meets_its_schema(handbook_deps, proxy):
    reasoner = LLMReasoner(*build_llms(settings(proxy)))
    passages = some_passages(handbook_deps)
    assert passages
    q = QUESTION[1]

    async def attempt(call):
        try:
            return await call
        except UnusableReply as e:
            return e

    async def steps():
        draft = await attempt(reasoner.answer(q, [q], passages, []))
        made = draft if isinstance(draft, Draft) and draft.sentences else None
        return {
            "route": await attempt(reasoner.route(q, [])),
            "plan": await attempt(reasoner.plan(q)),
            "grade": await attempt(reasoner.grade(q, passages)),
            "rewrite": await attempt(reasoner.rewrite(q, passages, "rewrite", [q])),
            "answer": draft,
            "check": await attempt(
                reasoner.check(q, made or Draft([Sentence("Ten days carry over.", [0])]), passages)
            ),
        }

    got = asyncio.run(steps())

    kinds = {"route": Route, "plan": list, "grade": list, "rewrite": str, "answer": Draft}
    kinds["check"] = Check
    for step, value in got.items():
        if isinstance(value, UnusableReply):  # only a reply cut at max_tokens may be unusable
            assert any(e.cut for e in proxy.exchanges if e.step == step), (step, value)
        else:
            assert isinstance(value, kinds[step]), (step, value)
    if isinstance(got["grade"], list):
        assert len(got["grade"]) == len(passages) and all(
            isinstance(g, Grade) for g in got["grade"]
        )
    if isinstance(got["answer"], Draft):
        assert all(0 <= i < len(passages) for s in got["answer"].sentences for i in s.sources)
    first = {}
    for e in proxy.exchanges:
        first.setdefault(e.step, e.stream)
    assert {k: v for k, v in first.items() if "retry" not in k} == {
        "answer": True,  # the one streamed step
        "route": False,
        "plan": False,
        "grade": False,
        "rewrite": False,
        "check": False,
    }
    assert_replies_meet_their_schema_or_were_cut(proxy)


# ---------------------------------------------------------------- whole turns


def test_a_turn_ends_with_a_valid_answer_made_by_the_llm(handbook_deps, proxy):
    reasoner = reasoner_for(handbook_deps, settings(proxy))

    answer = ask(handbook_deps, reasoner, *QUESTION)

    assert_valid_answer(answer)
    assert "route" in {e.step for e in proxy.exchanges}
    assert_replies_meet_their_schema_or_were_cut(proxy)
    assert_fell_back_only_where_cut(answer, proxy)


def test_a_garbled_reply_is_made_offline_and_the_trace_says_so(handbook_deps, proxy):
    # The turn's budget, not the machine's speed, bounds how long the other steps take.
    reasoner = reasoner_for(handbook_deps, settings(proxy))
    proxy.sabotage(garble=("route",))

    answer = ask(handbook_deps, reasoner, *QUESTION)

    assert fallbacks(answer)["route"].startswith("llm reply unusable: route: ")
    garbled = {e.step for e in proxy.exchanges if e.sabotaged}
    assert garbled == {"route", "route (retry)"}  # retried once, in plain JSON
    assert_fell_back_only_where_cut(answer, proxy, skip="route")
    assert_valid_answer(answer)


def test_a_garbled_streamed_answer_is_made_offline(handbook_deps, proxy):
    reasoner = reasoner_for(handbook_deps, settings(proxy))
    proxy.sabotage(garble=("answer",))
    passages = some_passages(handbook_deps)

    async def answer_step():
        draft = await reasoner.answer(QUESTION[1], [QUESTION[1]], passages, [])
        return draft, take_llm_fallback()

    draft, reason = asyncio.run(answer_step())

    assert reason.startswith("llm reply unusable: answer: "), reason
    assert isinstance(draft, Draft)  # the offline reasoner's
    assert [(e.step, e.stream) for e in proxy.exchanges if e.sabotaged] == [
        ("answer", True),
        ("answer (retry)", False),
    ]


def test_a_reply_later_than_the_step_timeout_is_made_offline_and_the_trace_says_so(
    handbook_deps, proxy
):
    # After the late step, the LLM is left alone for a while: the rest of the turn is offline.
    llm = settings(proxy, step_timeout_s=2.0, pause_after_failure_s=600)
    reasoner = reasoner_for(handbook_deps, llm)
    proxy.sabotage(hold={"route": 5.0})

    answer = ask(handbook_deps, reasoner, *QUESTION)

    reasons = fallbacks(answer)
    assert reasons.pop("route") == "llm timeout after 2.0 s"
    assert reasons and all(
        r.startswith("llm skipped for 600 s after a failure") for r in reasons.values()
    )
    route = next(s for s in answer.trace if s.step == "route")
    assert route.ms < 4000  # it did not wait for the late reply
    assert_valid_answer(answer)


def test_the_tool_step_parses_or_falls_back_and_the_turn_ends_valid(handbook_deps, proxy):
    """The turn's tools go to the server natively (``tools``, none forced); whatever comes back,
    no call or calls that fit, or a reply that does not (made offline), the turn ends valid."""
    reasoner = reasoner_for(handbook_deps, settings(proxy))

    answer = ask(handbook_deps, reasoner, "dave", "Which plan is customer #4471 on?")

    [tools] = [e for e in proxy.exchanges if e.step == "tools"]
    assert not tools.stream
    reason = fallbacks(answer).get("tools", "")
    assert not reason or reason.startswith("llm reply unusable: tools: "), reason
    ran = [s for s in answer.trace if s.step in ARGS and s.llm_fallback == ""]
    assert all(s.decision in ("found", "none", "denied", "missing", "proposed") for s in ran)
    assert_valid_answer(answer)
    if answer.status == "needs_confirmation":  # a model's create_ticket only proposes one
        assert answer.pending_action is not None and answer.pending_action.user_id == "dave"


# ---------------------------------------------------------------- the answer, streamed


def test_the_answer_streams_its_draft_from_the_real_server(handbook_deps, proxy):
    """The draft comes from the server's SSE chunks as it writes them: text deltas, the first
    before the reply ends, together the plain text of the sentences (shape only: the base model's
    words are noise)."""
    reasoner = LLMReasoner(*build_llms(settings(proxy)))
    passages = some_passages(handbook_deps)
    q = QUESTION[1]
    deltas: list[tuple[float, str]] = []

    async def draft(delta: str) -> None:
        deltas.append((time.perf_counter(), delta))

    async def answer() -> Draft | UnusableReply:
        try:
            return await reasoner.answer(q, [q], passages, [], draft=draft)
        except UnusableReply as e:  # a reply cut at max_tokens: the draft streamed all the same
            return e

    t0 = time.perf_counter()
    got = asyncio.run(answer())
    done = time.perf_counter()

    [exchange] = [e for e in proxy.exchanges if e.step == "answer"]
    assert exchange.stream
    if isinstance(got, UnusableReply):
        assert exchange.cut, got
    else:
        assert isinstance(got, Draft)
        assert all(0 <= i < len(passages) for s in got.sentences for i in s.sources)
    assert all(isinstance(d, str) and d for _, d in deltas)
    if deltas:
        text = "".join(d for _, d in deltas)
        assert not re.search(r"\[\d+\]", text)  # markers never shown
        assert deltas[0][0] < done
        print(
            f"\nanswer step: first delta after {deltas[0][0] - t0:.2f} s, reply done after "
            f"{done - t0:.2f} s ({len(deltas)} deltas)"
        )
    else:  # no sentence text at all: the grammar let the model write only the other fields
        assert not isinstance(got, Draft) or not any(s.text for s in got.sentences)
