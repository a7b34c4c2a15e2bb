"""The answer loop as a LlamaIndex Workflow: route → tools → plan → search → grade → (rewrite |
broaden → search again, at most 3 rounds) → answer → check → reply.

The tools step asks the reasoner which tools to call beyond the loop's own search (an LLM's native
tool calling; the offline reasoner asks for none, its routing reaches them) and runs them with the
asker's tools (``agent.tool_calls``).

All per-turn state travels in ``Run`` inside the events, so concurrent turns share nothing but
the read-only dependencies on the workflow.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

# The standalone engine, not ``llama_index.core.workflow``: the same classes without the ~1.4 s
# import of LlamaIndex's indices and chat engines, which a turn never uses.
from workflows import Workflow, step
from workflows.events import Event, StartEvent, StopEvent

from agent.conclusions import tool_passage
from agent.document_requests import asked_document, documents_titled, find_document, outline
from agent.drafts import Drafting
from agent.fallback_reasoner import take_llm_fallback
from agent.followups import resolve
from agent.messages import quote_list, say
from agent.passages import Passage, one_of_each
from agent.phrasing import pattern
from agent.reasoning import Draft, Grade, Reasoner, Route, Sentence
from agent.recall import filed
from agent.scope import applicable, audiences_of, readers_audiences
from agent.second_source import Fallback
from agent.telemetry import TurnTelemetry
from agent.tool_calls import Outcome, run_call
from agent.tools import NO_CRM_ACCESS_HERE, TurnTools
from agent.turns import Answer, Citation, Conflict, Status, TraceStep, Turn, as_searched, quoted
from ingest.chunk import count_tokens
from ingest.languages import detect_lang

MAX_ROUNDS = 3
MAX_PASSAGES = 8
# Searches per turn are bounded whatever the question: at most this many sub-questions, each
# searched at most MAX_ROUNDS times with a query of at most MAX_QUERY_CHARS.
MAX_SUBQUESTIONS = 4
MAX_QUERY_CHARS = 500
# Tool calls a model may make per turn; the rest of a longer list is left out.
MAX_TOOL_CALLS = 4
# Small-to-big: a passage under THIN_TOKENS on one line is read with its whole section, when the
# section is at most MAX_SECTION_TOKENS long.
THIN_TOKENS = 8
MAX_SECTION_TOKENS = 600
# An async function the loop tells its steps to; the bot may run it on another event loop.
Progress = Callable[[str], Coroutine[Any, Any, None]]


@dataclass
class Run:
    turn: Turn
    tools: TurnTools
    progress: Progress | None
    started: float = field(default_factory=time.perf_counter)
    route: Route | None = None
    question: str = ""  # what the documents are asked (CRM ids removed)
    subquestions: list[str] = field(default_factory=list)
    queries: dict[str, str] = field(default_factory=dict)  # sub-question → current query
    tried: list[str] = field(default_factory=list)
    round: int = 0
    pool: dict[str, dict[str, Passage]] = field(
        default_factory=dict
    )  # sub-question → chunk_id → passage
    grades: dict[str, dict[str, Grade]] = field(default_factory=dict)
    # parts the answer step found unanswered, searched again once with a rewritten query
    again: set[str] = field(default_factory=set)
    retried: set[str] = field(default_factory=set)
    # in a channel of several audiences, the rule of an audience not quoted was searched for once
    audiences_searched: bool = False
    facts: list[str] = field(default_factory=list)  # tool results, as lines (for the LLM's prompt)
    tool_results: list[Passage] = field(default_factory=list)  # tool results, citable passages
    # passages a model's own tool calls found, graded with every sub-question's search results
    tool_found: list[Passage] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # our own remarks for the answer (CRM access)
    lang: str = "en"
    said: str = ""  # the previous answer, when this turn follows up on it
    # the document the conversation so far is about: searched beside the whole index, and every
    # other passage the answer step reads is its
    topic: str = ""
    # the documents the message names by their whole title: searched beside the whole index, and
    # the answer step reads only theirs when it found any
    named: list[str] = field(default_factory=list)
    trace: list[TraceStep] = field(default_factory=list)
    telemetry: TurnTelemetry | None = None  # the turn's span and metrics; None records nothing
    # Told the answer's text as it is written; the turn's first answer only (a draft after another
    # search or from the second source is not streamed: the final answer replaces what was)
    draft: Drafting | None = None

    def take_draft(self) -> Drafting | None:
        draft, self.draft = self.draft, None
        return draft

    async def say(self, text: str) -> None:
        if self.progress is not None:
            await self.progress(text)

    def record(self, step_name: str, t0: float, llm_fallback: str | None = None, **kw: Any) -> None:
        """``llm_fallback``: why the step's reasoner call fell back, when the caller took it
        already; by default it is taken here."""
        self.trace.append(
            TraceStep(
                round=self.round,
                step=step_name,
                ms=round((time.perf_counter() - t0) * 1000, 1),
                # set by the reasoner call this step just made
                llm_fallback=take_llm_fallback() if llm_fallback is None else llm_fallback,
                **kw,
            )
        )
        if self.telemetry is not None:
            self.telemetry.step(self.trace[-1])

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """An event carries the turn's one ``Run`` as it is: pydantic checks only that it is a
        ``Run``, and neither copies it nor validates the tools inside."""
        return core_schema.is_instance_schema(cls)


class RunStart(StartEvent):
    run: Run


class _Ev(Event):
    run: Run


class ToolsEvent(_Ev):
    pass


class PlanEvent(_Ev):
    pass


class SearchEvent(_Ev):
    pass


class GradeEvent(_Ev):
    pass


class AnswerEvent(_Ev):
    pass


class AnswerLoop(Workflow):
    def __init__(self, reasoner: Reasoner, fallback: Fallback | None = None, timeout: float = 90.0):
        super().__init__(timeout=timeout)
        self.reasoner = reasoner
        self.fallback = fallback  # an optional second source, tried when the rounds find nothing

    @step
    async def route(self, ev: RunStart) -> ToolsEvent | StopEvent:
        run = ev.run
        t0 = time.perf_counter()
        run.lang = detect_lang(run.turn.text)
        ticket = filed(run.turn.text, run.turn.history)
        if ticket:  # "what was the ticket number?": the chat itself says, no search, no model
            run.record("route", t0, decision="recalled", reason=ticket[0])
            text = say(run.lang, "ticket_was", id=ticket[0], title=quoted(ticket[1]))
            return StopEvent(result=Answer(text, "answered", trace=run.trace, lang=run.lang))
        # a short follow-up is read against the conversation before anything else sees it
        resolved = resolve(run.turn.text, run.turn.history)
        if resolved.follow_up:
            run.said = next(
                (m.text for m in reversed(run.turn.history) if m.role == "assistant"), ""
            )
        route = await self.reasoner.route(resolved.question, run.turn.history)
        run.route = route
        run.record("route", t0, decision=route.kind, reason=route.question)
        if route.kind == "smalltalk":
            reply = say(run.lang, "smalltalk")
            return StopEvent(result=Answer(reply, "smalltalk", trace=run.trace, lang=run.lang))
        if route.kind == "ticket":
            action = run.tools.create_ticket(
                route.ticket_title or route.question, _ticket_body(run.turn.text, [])
            )
            if action is None:
                text = say(run.lang, "tickets_unavailable")
                return StopEvent(result=Answer(text, "error", trace=run.trace, lang=run.lang))
            text = say(run.lang, "ticket_proposal", title=quoted(action.title))
            return StopEvent(
                result=Answer(
                    text,
                    "needs_confirmation",
                    pending_action=action,
                    trace=run.trace,
                    lang=run.lang,
                )
            )
        # "show me the travel policy": the document itself, if the asker may read it. The
        # offline route spells the words right; a model's route may reword the request.
        name = None
        if route.kind == "question":
            name = asked_document(route.question) or asked_document(resolved.question)
        if name:
            await run.say(f"opening {name}…")
            t1 = time.perf_counter()
            sections = await asyncio.to_thread(find_document, run.tools, name)
            run.record(
                "get_document",
                t1,
                decision="found" if sections else "none",
                reason=sections[0].doc_id if sections else name,
                queries=[name],
                hits=len(sections),
            )
            if sections:
                text, citations = outline(sections, run.lang)
                return StopEvent(
                    result=Answer(
                        text, "answered", citations, trace=run.trace, searched=[name], lang=run.lang
                    )
                )
        if route.kind == "crm" and route.customer_id:
            await run.say(f"looking up customer {route.customer_id}…")
            t1 = time.perf_counter()
            contact = bool(pattern("contact_asked").search(run.turn.text))
            record = await asyncio.to_thread(run.tools.query_crm, route.customer_id, contact)
            denied = bool(record.get("denied"))
            run.record(
                "query_crm",
                t1,
                decision="denied" if denied else "found" if "error" not in record else "missing",
                reason=route.customer_id,
            )
            if denied:  # nothing of the record; the documents may still answer the rest
                here = bool(run.turn.member_groups) and record.get("error") == NO_CRM_ACCESS_HERE
                run.notes.append(say(run.lang, "no_crm_access_here" if here else "no_crm_access"))
            elif "error" in record:
                run.notes.append(say(run.lang, "no_customer", customer=route.customer_id))
            else:
                passage = tool_passage(record, run.turn.today or date.today(), run.lang)
                run.tool_results.append(passage)
                run.facts = passage.text.splitlines()
        return ToolsEvent(run=run)

    @step
    async def tools(self, ev: ToolsEvent) -> PlanEvent | StopEvent:
        """The tools a model asks for, run as the asker; recorded only when some were asked for
        or the model's choice fell back."""
        run = ev.run
        assert run.route is not None  # the route step set it
        t0 = time.perf_counter()
        calls = await self.reasoner.pick_tools(
            run.route.question, run.turn.history, run.tools.as_llama_tools
        )
        fell_back = take_llm_fallback()
        calls = calls[:MAX_TOOL_CALLS]
        if not calls and not fell_back:
            return PlanEvent(run=run)
        run.record(
            "tools",
            t0,
            llm_fallback=fell_back,
            decision=f"{len(calls)} call(s)",
            queries=[
                f"{c.name}({', '.join(f'{k}={v!r}' for k, v in c.arguments.items())})"[
                    :MAX_QUERY_CHARS
                ]
                for c in calls
            ],
        )
        contact = bool(pattern("contact_asked").search(run.turn.text))
        today = run.turn.today or date.today()
        for call in calls:
            t1 = time.perf_counter()
            outcome = await asyncio.to_thread(
                run_call,
                run.tools,
                call,
                question=run.turn.text,
                contact=contact,
                today=today,
                lang=run.lang,
            )
            run.record(
                call.name,
                t1,
                llm_fallback="",
                decision=outcome.decision,
                reason=_call_reason(outcome),
                hits=len(outcome.found) + (outcome.record is not None),
            )
            if outcome.pending is not None:  # the asker confirms, or nothing is filed
                text = say(run.lang, "ticket_proposal", title=quoted(outcome.pending.title))
                return StopEvent(
                    result=Answer(
                        text,
                        "needs_confirmation",
                        pending_action=outcome.pending,
                        trace=run.trace,
                        lang=run.lang,
                    )
                )
            _merge(run, outcome)
        return PlanEvent(run=run)

    @step
    async def plan(self, ev: PlanEvent) -> SearchEvent:
        run = ev.run
        t0 = time.perf_counter()
        assert run.route is not None  # the route step set it before planning
        question = run.route.question
        if run.route.kind == "crm":
            question = (
                re.sub(
                    r"\s+",
                    " ",
                    re.sub(r"(customer|client|account)?\s*#?\d{3,}", "", question, flags=re.I),
                ).strip()
                or question
            )
        run.question = question
        planned = await self.reasoner.plan(question[:MAX_QUERY_CHARS])
        run.subquestions = list(dict.fromkeys(q[:MAX_QUERY_CHARS] for q in planned if q.strip()))[
            :MAX_SUBQUESTIONS
        ] or [question[:MAX_QUERY_CHARS]]
        run.queries = {q: q for q in run.subquestions}
        for sq in run.subquestions:  # what a model's tool calls found is graded for every part
            pool = run.pool.setdefault(sq, {})
            for p in run.tool_found:
                pool.setdefault(p.chunk_id, p)
        run.record(
            "plan",
            t0,
            decision=f"{len(run.subquestions)} sub-question(s)",
            queries=list(run.subquestions),
        )
        return SearchEvent(run=run)

    @step
    async def search(self, ev: SearchEvent) -> GradeEvent:
        run = ev.run
        run.round += 1
        todo = _todo(run)
        queries = [run.queries[sq] for sq in todo]
        await run.say("searching: " + "; ".join(queries) + "…")
        t0 = time.perf_counter()
        if run.round == 1:
            run.topic = await asyncio.to_thread(_conversation_document, run)
        results = await asyncio.gather(
            *(asyncio.to_thread(run.tools.search_docs, q) for q in queries)
        )
        if run.round == 1:
            run.named = documents_titled(run.question, [p for found in results for p in found])
        for doc_id in run.named or ([run.topic] if run.topic else []):
            found = await asyncio.gather(
                *(asyncio.to_thread(run.tools.search_within, q, doc_id) for q in queries)
            )
            results = [[*w, *r] for r, w in zip(results, found, strict=True)]
        hits = 0
        for sq, q, passages in zip(todo, queries, results, strict=True):
            run.tried.append(q)
            pool = run.pool.setdefault(sq, {})
            for p in passages:
                pool.setdefault(p.chunk_id, p)
            hits += len({p.chunk_id for p in passages})
        within = (
            f"also within {', '.join(run.named)}, which the question names"
            if run.named
            else f"also within {run.topic}, the conversation's document"
            if run.topic
            else ""
        )
        run.record("search", t0, reason=within, queries=queries, hits=hits)
        return GradeEvent(run=run)

    @step
    async def grade(self, ev: GradeEvent) -> SearchEvent | AnswerEvent:
        run = ev.run
        todo = _todo(run)
        run.again.clear()
        await run.say(f"checking {sum(len(run.pool.get(sq, {})) for sq in todo)} passages…")
        for sq in todo:
            t0 = time.perf_counter()
            passages = [
                p for cid, p in run.pool.get(sq, {}).items() if cid not in run.grades.get(sq, {})
            ]
            grades = await self.reasoner.grade(sq, passages) if passages else []
            got = run.grades.setdefault(sq, {})
            for p, g in zip(passages, grades, strict=False):
                got[p.chunk_id] = g
                p.scores.grade = g.score
            kept = [
                p.chunk_id for p, g in zip(passages, grades, strict=False) if g.label != "off_topic"
            ]
            dropped = [
                f"{p.chunk_id}: {g.reason}"
                for p, g in zip(passages, grades, strict=False)
                if g.label == "off_topic"
            ]
            labels = [g.label for g in got.values()]
            if "relevant" in labels:
                decision, reason = "enough", "a relevant passage was found"
            elif "partial" in labels:
                decision, reason = "broaden", "found too little: only partial matches"
            else:
                decision, reason = "rewrite", "found only off-topic passages"
            run.record(
                "grade",
                t0,
                decision=decision,
                reason=reason,
                queries=[sq],
                hits=len(passages),
                kept=kept,
                dropped=dropped,
            )
            if decision != "enough" and run.round < MAX_ROUNDS:
                t1 = time.perf_counter()
                best = _ranked(run, sq)
                mode: Literal["rewrite", "broaden"] = (
                    "broaden" if decision == "broaden" else "rewrite"
                )
                new_query = await self.reasoner.rewrite(sq, best, mode, run.tried)
                new_query = new_query[:MAX_QUERY_CHARS] if new_query.strip() else sq
                run.queries[sq] = new_query
                run.record(mode, t1, decision=mode, reason=reason, queries=[new_query])
        if run.round < MAX_ROUNDS and any(
            not _enough(run.grades.get(sq, {})) for sq in run.subquestions
        ):
            return SearchEvent(run=run)
        return AnswerEvent(run=run)

    @step
    async def answer(self, ev: AnswerEvent) -> SearchEvent | StopEvent:
        run = ev.run
        passages = run.tool_results + await self._widen(run, _scoped(run, _selected(run)))
        await run.say("writing the answer…")
        draft, answered = await self._write(run, passages)
        if await self._search_again(run, draft) or self._search_for_audiences(run, draft, passages):
            return SearchEvent(run=run)
        if not answered and self.fallback is not None:
            # The company documents are silent: try the second source, and label what it gives.
            t0 = time.perf_counter()
            extra = await asyncio.to_thread(self.fallback.search, run.question, run.turn.groups)
            for p in extra:
                p.external = True
            run.record("fallback", t0, hits=len(extra))
            if extra:
                external_draft, external_ok = await self._write(run, extra[:MAX_PASSAGES])
                if external_ok:
                    draft, answered, passages = external_draft, True, extra[:MAX_PASSAGES]
        return StopEvent(result=_compose(run, draft, passages, answered))

    async def _widen(self, run: Run, passages: list[Passage]) -> list[Passage]:
        """Small-to-big: a passage too thin to answer from alone (a heading, one short line)
        gives way to the whole section it was cut from, read under the same access."""
        thin = [i for i, p in enumerate(passages) if _thin(p)]
        if not thin:
            return passages
        t0 = time.perf_counter()
        sections = await asyncio.gather(
            *(asyncio.to_thread(run.tools.section, passages[i]) for i in thin)
        )
        out, widened = list(passages), []
        for i, section in zip(thin, sections, strict=True):
            if section is None or section.text == passages[i].text:
                continue
            if count_tokens(section.body) > MAX_SECTION_TOKENS:
                continue
            section.score, section.scores.grade = passages[i].score, passages[i].scores.grade
            out[i] = section
            widened.append(passages[i].chunk_id)
        if widened:
            run.record("widen", t0, decision=f"{len(widened)} section(s)", kept=widened)
        return out

    async def _search_again(self, run: Run, draft: Draft) -> bool:
        """The passages were about the question but none answered a part of it: search once more
        for that part with a rewritten query, while rounds are left."""
        if run.round >= MAX_ROUNDS:
            return False
        for sq in [sq for sq in draft.missing if sq in run.subquestions and sq not in run.retried]:
            t0 = time.perf_counter()
            run.retried.add(sq)
            new_query = await self.reasoner.rewrite(sq, _ranked(run, sq), "rewrite", run.tried)
            new_query = new_query[:MAX_QUERY_CHARS]
            if new_query.strip() and new_query not in run.tried:
                run.queries[sq] = new_query
                run.again.add(sq)
                reason = "the passages found do not answer it"
                run.record("rewrite", t0, decision="rewrite", reason=reason, queries=[new_query])
        return bool(run.again)

    def _search_for_audiences(self, run: Run, draft: Draft, passages: list[Passage]) -> bool:
        """In a channel of several audiences, when the answer quotes the rule written for one of
        them and none for another ("the employees' 30 days", nothing for contractors): search once
        more with that audience named, so that each member's rule can be given."""
        if run.round >= MAX_ROUNDS or run.audiences_searched:
            return False
        readers = [run.turn.groups, *run.turn.member_groups]
        audiences = frozenset().union(*(audiences_of(g) for g in readers))
        if len(audiences) < 2:
            return False
        cited = [passages[i] for q in draft.sentences for i in q.sources if 0 <= i < len(passages)]
        written_for = frozenset().union(*(frozenset(p.audience) for p in cited))
        lacking = sorted(audiences - written_for) if written_for else []
        if not lacking:
            return False
        t0 = time.perf_counter()
        run.audiences_searched = True
        for sq in run.subquestions:
            query = f"{sq} {' '.join(lacking)}"[:MAX_QUERY_CHARS]
            run.queries[sq] = query
            run.again.add(sq)
            reason = "no passage yet for " + ", ".join(lacking)
            run.record("rewrite", t0, decision="rewrite", reason=reason, queries=[query])
        return True

    async def _write(self, run: Run, passages: list[Passage]) -> tuple[Draft, bool]:
        """Answer from the passages, then check it; unsupported sentences are dropped."""
        t0 = time.perf_counter()
        readers = [run.turn.groups, *run.turn.member_groups]  # in a channel, every member's rule
        asker = readers_audiences(passages, readers, run.question)
        draft = (
            await self.reasoner.answer(
                run.question,
                run.subquestions,
                passages,
                run.facts,
                asker=asker,
                said=run.said,
                draft=run.take_draft(),
                topic=run.topic,
            )
            if passages
            else Draft([], list(run.subquestions))
        )
        run.record(
            "answer",
            t0,
            decision=f"{len(draft.sentences)} sentence(s)",
            reason="missing: " + "; ".join(draft.missing) if draft.missing else "",
        )
        if not draft.sentences:
            return draft, False
        t0 = time.perf_counter()
        check = await self.reasoner.check(run.question, draft, passages, run.facts)
        dropped = [
            s.text for s, ok in zip(draft.sentences, check.supported, strict=False) if not ok
        ]
        draft.sentences = [s for s, ok in zip(draft.sentences, check.supported, strict=False) if ok]
        run.record(
            "check",
            t0,
            decision="grounded" if check.answers_question else "does not answer",
            reason=check.reason,
            dropped=dropped,
        )
        return draft, bool(draft.sentences) and check.answers_question


