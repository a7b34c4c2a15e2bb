"""What the asker says besides the question, over rules written to the reader: "he", "his",
"she" and "her" of a situation told in the third person ("my brother … his licence"), and the
"yes" that answers a rule's follow-up question, are no words of the question that no document
uses. Made-up documents, the real index and the offline reasoner."""

from __future__ import annotations

import asyncio

import pytest

from agent.assistant import build_assistant
from agent.turns import Turn

# written to the reader ("you"), as rules usually are: no he, his, she or her
LICENCE = """# Glimber keeping licence

## Renewing a licence

You can renew a glimber keeping licence at the island office up to 30 days before it ends.

## Moving glimbers

Glimbers may leave Varnholm only in a closed crate approved by the island office.
"""

FERRY = """# Ferry timetable

## Winter

The winter ferry to Varnholm leaves the mainland at 7:15 and at 16:40.
"""


@pytest.fixture(scope="module")
def assistant(tmp_path_factory, embedders):
    from bot.app import build_deps
    from bot.settings import Settings

    docs = tmp_path_factory.mktemp("island")
    (docs / "licence.md").write_text(LICENCE, encoding="utf-8")
    (docs / "ferry.md").write_text(FERRY, encoding="utf-8")
    (docs / "_access.yaml").write_text('acl: ["*"]\n', encoding="utf-8")
    deps = build_deps(Settings(data_dir=tmp_path_factory.mktemp("footnote")))
    deps.__dict__["embedders"] = embedders
    report = deps.ingester.ingest(docs)
    assert not report.failed, report.failed
    yield build_assistant(deps)
    deps.close()


def ask(assistant, text: str):
    return asyncio.run(assistant.answer(Turn(user_id="u1", text=text, groups=("staff",))))


@pytest.mark.parametrize(
    "question",
    [
        "My brother keeps glimbers and his licence ends soon. Can he renew his licence?",
        "My sister is abroad and her licence ends soon. Can she renew her licence herself?",
    ],
)
def test_a_question_about_someone_else_is_answered_by_the_rule_written_to_you(assistant, question):
    a = ask(assistant, question)
    assert a.status == "answered" and "30 days" in a.text, a.text


@pytest.mark.parametrize(
    "message",
    [
        "Can I renew my licence? Do you keep glimbers? Yes.",
    ],
)
def test_the_askers_yes_is_no_word_of_the_question(assistant, message):
    """The asker's answer to a rule's follow-up question, written into the message: no document
    says "yes", and it is not a word of what is asked."""
    a = ask(assistant, message)
    assert a.status == "answered" and "30 days" in a.text, (a.status, a.text)
