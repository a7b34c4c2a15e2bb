"""The four tools, as LlamaIndex tools bound to ONE asker: every call runs with their groups.

Access is decided here, with the asker's identity, never by a reasoner: ``search_docs`` and
``get_document`` read only what the asker (and, in a channel, every member) may read;
``query_crm`` answers only members of the CRM reader groups (in a channel: only if every member
is one), and leaves contact data out unless the question asks for it. ``create_ticket`` never
files anything: it returns a pending action that only the asker's confirmation executes
(``Assistant.confirm``), or ``None`` when pending actions cannot be stored right now.

``as_llama_tools`` offers them to an LLM. Each argument schema below is what the model reads and
what its arguments must meet; what the model cannot set (how many passages, whether contact data
is shown) is not in it. The model only asks: the loop runs the calls (``agent.tool_calls``).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from agent.actions import PendingActions, StateUnavailable
from agent.desk import CRM, CustomerRecord
from agent.passages import Passage
from agent.retrieval import Filters, Retriever
from agent.turns import PendingAction, Turn
from ingest.chunk import strip_overlap
from ingest.index import Index

if TYPE_CHECKING:
    from llama_index.core.tools import FunctionTool

log = logging.getLogger(__name__)

NO_CRM_ACCESS = "you don't have access to customer records"
NO_CRM_ACCESS_HERE = "not everyone here may read customer records; ask me in a direct message"


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchArgs(_Args):
    """Search the company documents the asker may read, with a query of your own."""

    query: str = Field(min_length=1, max_length=500, description="the search query")
    updated_after: str | None = Field(
        None,
        pattern=r"^\d{4}-\d{2}-\d{2}$",
        description="only documents updated after this date (YYYY-MM-DD)",
    )


class DocumentArgs(_Args):
    """Read one whole document, section by section, if the asker may read it."""

    doc_id: str = Field(min_length=1, max_length=200, description="the document's id or its title")


class CustomerArgs(_Args):
    """Look up one customer in the CRM: plan, status and orders."""

    customer_id: str = Field(
        pattern=r"^#?\d{1,12}$", description="the customer number, digits only"
    )


class TicketArgs(_Args):
    """Propose a help-desk ticket; it is filed only if the asker confirms."""

    title: str = Field(min_length=1, max_length=120, description="a short title")
    body: str = Field(max_length=4000, description="what the ticket is about")


ARGS: dict[str, type[_Args]] = {
    "search_docs": SearchArgs,
    "get_document": DocumentArgs,
    "query_crm": CustomerArgs,
    "create_ticket": TicketArgs,
}


@dataclass
class Toolbox:
    """What the tools need; one per assistant, shared read-only by every turn."""

    retriever: Retriever
    index: Index
    crm: CRM
    pending: PendingActions
    pending_ttl_s: int = 900
    crm_readers: frozenset[str] = frozenset({"sales", "support", "managers"})
    contact_fields: Sequence[str] = field(default=("contact", "email", "phone"))


@dataclass
class TurnTools:
    """The tools as the asker may use them. Built per turn, so nothing leaks between turns."""

    box: Toolbox
    turn: Turn

    def search_docs(
        self, query: str, updated_after: str | None = None, top_k: int = 8
    ) -> list[Passage]:
        """Search the company documents the asker may read; newest-first filters via updated_after (ISO date)."""
        filters = Filters(
            updated_after=f"{updated_after}T00:00:00Z"
            if updated_after and len(updated_after) == 10
            else updated_after
        )
        return self.box.retriever.search(
            query, self.turn.groups, filters, top_k=top_k, readers=self.turn.member_groups
        )

    def search_within(self, query: str, doc_id: str, top_k: int = 8) -> list[Passage]:
        """``search_docs`` inside one document only (the conversation's), same access."""
        return self.box.retriever.search(
            query,
            self.turn.groups,
            Filters(doc_ids=[doc_id]),
            top_k=top_k,
            readers=self.turn.member_groups,
        )

    def get_document(self, doc_id: str) -> str:
        """The whole text of one document, section by section, if the asker may read it."""
        sections = self.sections(doc_id)
        if not sections:
            return f"No document {doc_id!r} that you may read."
        return "\n\n".join(s.text for s in sections)

    def sections(self, doc_id: str) -> list[Passage]:
        """The document's sections in order, each one passage (its chunks joined, the overlap
        between them dropped), if the asker, and in a channel every member, may read it."""
        chunks = self.box.index.chunks(doc_id, self.turn.groups)
        for member in self.turn.member_groups:
            allowed = {c["chunk_id"] for c in self.box.index.chunks(doc_id, member)}
            chunks = [c for c in chunks if c["chunk_id"] in allowed]
        out: list[Passage] = []
        for parent, group in groupby(chunks, key=lambda c: c.get("parent_id") or c["chunk_id"]):
            first, *rest = list(group)
            section = Passage.from_payload(first)
            body, previous = section.body, section.body
            for chunk in rest:
                more = Passage.from_payload(chunk).body
                body += "\n" + strip_overlap(previous, more)
                previous = more
            section.chunk_id = parent
            section.text = f"{section.breadcrumbs}\n\n{body}" if section.breadcrumbs else body
            out.append(section)
        return out

    def section(self, passage: Passage) -> Passage | None:
        """The whole section a passage was cut from (small-to-big), under the same access."""
        if not passage.parent_id or passage.tool or passage.external:
            return None
        found = [s for s in self.sections(passage.doc_id) if s.chunk_id == passage.parent_id]
        return found[0] if found else None

    def query_crm(self, customer_id: str, include_contact: bool = False) -> CustomerRecord:
        """Plan, status and orders of one customer from the CRM; contact details only when
        ``include_contact`` (the question asked for them)."""
        readers = self.box.crm_readers
        if not readers & set(self.turn.groups):
            return {"error": NO_CRM_ACCESS, "denied": True}
        if any(not readers & set(member) for member in self.turn.member_groups):
            return {"error": NO_CRM_ACCESS_HERE, "denied": True}
        found = self.box.crm.customer(customer_id.lstrip("#"))
        if found is None:
            return {"error": f"no customer {customer_id} in the CRM"}
        if include_contact:
            return found
        return {k: v for k, v in found.items() if k not in self.box.contact_fields}

    def create_ticket(self, title: str, body: str) -> PendingAction | None:
        """Propose a help-desk ticket. It is filed only after the asker confirms. ``None`` when
        proposals cannot be kept right now (the state store is down): then no ticket is offered."""
        action = PendingAction(
            action_id=uuid.uuid4().hex,
            kind="create_ticket",
            user_id=self.turn.user_id,
            title=title.strip()[:120] or "Question from chat",
            body=body.strip(),
            expires_at=time.time() + self.box.pending_ttl_s,
            conversation_id=self.turn.conversation_id,
        )
        try:
            self.box.pending.put(action)
        except StateUnavailable as exc:
            log.warning("cannot keep a ticket proposal (%s); offering none", exc)
            return None
        return action

    def as_llama_tools(self) -> list[FunctionTool]:
        """The four tools for an LLM's native tool calling, each bound to this asker."""
        # Imported here: LlamaIndex's core takes ~1.4 s to import and only an LLM uses tools.
        from llama_index.core.tools import FunctionTool

        fns: dict[str, Callable[..., object]] = {
            "search_docs": self.search_docs,
            "get_document": self.get_document,
            "query_crm": self.query_crm,
            "create_ticket": self.create_ticket,
        }
        return [
            FunctionTool.from_defaults(
                fn=fns[name], name=name, description=args.__doc__ or name, fn_schema=args
            )
            for name, args in ARGS.items()
        ]
