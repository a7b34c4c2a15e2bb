"""The tool calls a model asked for, run with the asker's own tools.

The model only names a tool and its arguments (``Reasoner.pick_tools``, already checked against
the tool's schema); what comes back is decided here and in ``agent.tools``, by the asker's
identity: a document or customer record the asker (or, in a channel, a member) may not read gives
nothing, and ``create_ticket`` only proposes a ticket that the asker's confirmation files.

What each call gives the loop:

- ``search_docs`` / ``get_document``: passages, graded and cited like the loop's own search results;
- ``query_crm``: the record as a citable tool passage and its lines as facts, or a note that the
  asker may not read customer records;
- ``create_ticket``: a pending action (the turn then asks the asker to confirm it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from agent.conclusions import tool_passage
from agent.document_requests import find_document
from agent.messages import say
from agent.passages import Passage
from agent.reasoning import ToolCall
from agent.tools import NO_CRM_ACCESS_HERE, TurnTools
from agent.turns import PendingAction

MAX_PASSAGES_PER_CALL = 8  # a whole document may be long: its first sections are enough to grade


@dataclass
class Outcome:
    """One call's result: what the trace shows (``decision``) and what the answer may use."""

    call: ToolCall
    decision: str  # "found", "none", "denied", "missing", "proposed", "unavailable"
    found: list[Passage] = field(default_factory=list)  # to grade, like search results
    record: Passage | None = None  # a CRM record, cited as it is
    note: str = ""  # our words for the answer ("you don't have access to customer records")
    pending: PendingAction | None = None


def run_call(
    tools: TurnTools, call: ToolCall, *, question: str, contact: bool, today: date, lang: str
) -> Outcome:
    """Run one call as the asker. ``contact``: the question asked for contact details (the model
    does not decide what the record shows); ``question``: the asker's own words, for a ticket."""
    args = call.arguments
    if call.name == "search_docs":
        found = tools.search_docs(args["query"], args.get("updated_after"))
        return Outcome(call, "found" if found else "none", found=found[:MAX_PASSAGES_PER_CALL])
    if call.name == "get_document":
        # an id from a search result, or a title ("the travel policy"), read as the asker
        sections = tools.sections(args["doc_id"]) or find_document(tools, args["doc_id"])
        return Outcome(
            call, "found" if sections else "none", found=sections[:MAX_PASSAGES_PER_CALL]
        )
    if call.name == "query_crm":
        customer = args["customer_id"].lstrip("#")
        record = tools.query_crm(customer, contact)
        if record.get("denied"):
            here = bool(tools.turn.member_groups) and record.get("error") == NO_CRM_ACCESS_HERE
            return Outcome(
                call, "denied", note=say(lang, "no_crm_access_here" if here else "no_crm_access")
            )
        if "error" in record:
            return Outcome(call, "missing", note=say(lang, "no_customer", customer=customer))
        return Outcome(call, "found", record=tool_passage(record, today, lang))
    if call.name == "create_ticket":
        body = f"Question: {question}"
        if args.get("body", "").strip():
            body += "\n\n" + args["body"].strip()
        action = tools.create_ticket(args["title"], body)
        return Outcome(call, "proposed" if action else "unavailable", pending=action)
    raise ValueError(f"no tool {call.name!r}: Reasoner.pick_tools must return offered tools only")
