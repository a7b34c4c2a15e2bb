"""The ``Reasoner`` answered by LlamaIndex LLMs through structured outputs.

A cheap model routes, plans, grades and checks; a strong one answers and rewrites queries.
Every call asks for a pydantic model (the ``*Reply`` classes below, whose docstrings and field
descriptions are what the model reads) and goes like this (``_ask``):

1. A function-calling model gets ``llm.astructured_predict``: the provider's native route
   (OpenAI ``json_schema`` response format, Anthropic structured outputs, else a forced tool call;
   for OpenAI-compatible servers ``FOOTNOTE_LLM__STRUCTURED_OUTPUT`` chooses). The answer, the
   one long reply, is streamed and read once complete; on its way its sentences are told to the
   turn's ``draft`` (``agent.drafts``, for a chat that shows them as they come). LlamaIndex's
   ``astream_structured_predict`` yields no partial text inside the nested sentences, so where
   the provider takes the schema as a response format (OpenAI and OpenAI-compatible servers) the
   raw JSON is streamed (``astream_chat`` with that response format) and read partially
   (``_streamed_json``); a forced tool call or Anthropic's route streams whole sentences only.
2. Any other model, or one whose native reply was unusable (no tool call, invalid JSON, wrong
   schema), gets the same messages plus the JSON schema and answers in plain text, which we parse;
   a plain reply that fails is retried once, with the problem told to the model.
3. Still unusable: ``UnusableReply``, and ``FallbackReasoner`` has the offline reasoner make
   the step instead (its judgement beats any constant default we could put here).

What the model gets partly wrong is mended here: replies are read leniently (labels normalised,
numbers clamped, out-of-range citations dropped, a passage the reply forgot graded "partial").
What the provider does (an HTTP error, a refused connection) and what our setup gets wrong (a
bad key, a broken prompt file) is raised as it is; ``FallbackReasoner`` decides which of those a
step survives.

The tool step (``pick_tools``) is the one call that is not structured: the cheap model gets the
turn's tools as LlamaIndex tools over its provider's native tool calling (OpenAI ``tools`` /
``tool_calls``) and may call none, one or several. Each call must name an offered tool and carry
JSON arguments that meet that tool's schema (``agent.tools.ARGS``); one that does not makes the
reply unusable, and the step is made offline. The calls are returned, never run here.

Passages reach every prompt as untrusted data inside ``<documents>``, one ``<passage n=…>`` each,
with any tag that could close the wrapper defused; the prompts say that text there is to be
quoted, never obeyed.
"""

from __future__ import annotations

import html
import json
import logging
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole, ToolCallBlock
from llama_index.core.llms import LLM
from llama_index.core.output_parsers.utils import extract_json_str
from llama_index.core.prompts import ChatPromptTemplate
from pydantic import BaseModel, Field, ValidationError

from agent.drafts import Drafting, DraftText
from agent.followups import customer_in
from agent.passages import Passage
from agent.reasoning import (
    Check,
    Draft,
    Grade,
    GradeLabel,
    Route,
    RouteKind,
    Sentence,
    ToolCall,
    ToolShelf,
    UnusableReply,
)
from agent.turns import Message
from ingest.errors import ConfigError

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

# What each prompt file must use, no more and no less: a mismatch is our bug, found at start-up.
PROMPT_VARS: dict[str, set[str]] = {
    "route": {"history", "text"},
    "plan": {"question"},
    "grade": {"question", "documents", "count"},
    "rewrite": {"question", "documents", "mode", "tried"},
    "answer": {"question", "subquestions", "documents", "facts"},
    "check": {"question", "draft", "documents", "facts"},
    "tools": {"history", "question"},
}
# Exceptions a model's reply causes inside LlamaIndex's structured-output code: no tool call,
# invalid JSON, a schema mismatch (pydantic's ValidationError is a ValueError).
MODEL_ERRORS = (ValueError, TypeError)
HISTORY_TURNS = 10
MAX_SUBQUESTIONS = 4


# ---------------------------------------------------------------- what the model must return


def _one_of(*values: str, description: str) -> Any:
    """A string the schema restricts to ``values`` but validation accepts loosely (we normalise)."""
    return Field(description=description, json_schema_extra={"enum": list(values)})


