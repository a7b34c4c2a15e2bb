"""A configured LLM calls Footnote's tools; the loop runs them as the asker.

Everything real but the model: the handbook index, the CRM, the pending-actions store, the answer
loop, the LLM reasoner over the OpenAI SDK, and the OpenAI wire (``tools`` / ``tool_calls``) from
``FakeOpenAI``. The model asks for whatever a test scripts; what it gets is decided by the asker.
"""

from __future__ import annotations

import asyncio

import pytest

from agent.actions import MemoryPendingActions
from agent.assistant import build_assistant
from agent.turns import Answer
from testing.llm import Reply
from tests.agent.test_fallback_reasoner import (
    CARRY_OVER,
    HandbookModel,
    assert_cites_real_passages,
    fallbacks,
    llm_settings,
    serve,
    turn,
    with_fallback,
)

SALARY = "hr/salary-bands.pdf"
CUSTOMER = "4471"


def ask(handbook_deps, fake, model: HandbookModel, user: str, text: str, assistant=None) -> Answer:
    serve(fake.clear(), model)
    assistant = assistant or build_assistant(
        handbook_deps, reasoner=with_fallback(handbook_deps, llm_settings(fake))
    )
    return asyncio.run(assistant.answer(turn(user, text)))


def steps(answer: Answer, name: str) -> list:
    return [s for s in answer.trace if s.step == name]


def salary_doc(handbook_deps) -> str:
    return next(d for d in handbook_deps.index.documents() if d.endswith(SALARY))


def test_the_tools_are_offered_natively_and_nothing_is_recorded_when_none_is_called(
    handbook_deps, fake_openai
):
    model = HandbookModel()
    answer = ask(handbook_deps, fake_openai, model, *CARRY_OVER)

    [body] = [b for b in fake_openai.bodies if "search_docs" in str(b.get("tools"))]
    assert [t["function"]["name"] for t in body["tools"]] == [
        "search_docs",
        "get_document",
        "query_crm",
        "create_ticket",
    ]
    assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is True
    crm = next(t["function"] for t in body["tools"] if t["function"]["name"] == "query_crm")
    # what the model cannot decide is not in the schema: contact data, how many passages
    assert set(crm["parameters"]["properties"]) == {"customer_id"}
    assert fallbacks(answer) == {} and not steps(answer, "tools")
    assert_cites_real_passages(handbook_deps, answer, "alice")


def test_a_document_the_asker_may_not_read_gives_the_model_nothing(handbook_deps, fake_openai):
    doc = salary_doc(handbook_deps)
    picks = [
        {"name": "get_document", "arguments": {"doc_id": doc}},
        {"name": "get_document", "arguments": {"doc_id": "salary bands"}},
        {"name": "search_docs", "arguments": {"query": "salary band L4 senior engineer"}},
    ]
    question = "How many vacation days can I carry over?"

    bob = ask(handbook_deps, fake_openai, HandbookModel(picks=picks), "bob", question)

    [chosen] = steps(bob, "tools")
    assert chosen.decision == "3 call(s)" and not chosen.llm_fallback
    assert [s.decision for s in steps(bob, "get_document")] == ["none", "none"]
    [search] = steps(bob, "search_docs")
    assert SALARY not in search.reason
    assert not any(c.doc_id == doc for c in bob.citations)
    assert "Salary Bands" not in bob.text

    alice = ask(handbook_deps, fake_openai, HandbookModel(picks=picks[:1]), "alice", question)
    [opened] = steps(alice, "get_document")
    assert (opened.decision, opened.reason) == ("found", doc)  # the same call, a reader: found


def test_a_customer_record_is_cited_for_a_crm_reader_and_withheld_from_others(
    handbook_deps, fake_openai
):
    picks = [{"name": "query_crm", "arguments": {"customer_id": f"#{CUSTOMER}"}}]
    question = "Which plan is that customer on?"  # no number: only the model's call finds it

    dave = ask(handbook_deps, fake_openai, HandbookModel(picks=picks), "dave", question)

    [looked_up] = steps(dave, "query_crm")
    assert looked_up.decision == "found" and looked_up.reason == f"crm/customer/{CUSTOMER}"
    [cited] = [c for c in dave.citations if c.tool == "query_crm"]
    assert cited.doc_id == f"crm/customer/{CUSTOMER}" and f"[{cited.n}]" in dave.text

    bob = ask(handbook_deps, fake_openai, HandbookModel(picks=picks), "bob", question)

    assert [s.decision for s in steps(bob, "query_crm")] == ["denied"]
    assert not any(c.tool == "query_crm" for c in bob.citations)
    assert "ORD-" not in bob.text and "access to customer records" in bob.text


def test_a_ticket_the_model_asks_for_is_filed_only_when_the_asker_confirms(
    handbook_deps, fake_openai
):
    picks = [
        {"name": "create_ticket", "arguments": {"title": "Loud laptop fan", "body": "Fan noise"}}
    ]
    assistant = build_assistant(
        handbook_deps,
        pending=MemoryPendingActions(),
        reasoner=with_fallback(handbook_deps, llm_settings(fake_openai)),
    )
    before = assistant.desk.count()

    answer = ask(
        handbook_deps,
        fake_openai,
        HandbookModel(picks=picks),
        "bob",
        "My laptop fan is very loud, can someone look at it?",
        assistant=assistant,
    )

    assert answer.status == "needs_confirmation" and assistant.desk.count() == before
    action = answer.pending_action
    assert action.user_id == "bob" and action.title == "Loud laptop fan"
    assert action.body.startswith("Question: My laptop fan is very loud")
    other = asyncio.run(assistant.confirm(action.action_id, "alice", approve=True))
    assert "Only the person who asked" in other.text and assistant.desk.count() == before
    filed = asyncio.run(assistant.confirm(action.action_id, "bob", approve=True))
    assert filed.ticket and assistant.desk.count() == before + 1


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (
            Reply(tool_calls=[{"name": "delete_everything", "arguments": {}}]),
            "llm reply unusable: tools: a call names no offered tool",
        ),
        (
            Reply(tool_calls=[{"name": "search_docs", "arguments": '{"query": "leave'}]),
            "llm reply unusable: tools: search_docs arguments do not fit its schema",
        ),
        (  # a model may not widen the asker's access: no such argument
            Reply(
                tool_calls=[
                    {"name": "search_docs", "arguments": {"query": "salary", "groups": ["hr"]}}
                ]
            ),
            "llm reply unusable: tools: search_docs arguments do not fit its schema",
        ),
    ],
    ids=["unknown tool", "broken JSON", "an argument the tool has not"],
)
def test_a_bad_tool_call_is_ignored_and_the_step_falls_back(
    handbook_deps, fake_openai, reply, reason
):
    model = HandbookModel({"tools": reply})

    answer = ask(handbook_deps, fake_openai, model, *CARRY_OVER)

    assert fallbacks(answer) == {"tools": {reason}}
    [chosen] = steps(answer, "tools")
    assert chosen.decision == "0 call(s)"
    assert not steps(answer, "search_docs") and not steps(answer, "get_document")
    assert model.calls[-3:] == ["GradeReply", "AnswerReply", "CheckReply"]  # the LLM goes on
    assert_cites_real_passages(handbook_deps, answer, "alice")