def _merge(run: Run, outcome: Outcome) -> None:
    """A call's passages, record and note join the turn's, each once."""
    seen = {p.chunk_id for p in run.tool_found}
    run.tool_found += [p for p in outcome.found if p.chunk_id not in seen]
    record = outcome.record
    if record is not None and all(p.chunk_id != record.chunk_id for p in run.tool_results):
        run.tool_results.append(record)
        run.facts += record.text.splitlines()
    if outcome.note and outcome.note not in run.notes:
        run.notes.append(outcome.note)


def _call_reason(outcome: Outcome) -> str:
    """What the trace says a call was about: the document, customer or ticket it named."""
    if outcome.found:
        return ", ".join(dict.fromkeys(p.doc_id for p in outcome.found))
    if outcome.record is not None:
        return outcome.record.doc_id
    return ""


def _thin(p: Passage) -> bool:
    """A heading or one short line: too little to answer from without its section."""
    body = p.body.strip()
    return not p.tool and not p.external and "\n" not in body and count_tokens(body) < THIN_TOKENS


def _conversation_document(run: Run) -> str:
    """The document the conversation so far is about: the one its messages, read together,
    find first. A follow-up is often answered further on in it ("and can I do this online?")."""
    said = " ".join(m.text for m in run.turn.history).strip()
    if not said:
        return ""
    hits = run.tools.search_docs(said[-MAX_QUERY_CHARS:], top_k=1)
    return hits[0].doc_id if hits else ""