# No non-None defaults below: OpenAI's strict json_schema mode rejects them.
class RouteReply(BaseModel):
    """What the latest chat message needs, and that message as a standalone question."""

    kind: str = _one_of(
        "smalltalk", "question", "crm", "ticket", description="what the message needs"
    )
    question: str = Field(
        description="the latest message as a standalone question, follow-ups resolved"
    )
    customer_id: str | None = Field(None, description="crm only: the customer number, digits only")
    ticket_title: str | None = Field(None, description="ticket only: a short title for the ticket")
    reply: str | None = Field(None, description="smalltalk only: a short friendly reply")


class PlanReply(BaseModel):
    """The separate standalone questions a question asks; just the question when it is simple."""

    subquestions: list[str] = Field(description="one standalone question per part, at most 4")


class PassageGrade(BaseModel):
    """The grade of one passage."""

    n: int = Field(description="the passage number")
    label: str = _one_of("relevant", "partial", "off_topic", description="how the passage helps")
    score: float | None = Field(None, description="0 to 1: how much of the question it answers")
    reason: str | None = Field(None, description="a few words why")


class GradeReply(BaseModel):
    """One grade for every passage, in passage order."""

    grades: list[PassageGrade]


class RewriteReply(BaseModel):
    """One new search query."""

    query: str = Field(description="the new search query")


class AnswerSentence(BaseModel):
    """One sentence of the answer and the passages that support it."""

    text: str = Field(description="the sentence, without [n] markers")
    citations: list[int] = Field(description="the numbers n of the passages that support it")


class AnswerReply(BaseModel):
    """The answer, sentence by sentence, and the parts of the question the passages do not cover."""

    sentences: list[AnswerSentence]
    missing: list[str] | None = Field(None, description="parts of the question nothing answers")


class SentenceCheck(BaseModel):
    """Whether one draft sentence is supported by the passages it cites."""

    n: int = Field(description="the sentence number")
    supported: bool


class CheckReply(BaseModel):
    """A verdict on every draft sentence, and on the draft as an answer to the question."""

    sentences: list[SentenceCheck]
    answers_question: bool
    reason: str | None = Field(None, description="a short reason")


# ---------------------------------------------------------------- the reasoner


