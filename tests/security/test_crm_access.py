"""``query_crm`` runs with the asker's identity (hole 3): only the CRM reader groups (the demo:
sales, support, managers) get customer records; in a channel only if every member may; contact
details only when the question asks for them. Real assistant over the handbook, real SQLite CRM."""

from __future__ import annotations

import asyncio

import pytest

from agent.assistant import build_assistant
from agent.turns import Turn
from bot.identity.directory import FileDirectory
from tests.conftest import ROOT

DIRECTORY = FileDirectory.load(ROOT / "examples" / "directory.yaml")
CUSTOMER = "Show me customer 4502"
# What the CRM holds for 4502 and must not reach someone without access.
PII = ("@", "Contact", "contact")


@pytest.fixture(scope="module")
def assistant(handbook_deps):
    return build_assistant(handbook_deps)


def ask(assistant, user: str, text: str, **kw):
    person = DIRECTORY.find(user)
    turn = Turn(user_id=user, text=text, groups=person.groups, **kw)
    return asyncio.run(assistant.answer(turn))


def record(assistant) -> dict:
    found = assistant.box.crm.customer("4502")
    assert found is not None
    return found


@pytest.mark.parametrize("user", ["erin", "bob", "wei", "sam"])
def test_people_outside_the_reader_groups_get_the_refusal_and_nothing_else(assistant, user):
    facts = record(assistant)
    answer = ask(assistant, user, CUSTOMER)
    assert answer.text == "You don't have access to customer records."
    assert not answer.citations and answer.pending_action is None
    dumped = str(answer.to_dict())
    for value in (facts["company"], facts["email"], facts["contact"]):
        assert str(value) not in dumped
    for order in facts["orders"]:
        assert str(order["order_id"]) not in dumped and str(int(order["amount_eur"])) not in dumped


def test_readers_get_the_record_without_contact_details_unless_they_ask(assistant):
    facts = record(assistant)
    answer = ask(assistant, "dave", CUSTOMER)
    assert facts["company"] in answer.text
    assert facts["email"] not in answer.text and facts["contact"] not in answer.text
    asked = ask(assistant, "dave", "What is the email address of customer 4502?")
    assert facts["email"] in asked.text


def test_in_a_channel_every_member_must_be_a_reader(assistant):
    facts = record(assistant)
    dave, olena, erin = (DIRECTORY.find(u).groups for u in ("dave", "olena", "erin"))
    mixed = ask(assistant, "dave", CUSTOMER, channel_kind="channel", member_groups=(dave, erin))
    assert facts["company"] not in str(mixed.to_dict())
    assert "not everyone here may read customer records" in mixed.text.lower()
    shared = ask(assistant, "dave", CUSTOMER, channel_kind="channel", member_groups=(dave, olena))
    assert facts["company"] in shared.text


def test_the_reader_groups_are_configuration(handbook_deps):
    settings = handbook_deps.settings.model_copy(
        update={"crm": handbook_deps.settings.crm.model_copy(update={"reader_groups": ["hr"]})}
    )
    deps = type(handbook_deps)(settings)
    deps.__dict__.update(
        {k: handbook_deps.__dict__[k] for k in ("embedders", "index", "retriever")}
    )
    assistant = build_assistant(deps)
    assert record(assistant)["company"] in ask(assistant, "alice", CUSTOMER).text
    assert ask(assistant, "dave", CUSTOMER).text == "You don't have access to customer records."
