"""The offline reasoner as the per-step fallback of a configured LLM.

Everything real but the model: the handbook index, the answer loop, the LLM reasoner over the
OpenAI SDK, and the OpenAI wire format from ``FakeOpenAI`` on loopback. ``HandbookModel`` plays a
competent model on that wire; a test breaks one of its steps (slow, a 5xx, garbage) or takes the
server away, and reads the outcome in the Answer and its trace.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
from dataclasses import replace
from types import SimpleNamespace

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import SecretStr
from rich.console import Console

from agent.assistant import build_assistant, build_reasoner
from agent.fallback_reasoner import (
    FallbackReasoner,
    StepTimeouts,
    take_llm_fallback,
    turn_starts,
)
from agent.llm_reasoner import LLMReasoner
from agent.llms import PROBE, PROBE_TOKENS, build_llms, provider_errors
from agent.offline import OfflineReasoner
from agent.reasoning import Route
from agent.settings import LLMSettings, TelemetrySettings
from agent.telemetry import build_telemetry
from agent.turns import Answer, Turn
from bot.chat import terminal
from bot.identity.directory import FileDirectory
from ingest.errors import ConfigError
from testing.llm import FakeOpenAI, Reply, ScriptedLLM
from tests.conftest import ROOT

DIRECTORY = FileDirectory.load(ROOT / "examples" / "directory.yaml")
CARRY_OVER = ("alice", "How many vacation days can I carry over?")
LUNCH = ("bob", "What is on the lunch menu on Wednesday?")
GENEROUS = StepTimeouts.every(60.0)  # far beyond any reply that is not meant to be slow


def turn(user: str, text: str) -> Turn:
    person = DIRECTORY.find(user)
    return Turn(user_id=user, text=text, groups=person.groups, display_name=person.name)


def _between(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, re.DOTALL)
    assert m, f"no <{tag}> in the request"
    return m.group(1)


class HandbookModel:
    """A model that does each step well, from what the request holds, on the OpenAI wire.

    ``broken`` maps a step's reply schema ("GradeReply", "AnswerReply"…, "tools" for the tool step)
    to what that step gets instead: a slow reply, an HTTP error, garbage. ``picks`` are the tool
    step's calls ({"name", "arguments"}), none by default. ``calls`` lists the schemas asked for.
    """

    def __init__(
        self,
        broken: dict[str, Reply] | None = None,
        only_for: str = "",
        picks: list[dict] | None = None,
        delay_s: float = 0.0,
    ):
        self.broken = broken or {}
        self.picks = picks or []
        self.only_for = only_for  # break only requests whose question contains this
        self.delay_s = delay_s  # how long every good reply takes (a slow provider)
        self.calls: list[str] = []
        self.sentences: list[str] = []  # what it wrote as answers

    def __call__(self, body: dict) -> Reply:
        fmt = body.get("response_format") or {}
        offered = [t["function"]["name"] for t in body.get("tools") or []]
        if "search_docs" in offered:  # the tool step: the turn's tools, none forced
            schema = "tools"
        elif body.get("tools"):
            schema = body["tools"][0]["function"]["name"]
        elif fmt.get("type") == "json_schema":
            schema = fmt["json_schema"]["name"]
        elif fmt.get("type") == "json_object":
            schema = fmt["schema"]["title"]
        else:  # the plain-JSON retry carries the schema in its first message
            schema = re.search(r'"title": "(\w+Reply)"', body["messages"][0]["content"]).group(1)
        self.calls.append(schema)
        user = body["messages"][1]["content"]
        if schema in self.broken and self.only_for in user:
            return self.broken[schema]
        if schema == "tools":
            return Reply(content="", tool_calls=self.picks, delay_s=self.delay_s)
        reply = self._reply(schema, user)
        if body.get("tools"):  # the forced tool call the request asks for
            return Reply(tool_calls=[{"name": schema, "arguments": reply}], delay_s=self.delay_s)
        return Reply(content=json.dumps(reply), delay_s=self.delay_s)

    def _reply(self, schema: str, user: str) -> dict:
        if schema == "RouteReply":
            text = _between(user, "message")
            return {"kind": "question", "question": text, "customer_id": None}
        if schema == "PlanReply":
            return {"subquestions": [_between(user, "question")]}
        passages = re.findall(r'<passage n="(\d+)"[^>]*>\n(.*?)\n</passage>', user, re.DOTALL)
        if schema == "GradeReply":
            grades = [{"n": int(n), "label": "relevant", "score": 0.9} for n, _ in passages]
            return {"grades": grades}
        if schema == "RewriteReply":
            return {"query": _between(user, "question") + " policy"}
        if schema == "AnswerReply":
            first = next(s for s in re.split(r"(?<=\.)\s+", passages[0][1]) if len(s) > 20)
            self.sentences.append(first)
            return {"sentences": [{"text": first, "citations": [1]}], "missing": []}
        if schema == "CheckReply":
            n = len(re.findall(r"<sentence n=", user))
            verdicts = [{"n": i, "supported": True} for i in range(1, n + 1)]
            return {"sentences": verdicts, "answers_question": True, "reason": "grounded"}
        raise AssertionError(f"HandbookModel does not know {schema}")


def serve(fake: FakeOpenAI, model: HandbookModel) -> HandbookModel:
    fake.enqueue(*[model] * 60)  # more requests than any turn makes
    return model


def llm_settings(fake: FakeOpenAI, **overrides) -> LLMSettings:
    # No retries: a failed call falls back at once (the SDK's back-off would only slow tests).
    settings = dict(provider="openai_like", base_url=fake.base_url, model="fake", max_retries=0)
    return LLMSettings(**(settings | overrides))


def offline(handbook_deps) -> OfflineReasoner:
    reasoner = build_reasoner(handbook_deps)  # no LLM configured: the offline reasoner
    assert isinstance(reasoner, OfflineReasoner)
    return reasoner


def with_fallback(
    handbook_deps, settings: LLMSettings, timeouts=GENEROUS, pause_s=0.0, turn_budget_s=None
):
    return FallbackReasoner(
        LLMReasoner(*build_llms(settings)),
        offline(handbook_deps),
        timeouts,
        recoverable=provider_errors(settings),
        pause_s=pause_s,
        turn_budget_s=turn_budget_s,
    )


def ask(handbook_deps, reasoner, user: str, text: str) -> Answer:
    assistant = build_assistant(handbook_deps, reasoner=reasoner)
    return asyncio.run(assistant.answer(turn(user, text)))


STEPS = ("route", "tools", "plan", "grade", "rewrite", "answer", "check")


def fallbacks(answer: Answer) -> dict[str, set[str]]:
    """Step name → the reasons it fell back (steps that did not fall back are left out)."""
    out: dict[str, set[str]] = {}
    for s in answer.trace:
        if s.llm_fallback:
            out.setdefault(s.step, set()).add(s.llm_fallback)
    return out


def assert_cites_real_passages(handbook_deps, answer: Answer, user: str) -> None:
    assert answer.status == "answered", answer.text
    assert answer.citations and all(f"[{c.n}]" in answer.text for c in answer.citations)
    groups = DIRECTORY.find(user).groups
    for c in answer.citations:
        chunks = handbook_deps.index.chunks(c.doc_id, groups)
        assert chunks, f"{c.doc_id} is no document {user} may read"
        words = set(re.findall(r"\w+", " ".join(ch["text"] for ch in chunks).lower()))
        quote = c.quote.rsplit(maxsplit=1)[0] if len(c.quote) == 300 else c.quote  # cut mid-word
        assert set(re.findall(r"\w+", quote.lower())) <= words, (c.doc_id, c.quote)


# ---------------------------------------------------------------- whole turns over the handbook


def test_a_working_llm_makes_every_step_and_nothing_falls_back(handbook_deps, fake_openai):
    model = serve(fake_openai, HandbookModel())
    reasoner = with_fallback(handbook_deps, llm_settings(fake_openai))

    answer = ask(handbook_deps, reasoner, *CARRY_OVER)

    assert fallbacks(answer) == {}
    assert model.calls == [
        "RouteReply",
        "tools",
        "PlanReply",
        "GradeReply",
        "AnswerReply",
        "CheckReply",
    ]
    assert model.sentences[0] in answer.text  # the model's answer, not an offline one
    assert_cites_real_passages(handbook_deps, answer, "alice")


def test_a_step_slower_than_its_timeout_falls_back_and_the_trace_says_so(
    handbook_deps, fake_openai
):
    # Grading answers after 10 s; its timeout is 0.5 s, every other step's 60 s.
    serve(fake_openai, HandbookModel({"GradeReply": Reply(content="{}", delay_s=10.0)}))
    timeouts = replace(GENEROUS, grade=0.5)
    reasoner = with_fallback(handbook_deps, llm_settings(fake_openai), timeouts)

    answer = ask(handbook_deps, reasoner, *CARRY_OVER)

    assert fallbacks(answer) == {"grade": {"llm timeout after 0.5 s"}}
    grades = [s for s in answer.trace if s.step == "grade"]
    assert grades and all(s.ms < 5000 for s in grades)  # it did not wait for the slow reply
    assert [s.step for s in answer.trace if s.step in ("answer", "check")] == ["answer", "check"]
    assert_cites_real_passages(handbook_deps, answer, "alice")


def test_a_slow_llm_that_never_fails_spends_the_turns_budget_and_the_rest_is_offline(
    handbook_deps, fake_openai
):
    # Every reply takes 1 s, far within the step timeout; the LLM's share of a turn is 2.5 s.
    # Without the budget such a model, slower still, would outlast the loop's 90 s limit.
    model = serve(fake_openai, HandbookModel(delay_s=1.0))
    reasoner = with_fallback(handbook_deps, llm_settings(fake_openai), turn_budget_s=2.5)

    answer = ask(handbook_deps, reasoner, *CARRY_OVER)

    assert model.calls[0] == "RouteReply" and fallbacks(answer).get("route") is None
    steps = [(s.step, s.llm_fallback) for s in answer.trace if s.step in STEPS]
    first = next(i for i, (_, why) in enumerate(steps) if why)
    cut_short = re.fullmatch(r"llm timeout after (\d+\.\d) s", steps[first][1])
    assert cut_short and float(cut_short.group(1)) < 2.5, steps  # only what was left of 2.5 s
    spent = "llm skipped: the turn's 2.5 s for the llm are spent"
    assert steps[first + 1 :] and all(why == spent for _, why in steps[first + 1 :]), steps
    assert answer.status == "answered"
    assert_cites_real_passages(handbook_deps, answer, "alice")


async def test_the_turn_budget_counts_from_the_turns_start_and_only_inside_a_turn(
    handbook_deps, fake_openai
):
    now = [500.0]
    reasoner = FallbackReasoner(
        LLMReasoner(*build_llms(llm_settings(fake_openai))),
        offline(handbook_deps),
        GENEROUS,
        turn_budget_s=10.0,
        clock=lambda: now[0],
    )
    fake_openai.reply_json({"kind": "question", "question": "Hello?"})
    assert await reasoner.route("Hello", []) == Route("question", "Hello?")  # no turn: no budget
    assert take_llm_fallback() == ""

    async def turn(started: float, after: float) -> str:
        turn_starts(started)
        now[0] = started + after
        await reasoner.route("Hello", [])
        return take_llm_fallback()

    assert await asyncio.create_task(turn(1000.0, 10.5)) == (
        "llm skipped: the turn's 10 s for the llm are spent"
    )
    fake_openai.reply_json({"kind": "question", "question": "Hello?"})
    assert await asyncio.create_task(turn(2000.0, 9.0)) == ""  # a new turn, a new budget
    assert len(fake_openai.requests) == 2


def test_a_server_error_falls_back_for_that_step(handbook_deps, fake_openai):
    model = serve(fake_openai, HandbookModel({"AnswerReply": Reply(status=500, error="boom")}))
    reasoner = with_fallback(handbook_deps, llm_settings(fake_openai))

    answer = ask(handbook_deps, reasoner, *CARRY_OVER)

    assert fallbacks(answer) == {"answer": {"llm error: InternalServerError (HTTP 500)"}}
    assert model.calls[-1] == "CheckReply"  # the LLM still checks the offline answer
    assert_cites_real_passages(handbook_deps, answer, "alice")


def test_a_malformed_reply_falls_back(handbook_deps, fake_openai):
    model = serve(fake_openai, HandbookModel({"AnswerReply": Reply(content="Sure! Here it is.")}))
    reasoner = with_fallback(handbook_deps, llm_settings(fake_openai))

    answer = ask(handbook_deps, reasoner, *CARRY_OVER)

    assert fallbacks(answer) == {"answer": {"llm reply unusable: answer: ValueError"}}
    assert model.calls.count("AnswerReply") == 2  # the tool call, then the plain-JSON retry
    assert_cites_real_passages(handbook_deps, answer, "alice")


def test_a_refused_connection_makes_the_turn_the_offline_reasoners(handbook_deps):
    with FakeOpenAI() as gone:
        settings = llm_settings(gone)  # a server that was there at start-up, and then is not
    reasoner = with_fallback(handbook_deps, settings, pause_s=30.0)

    answer = ask(handbook_deps, reasoner, *CARRY_OVER)

    first, *rest = [s for s in answer.trace if s.llm_fallback]
    assert (first.step, first.llm_fallback) == ("route", "llm error: APIConnectionError")
    assert rest and all(s.llm_fallback.startswith("llm skipped for 30 s") for s in rest)
    assert {s.step for s in rest} >= {"tools", "plan", "grade", "answer", "check"}
    assert_cites_real_passages(handbook_deps, answer, "alice")
    alone = ask(handbook_deps, offline(handbook_deps), *CARRY_OVER)
    assert (answer.text, answer.citations) == (alone.text, alone.citations)


def test_concurrent_turns_see_only_their_own_fallbacks(handbook_deps, fake_openai):
    # The same reasoner serves both turns at once; only the carry-over turn's grading fails.
    broken = {"GradeReply": Reply(status=503, error="overloaded")}
    serve(fake_openai, HandbookModel(broken, only_for="carry over"))
    reasoner = with_fallback(handbook_deps, llm_settings(fake_openai))
    assistant = build_assistant(handbook_deps, reasoner=reasoner)

    async def both():
        return await asyncio.gather(
            assistant.answer(turn(*CARRY_OVER)), assistant.answer(turn(*LUNCH))
        )

    carry, lunch = asyncio.run(both())

    assert fallbacks(carry) == {"grade": {"llm error: InternalServerError (HTTP 503)"}}
    assert fallbacks(lunch) == {}
    assert_cites_real_passages(handbook_deps, carry, "alice")
    assert_cites_real_passages(handbook_deps, lunch, "bob")


def test_a_fallback_shows_in_the_span_the_metric_and_the_terminal_trace(handbook_deps, fake_openai):
    serve(fake_openai, HandbookModel({"AnswerReply": Reply(status=500, error="boom")}))
    exporter = InMemorySpanExporter()
    telemetry = build_telemetry(TelemetrySettings(), exporter=exporter)
    assistant = build_assistant(
        handbook_deps,
        reasoner=with_fallback(handbook_deps, llm_settings(fake_openai)),
        telemetry=telemetry,
    )

    answer = asyncio.run(assistant.answer(turn(*CARRY_OVER)))

    reason = "llm error: InternalServerError (HTTP 500)"
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert spans["footnote.answer"].attributes["footnote.llm_fallback"] == reason
    assert "footnote.llm_fallback" not in spans["footnote.check"].attributes
    registry = telemetry.metrics.registry
    assert registry.get_sample_value("footnote_llm_fallbacks_total", {"step": "answer"}) == 1
    assert registry.get_sample_value("footnote_llm_fallbacks_total", {"step": "check"}) == 0
    buffer = io.StringIO()
    original, terminal.console = terminal.console, Console(file=buffer, width=200)
    try:
        terminal.print_answer(answer, show_trace=True)
    finally:
        terminal.console = original
    assert f"offline: {reason}" in buffer.getvalue()


# ---------------------------------------------------------------- one step at a time


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (Reply(status=429, error="Rate limit reached"), "llm error: RateLimitError (HTTP 429)"),
        (Reply(status=502, error="bad gateway"), "llm error: InternalServerError (HTTP 502)"),
        (Reply(status=401, error="key revoked"), "llm error: AuthenticationError (HTTP 401)"),
    ],
)
async def test_provider_errors_at_run_time_fall_back(handbook_deps, fake_openai, failure, reason):
    fake_openai.enqueue(failure)
    reasoner = with_fallback(handbook_deps, llm_settings(fake_openai))
    question = "How many vacation days can I carry over, and by when must I use them?"

    got = await reasoner.plan(question)

    assert got == await offline(handbook_deps).plan(question)
    assert take_llm_fallback() == reason
    assert take_llm_fallback() == ""  # read once


async def test_our_own_bugs_are_raised_not_hidden(handbook_deps):
    # A scripted model with no reply left is a test bug: it raises AssertionError.
    reasoner = FallbackReasoner(
        LLMReasoner(ScriptedLLM(), ScriptedLLM()),
        offline(handbook_deps),
        GENEROUS,
        recoverable=provider_errors(LLMSettings()),
    )
    with pytest.raises(AssertionError, match="no reply left"):
        await reasoner.route("hi", [])

    class Misconfigured:
        async def grade(self, question, passages):
            raise ConfigError("prompt grade.md is broken: fix it")

    reasoner = FallbackReasoner(Misconfigured(), offline(handbook_deps), GENEROUS)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="grade.md"):
        await reasoner.grade("q", [])
    assert take_llm_fallback() == ""


async def test_after_a_failure_the_llm_is_skipped_until_the_pause_ends(handbook_deps, fake_openai):
    now = [1000.0]
    reasoner = FallbackReasoner(
        LLMReasoner(*build_llms(llm_settings(fake_openai))),
        offline(handbook_deps),
        GENEROUS,
        recoverable=provider_errors(LLMSettings()),
        pause_s=30.0,
        clock=lambda: now[0],
    )
    fake_openai.reply_error(500, "down")
    assert (await reasoner.route("Hello", [])).kind == "smalltalk"  # the offline route
    assert take_llm_fallback() == "llm error: InternalServerError (HTTP 500)"

    now[0] += 12.5
    await reasoner.route("Hello", [])
    assert take_llm_fallback() == (
        "llm skipped for 30 s after a failure 12.5 s ago (llm error: InternalServerError (HTTP 500))"
    )
    assert len(fake_openai.requests) == 1  # skipped: nothing was sent

    now[0] += 20.0
    fake_openai.reply_json({"kind": "question", "question": "Hello?"})
    assert await reasoner.route("Hello", []) == Route("question", "Hello?")
    assert take_llm_fallback() == "" and len(fake_openai.requests) == 2


async def test_an_unusable_reply_does_not_pause_the_llm(handbook_deps, fake_openai):
    reasoner = with_fallback(handbook_deps, llm_settings(fake_openai), pause_s=30.0)
    fake_openai.reply_text("no idea").reply_text("still no idea")
    await reasoner.plan("a and b?")
    assert take_llm_fallback().startswith("llm reply unusable: plan: ")

    fake_openai.reply_json({"subquestions": ["a?", "b?"]})
    assert await reasoner.plan("a and b?") == ["a?", "b?"]
    assert take_llm_fallback() == ""


# ---------------------------------------------------------------- start-up


def deps_with_llm(handbook_deps, settings: LLMSettings) -> SimpleNamespace:
    return SimpleNamespace(
        settings=handbook_deps.settings.model_copy(update={"llm": settings}),
        index=handbook_deps.index,
        embedders=handbook_deps.embedders,
        answer_model=handbook_deps.answer_model,
    )


def test_build_reasoner_wraps_the_llm_after_checking_that_it_answers(handbook_deps, fake_openai):
    fake_openai.reply_text("OK").reply_text("OK")
    settings = llm_settings(
        fake_openai, cheap_model="fake-mini", step_timeout_s=7.5, pause_after_failure_s=12
    )

    reasoner = build_reasoner(deps_with_llm(handbook_deps, settings))

    assert isinstance(reasoner, FallbackReasoner)
    assert isinstance(reasoner.primary, LLMReasoner)
    assert isinstance(reasoner.fallback, OfflineReasoner)
    assert reasoner.timeouts == StepTimeouts.every(7.5) and reasoner.pause_s == 12
    assert reasoner.turn_budget_s == 60.0  # the default share of the loop's 90 s
    assert sorted(b["model"] for b in fake_openai.bodies) == ["fake", "fake-mini"]
    assert all(b["messages"][-1]["content"] == PROBE for b in fake_openai.bodies)
    assert all(b["max_tokens"] == PROBE_TOKENS for b in fake_openai.bodies)


def test_an_unreachable_server_at_start_up_fails_loudly(handbook_deps):
    with FakeOpenAI() as gone:
        settings = llm_settings(gone)
    with pytest.raises(ConfigError, match="cannot be reached: check FOOTNOTE_LLM__BASE_URL"):
        build_reasoner(deps_with_llm(handbook_deps, settings))


def test_a_refused_key_at_start_up_fails_loudly_without_echoing_it(handbook_deps):
    with FakeOpenAI(require_key="right") as fake:
        settings = llm_settings(fake, api_key=SecretStr("sk-wrong-1234"))
        with pytest.raises(ConfigError, match="HTTP 401.*set FOOTNOTE_LLM__API_KEY") as info:
            build_reasoner(deps_with_llm(handbook_deps, settings))
    assert "sk-wrong" not in str(info.value) and info.value.__cause__ is None


def test_an_unknown_model_at_start_up_fails_loudly(handbook_deps, fake_openai):
    fake_openai.reply_error(404, "The model `fake` does not exist")
    with pytest.raises(ConfigError, match="HTTP 404.*FOOTNOTE_LLM__MODEL"):
        build_reasoner(deps_with_llm(handbook_deps, llm_settings(fake_openai)))


def test_a_missing_key_at_start_up_fails_loudly_before_any_request(handbook_deps, fake_openai):
    settings = llm_settings(fake_openai, provider="openai", model="gpt-4o")
    with pytest.raises(ConfigError, match="set FOOTNOTE_LLM__API_KEY"):
        build_reasoner(deps_with_llm(handbook_deps, settings))
    assert fake_openai.requests == []