class LLMReasoner:
    """``Reasoner`` over two LlamaIndex LLMs; ``agent.llms.build_llms`` makes them from settings.

    It raises what it cannot answer (``UnusableReply``, the provider's errors), so it runs inside
    ``FallbackReasoner``, which ``agent.assistant.build_reasoner`` puts around it.
    """

    def __init__(
        self, cheap: LLM, strong: LLM, prompts_dir: Path | None = None, *, stream: bool = True
    ):
        self.cheap, self.strong = cheap, strong
        self.prompts = load_prompts(prompts_dir)
        self.streams = stream  # FOOTNOTE_LLM__STREAM: tell the answer's draft as it comes

    async def route(self, text: str, history: Sequence[Message]) -> Route:
        reply = await self._ask(
            self.cheap, RouteReply, "route", history=history_block(history), text=_defuse(text)
        )
        kind = _route_kind(reply.kind)
        question = reply.question.strip() or text
        customer_id = _digits(reply.customer_id) if kind == "crm" else None
        if kind == "crm" and customer_id is None:
            customer_id = _digits(customer_in(text) or customer_in(question))
        title = ((reply.ticket_title or "").strip() or question[:80]) if kind == "ticket" else None
        return Route(kind, question, customer_id=customer_id, ticket_title=title)

    async def pick_tools(
        self, question: str, history: Sequence[Message], offered: ToolShelf
    ) -> list[ToolCall]:
        """The calls the cheap model makes, each checked against the offered tool's schema;
        ``UnusableReply`` when one names no offered tool or its arguments do not fit. A model
        without tool calling is offered nothing (the loop's routing reaches the tools)."""
        if not self.cheap.metadata.is_function_calling_model:
            return []
        from llama_index.core.llms.function_calling import FunctionCallingLLM

        if not isinstance(self.cheap, FunctionCallingLLM):
            return []
        tools = {t.metadata.name: t for t in offered()}
        messages = self.prompts["tools"].format_messages(
            None, history=history_block(history), question=_defuse(question)
        )
        try:
            response = await self.cheap.achat_with_tools(
                list(tools.values()), chat_history=messages, allow_parallel_tool_calls=True
            )
        except MODEL_ERRORS as e:  # a reply LlamaIndex could not read
            raise UnusableReply(f"tools: {type(e).__name__}") from None
        calls = []
        for name, raw in _tool_calls(response):
            tool = tools.get(name)
            schema = tool.metadata.fn_schema if tool is not None else None
            if schema is None:
                raise UnusableReply("tools: a call names no offered tool")
            try:
                args = json.loads(raw) if isinstance(raw, str) else raw
                checked = schema.model_validate(args)
            except (ValidationError, ValueError):
                raise UnusableReply(f"tools: {name} arguments do not fit its schema") from None
            calls.append(ToolCall(name, checked.model_dump(exclude_none=True)))
        return calls

    async def plan(self, question: str) -> list[str]:
        """``[question]`` when the model finds one part (or none)."""
        reply = await self._ask(self.cheap, PlanReply, "plan", question=_defuse(question))
        subs = _unique(s.strip() for s in reply.subquestions)
        return subs[:MAX_SUBQUESTIONS] or [question]

    async def grade(self, question: str, passages: Sequence[Passage]) -> list[Grade]:
        """One call for all passages. A passage the reply misses is "partial", score 0.5."""
        if not passages:
            return []
        reply = await self._ask(
            self.cheap,
            GradeReply,
            "grade",
            question=_defuse(question),
            documents=documents_block(passages),
            count=str(len(passages)),
        )
        by_n: dict[int, Grade] = {}
        for i, g in enumerate(reply.grades, 1):
            n = g.n if 1 <= g.n <= len(passages) and g.n not in by_n else i
            by_n.setdefault(n, _grade(g))
        return [by_n.get(n) or _ungraded() for n in range(1, len(passages) + 1)]

    async def rewrite(
        self,
        question: str,
        passages: Sequence[Passage],
        mode: Literal["rewrite", "broaden"],
        tried: Sequence[str],
    ) -> str:
        """A query not tried yet: the model's, else the question, else the question plus passage titles."""
        reply = await self._ask(
            self.strong,
            RewriteReply,
            "rewrite",
            question=_defuse(question),
            documents=documents_block(passages),
            mode=mode,
            tried="\n".join(f"- {_defuse(q)}" for q in tried) or "(none)",
        )
        seen = {q.strip().casefold() for q in tried}
        titles = " ".join(_unique(p.title for p in passages[:2] if p.title))
        for candidate in (reply.query, question, f"{question} {titles}"):
            if candidate.strip() and candidate.strip().casefold() not in seen:
                return candidate.strip()
        return question

    async def answer(
        self,
        question: str,
        subquestions: Sequence[str],
        passages: Sequence[Passage],
        facts: Sequence[str],
        *,
        asker: frozenset[str] = frozenset(),
        said: str = "",
        draft: Drafting | None = None,
        topic: str = "",
    ) -> Draft:
        """Citations come back 1-based and leave 0-based. The passages are already scoped to the
        asker's audience (the loop's scope step), so ``asker`` is not needed here; the question
        a follow-up became names what it asks, so ``said`` is not either; the conversation's
        document (``topic``) takes every other place among the passages, so the model reads it."""
        reply = await self._ask(
            self.strong,
            AnswerReply,
            "answer",
            stream=True,
            drafting=draft if self.streams else None,
            question=_defuse(question),
            subquestions="\n".join(f"- {_defuse(s)}" for s in subquestions)
            or f"- {_defuse(question)}",
            documents=documents_block(passages),
            facts=facts_block(facts),
        )
        sentences = []
        for s in reply.sentences:
            text, marked = _strip_markers(s.text)
            sources = _unique(n - 1 for n in [*s.citations, *marked] if 1 <= n <= len(passages))
            if text:
                sentences.append(Sentence(text, sources))
        missing = _unique(m.strip() for m in reply.missing or [])
        return Draft(sentences, missing=missing)

    async def check(
        self, question: str, draft: Draft, passages: Sequence[Passage], facts: Sequence[str] = ()
    ) -> Check:
        """A sentence the reply misses counts as supported when it cites something.

        ``facts`` (beyond the protocol) lets sentences built on tool results be checked too.
        """
        if not draft.sentences:
            return Check([], answers_question=False, reason="empty draft")
        reply = await self._ask(
            self.cheap,
            CheckReply,
            "check",
            question=_defuse(question),
            draft=draft_block(draft),
            documents=documents_block(passages),
            facts=facts_block(facts),
        )
        cited = [bool(s.sources) for s in draft.sentences]
        verdicts = {c.n: c.supported for c in reply.sentences}
        supported = [verdicts.get(n, cited[n - 1]) for n in range(1, len(draft.sentences) + 1)]
        return Check(supported, reply.answers_question, (reply.reason or "").strip())

    # ------------------------------------------------------------ structured calls

    async def _ask(
        self,
        llm: LLM,
        cls: type[M],
        name: str,
        *,
        stream: bool = False,
        drafting: Drafting | None = None,
        **variables: str,
    ) -> M:
        """``cls`` from the model; ``UnusableReply`` when two tries gave nothing usable (module doc)."""
        messages = self.prompts[name].format_messages(None, **variables)
        problem: str | None = None
        kind = ""  # the last problem's exception type: all that leaves this module
        reply_text: str | None = None
        if llm.metadata.is_function_calling_model:
            try:
                if stream:
                    return await _streamed(llm, cls, self.prompts[name], variables, drafting)
                parsed: M = await llm.astructured_predict(cls, self.prompts[name], **variables)
                return parsed
            except MODEL_ERRORS as e:
                problem, kind = _brief(e), type(e).__name__
                log.warning(
                    "%s: structured reply unusable (%s); retrying as plain JSON", name, problem
                )
        for _ in range(1 if problem else 2):
            reply_text = await _chat_json(llm, messages, cls, problem, reply_text)
            try:
                return cls.model_validate_json(extract_json_str(reply_text))
            except MODEL_ERRORS as e:
                problem, kind = _brief(e), type(e).__name__
                log.warning("%s: JSON reply unusable (%s)", name, problem)
        raise UnusableReply(f"{name}: {kind}")