def _todo(run: Run) -> list[str]:
    """The parts still to search for: not yet found, or sent back by the answer step."""
    return [sq for sq in run.subquestions if sq in run.again or not _enough(run.grades.get(sq, {}))]


def _enough(grades: dict[str, Grade]) -> bool:
    return any(g.label == "relevant" for g in grades.values())


def _ranked(run: Run, sq: str) -> list[Passage]:
    grades = run.grades.get(sq, {})
    pool = run.pool.get(sq, {})
    return sorted(
        pool.values(), key=lambda p: -grades[p.chunk_id].score if p.chunk_id in grades else 0.0
    )


def _selected(run: Run) -> list[Passage]:
    """Strongest first, off-topic never, at most ~8, shared fairly between sub-questions; only
    the documents the message names, when any of theirs was found; in a conversation, its
    document's passages take every other place (``_alternating``)."""
    per_sq = [
        one_of_each(
            _alternating(
                _of_named(
                    run.named,
                    [
                        p
                        for p in _ranked(run, sq)
                        if run.grades.get(sq, {}).get(p.chunk_id)
                        and run.grades[sq][p.chunk_id].label != "off_topic"
                    ],
                ),
                run.topic,
            )
        )
        for sq in run.subquestions
    ]
    chosen: dict[str, Passage] = {}
    for rank in range(MAX_PASSAGES):
        for ranked in per_sq:
            if rank < len(ranked) and len(chosen) < MAX_PASSAGES:
                chosen.setdefault(ranked[rank].chunk_id, ranked[rank])
    return one_of_each(list(chosen.values()))  # rounds and sub-questions may find other copies


