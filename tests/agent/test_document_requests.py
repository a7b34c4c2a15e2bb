"""A whole document from a turn ("show me the travel policy") and small-to-big, over the real
handbook index: only what the asker (and in a channel every member) may read comes back."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from agent.actions import MemoryPendingActions
from agent.assistant import build_assistant
from agent.document_requests import asked_document
from agent.loop import AnswerLoop, Run, _thin
from agent.tools import TurnTools
from agent.turns import Turn
from bot.identity.directory import FileDirectory
from ingest.index import allowed
from tests.conftest import ROOT

DIRECTORY = FileDirectory.load(ROOT / "examples" / "directory.yaml")
SALARY = "hr/salary-bands.pdf"
TRAVEL = "general/travel-policy.txt"


def turn(user: str, text: str, **kw) -> Turn:
    person = DIRECTORY.find(user)
    return Turn(user_id=user, text=text, groups=person.groups, display_name=person.name, **kw)


@pytest.fixture(scope="module")
def assistant(handbook_deps):
    return build_assistant(handbook_deps, pending=MemoryPendingActions())


def ask(assistant, user: str, text: str, **kw):
    return asyncio.run(assistant.answer(turn(user, text, **kw)))


def opened(answer) -> str | None:
    step = next((s for s in answer.trace if s.step == "get_document"), None)
    return step.reason if step and step.decision == "found" else None


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("show me the travel policy", "travel policy"),
        ("Open the expense policy for contractors.", "expense policy for contractors"),
        ("Could you pull up our VPN setup doc, please?", "VPN setup"),
        ("show me how to file expenses", None),
        ("Show me customer 4502", None),
        ("What is the travel policy?", None),
        # other languages' requests are rules of their own files
        ("Zeig mir bitte die Reiserichtlinie.", "Reiserichtlinie"),
        ("Zeige mir, wie ich Spesen abrechne", None),
        ("Покажи мені путівник офісу", "путівник офісу"),  # Russian's rule reads it too
        ("покажи мне, как оформить отпуск", None),
        ("请给我看一下员工指南", "员工指南"),
        ("出張規程を見せてください", "出張規程"),
    ],
)
def test_a_request_to_see_a_document_names_it(text, name):
    assert asked_document(text) == name


@pytest.mark.parametrize(
    ("user", "text", "doc"),
    [
        ("bob", "Покажи мені путівник Київського офісу", "general/kyiv-office-uk.md"),
        ("bob", "请给我看上海办公室员工指南", "general/shanghai-office-zh.md"),
    ],
)
def test_a_request_in_the_documents_language_opens_it(assistant, user, text, doc):
    a = ask(assistant, user, text)
    assert a.status == "answered" and opened(a).endswith(doc)
    assert {c.doc_id for c in a.citations} == {opened(a)}


def test_show_me_the_travel_policy_gives_its_outline_with_a_citation_per_section(assistant):
    a = ask(assistant, "erin", "show me the travel policy")
    assert a.status == "answered" and opened(a).endswith(TRAVEL)
    assert a.text.startswith("Business Travel Policy (2026-02-01)")
    assert len(a.citations) >= 3 and {c.doc_id for c in a.citations} == {opened(a)}
    assert all(f"[{c.n}]" in a.text for c in a.citations)
    assert len({c.anchor for c in a.citations}) == len(a.citations)  # each its own section


def test_a_forbidden_document_is_never_shown_the_allowed_reader_gets_it(assistant, handbook_deps):
    for user in ("bob", "erin", "dave"):  # none of them is in hr
        assert "hr" not in DIRECTORY.find(user).groups
        a = ask(assistant, user, "show me the salary bands")
        assert not any(c.doc_id.endswith(SALARY) for c in a.citations), user
        assert "Salary Bands 2026" not in a.text and opened(a) is None
    a = ask(assistant, "alice", "show me the salary bands")
    assert opened(a).endswith(SALARY) and a.text.startswith("Salary Bands 2026")
    # in a channel with someone outside hr, not even the hr asker gets it
    bob = DIRECTORY.find("bob").groups
    a = ask(assistant, "alice", "show me the salary bands", member_groups=(bob,))
    assert opened(a) is None and not any(c.doc_id.endswith(SALARY) for c in a.citations)


def test_sections_are_the_documents_chunks_joined_under_the_same_access(assistant, handbook_deps):
    bob, alice = (TurnTools(assistant.box, turn(u, "x")) for u in ("bob", "alice"))
    doc_id = next(d for d in handbook_deps.index.documents() if d.endswith(SALARY))
    assert bob.sections(doc_id) == [] and "No document" in bob.get_document(doc_id)
    sections = alice.sections(doc_id)
    chunks = handbook_deps.index.chunks(doc_id, allowed(["hr"]))
    assert [s.chunk_id for s in sections] == list(dict.fromkeys(c["parent_id"] for c in chunks))
    assert all(s.title == "Salary Bands 2026" for s in sections)


def test_a_thin_passage_is_answered_from_its_whole_section(assistant, handbook_deps):
    """Small-to-big: a passage of one short line gives way to its section; not for a reader
    who may not read the document."""
    doc_id = next(d for d in handbook_deps.index.documents() if d.endswith(SALARY))
    alice = TurnTools(assistant.box, turn("alice", "x"))
    whole = next(s for s in alice.sections(doc_id) if len(s.body.split()) > 20)
    thin = replace(whole, chunk_id=f"{doc_id}#0", text=f"{whole.breadcrumbs}\n\nL4")
    assert _thin(thin) and not _thin(whole)
    loop = AnswerLoop(assistant.reasoner)
    run = Run(turn=turn("alice", "L4"), tools=alice, progress=None)
    (widened,) = asyncio.run(loop._widen(run, [thin]))
    assert widened.chunk_id == whole.parent_id == thin.parent_id and widened.text == whole.text
    assert run.trace[-1].step == "widen"

    bob = Run(
        turn=turn("bob", "L4"), tools=TurnTools(assistant.box, turn("bob", "L4")), progress=None
    )
    (kept,) = asyncio.run(loop._widen(bob, [thin]))
    assert kept is thin and not bob.trace


def test_with_an_llm_the_request_is_read_from_the_askers_words(handbook_deps):
    """A model's route may reword "show me …" into a question; the asker's own words still open
    the document, and the model is asked nothing more."""
    from agent.llm_reasoner import LLMReasoner
    from testing.llm import ScriptedLLM

    cheap, strong = ScriptedLLM(), ScriptedLLM()
    cheap.enqueue({"kind": "question", "question": "What does the business travel policy say?"})
    assistant = build_assistant(handbook_deps, reasoner=LLMReasoner(cheap, strong))
    a = ask(assistant, "bob", "show me the travel policy")
    assert opened(a).endswith(TRAVEL) and a.text.startswith("Business Travel Policy")
    assert len(cheap.prompts) == 1 and not strong.prompts and not cheap.replies