async def _streamed(
    llm: LLM,
    cls: type[M],
    prompt: ChatPromptTemplate,
    variables: dict[str, str],
    draft: Drafting | None = None,
) -> M:
    """The structured reply, streamed; only a complete one counts. LlamaIndex yields partial
    objects as the tokens arrive and a ``cls`` once the JSON so far validates as one; their
    sentences, but the last (it may still grow), are told to ``draft`` as they complete."""
    if draft is not None and _schema_as_response_format(llm):
        return await _streamed_json(llm, cls, prompt, variables, DraftText(draft))
    text = DraftText(draft) if draft is not None else None
    last: object = None
    async for partial in await llm.astream_structured_predict(cls, prompt, **variables):
        last = partial
        if text is not None:
            await text.sentences(_sentence_texts(partial)[:-1])
    if not isinstance(last, cls):
        raise ValueError(f"the streamed reply is no complete {cls.__name__}")
    if text is not None:
        await text.sentences(_sentence_texts(last))
    return last


def _schema_as_response_format(llm: LLM) -> bool:
    """Does this client send the schema as OpenAI's ``response_format`` (so its reply is the JSON
    text itself)? LlamaIndex's OpenAI clients decide it in ``_should_use_structure_outputs``."""
    decide = getattr(llm, "_should_use_structure_outputs", None)
    return callable(decide) and hasattr(llm, "_prepare_schema") and bool(decide())


async def _streamed_json(
    llm: LLM,
    cls: type[M],
    prompt: ChatPromptTemplate,
    variables: dict[str, str],
    text: DraftText,
) -> M:
    """What LlamaIndex's OpenAI client does for a streamed structured reply (the same messages
    and ``response_format``, from its own ``_prepare_schema``), reading the raw JSON as it comes
    so that a sentence shows while it is written. A reply that is no ``cls`` raises ValueError."""
    messages = llm._extend_messages(prompt.format_messages(None, **variables))
    kwargs: dict[str, Any] = llm._prepare_schema({}, cls)  # type: ignore[attr-defined]
    content = ""
    async for response in await llm.astream_chat(messages, **kwargs):
        content = response.message.content or ""
        await text.update(content)
    return cls.model_validate_json(content)