def _of_named(named: list[str], ranked: list[Passage]) -> list[Passage]:
    """Only the passages of the documents the message names by title, if it names any and any
    of theirs is here: "acme.com privacy policy: do you sell my data?" is not answered from
    another company's policy that says more of its words."""
    theirs = [p for p in ranked if p.doc_id in named]
    return theirs or ranked


def _alternating(ranked: list[Passage], topic: str) -> list[Passage]:
    """The conversation's document's passages and the others, taking turns, each best first."""
    if not topic:
        return ranked
    mine = [p for p in ranked if p.doc_id == topic]
    other = [p for p in ranked if p.doc_id != topic]
    out = []
    for k in range(max(len(mine), len(other))):
        out += mine[k : k + 1] + other[k : k + 1]
    return out


def _scoped(run: Run, passages: list[Passage]) -> list[Passage]:
    """The passages whose rule applies to the asker: one written for another audience gives way
    when one for the asker's own (or for everyone) is there too. In a channel, every member's
    audience counts, so the rule for each is kept."""
    return applicable(passages, [run.turn.groups, *run.turn.member_groups], run.question)


def _closest(run: Run) -> list[Passage]:
    """Up to three documents that came near (never ones graded off-topic)."""
    seen: dict[str, Passage] = {}
    for sq in run.subquestions:
        grades = run.grades.get(sq, {})
        for p in _ranked(run, sq):
            if p.chunk_id in grades and grades[p.chunk_id].label != "off_topic":
                seen.setdefault(p.doc_id, p)
    return list(seen.values())[:3]


