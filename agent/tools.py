"""The four tools, as LlamaIndex tools bound to ONE asker: every call runs with their groups.

``create_ticket`` never files anything: it returns a pending action that only the asker's
confirmation executes (``Assistant.confirm``).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from llama_index.core.tools import FunctionTool

from agent.actions import PendingActions
from agent.desk import CRM
from agent.retrieval import Filters, Passage, Retriever
from agent.turns import PendingAction, Turn
from ingest.index import Index


@dataclass
class Toolbox:
    """What the tools need; one per assistant, shared read-only by every turn."""

    retriever: Retriever
    index: Index
    crm: CRM
    pending: PendingActions
    pending_ttl_s: int = 900


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

    def get_document(self, doc_id: str) -> str:
        """The whole text of one document, if the asker may read it."""
        chunks = self.box.index.chunks(doc_id, self.turn.groups)
        for member in self.turn.member_groups:
            allowed = {c["chunk_id"] for c in self.box.index.chunks(doc_id, member)}
            chunks = [c for c in chunks if c["chunk_id"] in allowed]
        if not chunks:
            return f"No document {doc_id!r} that you may read."
        return "\n\n".join(c["text"] for c in chunks)

    def query_crm(self, customer_id: str) -> dict:
        """Plan, status and orders of one customer from the CRM."""
        found = self.box.crm.customer(customer_id.lstrip("#"))
        return found if found is not None else {"error": f"no customer {customer_id} in the CRM"}

    def create_ticket(self, title: str, body: str) -> PendingAction:
        """Propose a help-desk ticket. It is filed only after the asker confirms."""
        action = PendingAction(
            action_id=uuid.uuid4().hex,
            kind="create_ticket",
            user_id=self.turn.user_id,
            title=title.strip()[:120] or "Question from chat",
            body=body.strip(),
            expires_at=time.time() + self.box.pending_ttl_s,
        )
        self.box.pending.put(action)
        return action

    def as_llama_tools(self) -> list[FunctionTool]:
        return [
            FunctionTool.from_defaults(fn=self.search_docs, name="search_docs"),
            FunctionTool.from_defaults(fn=self.get_document, name="get_document"),
            FunctionTool.from_defaults(fn=self.query_crm, name="query_crm"),
            FunctionTool.from_defaults(fn=self.create_ticket, name="create_ticket"),
        ]