def _sentence_texts(partial: object) -> list[str]:
    """The sentence texts of a (partial) ``AnswerReply``: LlamaIndex's partial objects hold them
    as models or as plain dicts."""
    out = []
    for s in getattr(partial, "sentences", None) or []:
        value = s.get("text") if isinstance(s, dict) else getattr(s, "text", None)
        if isinstance(value, str):
            out.append(value)
    return out


async def _chat_json(
    llm: LLM,
    messages: list[ChatMessage],
    cls: type[BaseModel],
    problem: str | None,
    last: str | None,
) -> str:
    """One plain chat turn that asks for JSON by schema; ``problem`` says what went wrong before."""
    schema = json.dumps(cls.model_json_schema(), ensure_ascii=False)
    instructions = f"\n\nReply with one JSON object, and nothing else, that follows this JSON schema:\n{schema}"
    first, *rest = messages
    msgs = [ChatMessage(role=first.role, content=(first.content or "") + instructions), *rest]
    if problem:
        if last:
            msgs.append(ChatMessage(role=MessageRole.ASSISTANT, content=last))
        msgs.append(
            ChatMessage(
                role=MessageRole.USER,
                content=f"That reply could not be used: {problem}\nReply again with only the JSON object.",
            )
        )
    response = await llm.achat(msgs)
    return response.message.content or ""


def _tool_calls(response: ChatResponse) -> list[tuple[str, str | dict[str, Any]]]:
    """(name, raw arguments) of every tool call in a reply, the arguments as the wire had them:
    LlamaIndex's own reader would mend broken JSON or turn it into ``{}``."""
    return [
        (b.tool_name, b.tool_kwargs)
        for b in response.message.blocks
        if isinstance(b, ToolCallBlock)
    ]


def _brief(e: Exception, limit: int = 300) -> str:
    text = f"{type(e).__name__}: {e}"
    return text if len(text) <= limit else text[:limit] + "…"


# ---------------------------------------------------------------- prompts


def load_prompts(prompts_dir: Path | None = None) -> dict[str, ChatPromptTemplate]:
    """The seven prompts, from the package (``agent/prompts``) or ``prompts_dir``; checked now."""
    root = prompts_dir if prompts_dir is not None else resources.files("agent") / "prompts"
    prompts = {}
    for name, expected in PROMPT_VARS.items():
        source = root / f"{name}.md"
        try:
            text = source.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"prompt file {source} is missing or unreadable: {e}") from e
        prompt = parse_prompt(text, str(source))
        found = set(prompt.template_vars)
        if found != expected:
            raise ConfigError(
                f"prompt {source} must use exactly the variables {sorted(expected)}, found {sorted(found)}"
            )
        prompts[name] = prompt
    return prompts


def parse_prompt(text: str, where: str = "prompt") -> ChatPromptTemplate:
    """A prompt file is Markdown with a ``## system`` and a ``## user`` section; anything before is a comment."""
    parts = re.split(r"^## (system|user)[ \t]*$", text, flags=re.MULTILINE)
    sections = {role: body.strip() for role, body in zip(parts[1::2], parts[2::2], strict=True)}
    if set(sections) != {"system", "user"}:
        raise ConfigError(f"{where} needs a '## system' and a '## user' section")
    return ChatPromptTemplate(
        message_templates=[
            ChatMessage(role=MessageRole.SYSTEM, content=sections["system"]),
            ChatMessage(role=MessageRole.USER, content=sections["user"]),
        ]
    )


# ---------------------------------------------------------------- untrusted data, wrapped

# Tags our prompts use as wrappers: inside data they are defused so data cannot close a wrapper.
_WRAPPER_TAG = re.compile(
    r"<(\s*/?\s*(?:documents|passage|facts|fact|history|message|draft|sentence|question|subquestions|tried)\b)",
    re.IGNORECASE,
)


def _defuse(text: str) -> str:
    return _WRAPPER_TAG.sub(r"&lt;\1", text)


def _attr(value: object) -> str:
    return html.escape(str(value or ""), quote=True)