def _conflicts(draft: Draft, passages: list[Passage]) -> list[Conflict]:
    """The answer's notes that two sources disagree, as records (older, newer)."""
    out = []
    for s in draft.sentences:
        if s.conflict and len(s.sources) == 2 and all(0 <= i < len(passages) for i in s.sources):
            old, new = passages[s.sources[0]], passages[s.sources[1]]
            out.append(
                Conflict(
                    old.doc_id, old.title, old.updated, new.doc_id, new.title, new.updated, s.text
                )
            )
    return out


def _compose(run: Run, draft: Draft, passages: list[Passage], answered: bool) -> Answer:
    citations: list[Citation] = []
    number: dict[str, int] = {}
    lang = run.lang

    def cite(p: Passage, quote: str) -> int:
        if p.chunk_id not in number:
            number[p.chunk_id] = len(citations) + 1
            tool = p.tool.tool if p.tool else ""
            citations.append(
                Citation.of(number[p.chunk_id], p, quote, external=p.external, tool=tool)
            )
        return number[p.chunk_id]

    # what was searched, in the user's words: the question or its parts, not the rewritten queries
    # (those are in the trace)
    searched = list(dict.fromkeys(run.subquestions or [run.question]))
    notes = " ".join(run.notes)
    if answered:
        # a passage quoted by several sentences is cited at the one that answers best: a sentence
        # quoted for what it points back at ("After that, …") comes first but answers less
        best: dict[int, Sentence] = {}
        for s in draft.sentences:
            for i in s.sources:
                if not s.note and (i not in best or (s.score or 0) > (best[i].score or 0)):
                    best[i] = s
        lines = []
        for s in draft.sentences:
            numbers = [
                # a note (a conflict, a conclusion) is our text: its sources are quoted as found
                cite(passages[i], passages[i].body if s.note else best[i].text)
                for i in s.sources
                if 0 <= i < len(passages)
            ]
            # in reading order ("[1][2]"), whatever order the sentence lists its sources in (a
            # conflict's are [older, newer], and the newer one is usually cited first)
            marks = "".join(f"[{n}]" for n in sorted(set(numbers)))
            lines.append(f"{quoted(s.text)} {marks}".strip())
        text = " ".join(lines)
        status: Status = "answered"
        if draft.missing:
            status = "partial"
            parts = "; ".join(quoted(m) for m in draft.missing)
            text += "\n\n" + say(lang, "found_nothing_on", parts=parts)
        if any(c.external for c in citations):
            text += "\n\n" + say(lang, "external")
        if notes:
            text += "\n\n" + notes
        return Answer(
            text,
            status,
            citations,
            trace=run.trace,
            searched=searched,
            lang=lang,
            conflicts=_conflicts(draft, passages),
        )
    if notes:
        # e.g. "Show me customer 4502" from someone who may not read customer records, and the
        # documents have nothing more: the refusal is the whole answer, no ticket
        return Answer(notes, "rejected", trace=run.trace, searched=searched, lang=lang)
    closest = _closest(run)
    text = say(
        lang, "dont_know", searched=quote_list([quoted(as_searched(q)) for q in searched], lang)
    )
    if closest:
        documents = "; ".join(f"[{cite(p, p.body[:200])}] {quoted(p.title)}" for p in closest)
        text += " " + say(lang, "closest", documents=documents)
    question = run.route.question if run.route else ""
    action = run.tools.create_ticket(question, _ticket_body(question, searched))
    text += " " + say(lang, "offer_ticket" if action is not None else "tickets_unavailable")
    return Answer(
        text,
        "unknown",
        citations,
        pending_action=action,
        trace=run.trace,
        searched=searched,
        lang=lang,
    )


def _ticket_body(question: str, searched: list[str]) -> str:
    body = f"Question: {question}"
    if searched:
        body += "\nSearched the documents for: " + "; ".join(searched)
    return body