def documents_block(passages: Sequence[Passage]) -> str:
    """Passages as ``<documents><passage n="1" …>…</passage></documents>``, numbered from 1."""
    if not passages:
        return "<documents>\n(no passages)\n</documents>"
    parts = ["<documents>"]
    for n, p in enumerate(passages, 1):
        attrs = f'n="{n}" title="{_attr(p.title)}" section="{_attr(p.breadcrumbs)}" updated="{_attr(p.updated)}"'
        parts.append(f"<passage {attrs}>\n{_defuse(p.body.strip())}\n</passage>")
    parts.append("</documents>")
    return "\n".join(parts)


def facts_block(facts: Sequence[str]) -> str:
    return "\n".join(f"<fact>{_defuse(f)}</fact>" for f in facts) or "(none)"


def history_block(history: Sequence[Message]) -> str:
    recent = list(history)[-HISTORY_TURNS:]
    if not recent:
        return "(no earlier messages)"
    return "\n".join(f'<message role="{m.role}">{_defuse(m.text[:2000])}</message>' for m in recent)


def draft_block(draft: Draft) -> str:
    """Draft sentences numbered from 1, citing passages 1-based as in ``documents_block``."""
    lines = ["<draft>"]
    for n, s in enumerate(draft.sentences, 1):
        cites = ",".join(str(i + 1) for i in s.sources)
        lines.append(f'<sentence n="{n}" cites="{cites}">{_defuse(s.text)}</sentence>')
    lines.append("</draft>")
    return "\n".join(lines)


# ---------------------------------------------------------------- reading replies leniently

_KINDS: dict[str, RouteKind] = {
    "smalltalk": "smalltalk",
    "small_talk": "smalltalk",
    "chitchat": "smalltalk",
    "greeting": "smalltalk",
    "question": "question",
    "crm": "crm",
    "customer": "crm",
    "ticket": "ticket",
}
_LABELS: dict[str, GradeLabel] = {
    "relevant": "relevant",
    "highly_relevant": "relevant",
    "yes": "relevant",
    "partial": "partial",
    "partially_relevant": "partial",
    "somewhat_relevant": "partial",
    "off_topic": "off_topic",
    "offtopic": "off_topic",
    "irrelevant": "off_topic",
    "not_relevant": "off_topic",
    "no": "off_topic",
}
_LABEL_SCORE = {"relevant": 0.9, "partial": 0.5, "off_topic": 0.1}
_MARKERS = re.compile(r"\s*\[(\d+(?:\s*[,;]\s*\d+)*)\]")


def _key(value: str) -> str:
    return re.sub(r"[\s\-]+", "_", value.strip().lower())


def _route_kind(value: str) -> RouteKind:
    return _KINDS.get(_key(value), "question")


def _digits(value: str | None) -> str | None:
    digits = re.sub(r"\D", "", value or "")
    return digits or None


def _ungraded() -> Grade:
    return Grade("partial", 0.5, "not graded")


def _grade(g: PassageGrade) -> Grade:
    score = g.score
    if score is not None and 1 < score <= 100:  # a 0–10 or 0–100 scale
        score = score / 10 if score <= 10 else score / 100
    label = _LABELS.get(_key(g.label))
    if label is None:  # an unknown label: trust the score if there is one
        if score is None:
            return Grade("partial", 0.5, (g.reason or "").strip() or f"unknown label {g.label!r}")
        label = "relevant" if score >= 0.7 else "partial" if score >= 0.3 else "off_topic"
    score = _LABEL_SCORE[label] if score is None else min(max(score, 0.0), 1.0)
    return Grade(label, score, (g.reason or "").strip())


def _strip_markers(text: str) -> tuple[str, list[int]]:
    """``"Ten days [2][3]."`` → ``("Ten days.", [2, 3])``: the loop places its own markers."""
    numbers = [int(n) for group in _MARKERS.findall(text) for n in re.split(r"\s*[,;]\s*", group)]
    clean = _MARKERS.sub("", text).strip()
    return re.sub(r"\s+([.,;:!?。！？])", r"\1", clean), numbers


def _unique(items: Iterable[T]) -> list[T]:
    out: list[T] = []
    for item in items:
        if (item or item == 0) and item not in out:
            out.append(item)
    return out
