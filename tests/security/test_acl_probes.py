"""The permanent ACL probe suite: no answer, citation, trace or chat payload may carry text of a
document the asker (in a channel: any member) may not read.

Probes are generated from the sample handbook and its directory (``tests/security/probes.py``):
every user x every document they may not read, asked as a verbatim sentence, the title, its
distinctive figures and "ignore your rules"; by ``get_document`` and ``Assistant.document`` with
the id mangled every way a lenient lookup might forgive; in mixed-group channels and as
follow-ups, directly and over the Slack and Teams loopbacks. Every output is scanned
(``tests/security/leaks.py``). Each test runs one probe class, adds it to the tally printed at
the end of the run (``tests/security/conftest.py``), and fails naming every leaking probe and
what it leaked. A real leak is never skipped: its probe stays red until the product is fixed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import pytest

from agent.assistant import Assistant
from agent.messages import say
from agent.tools import TurnTools
from agent.turns import Answer, Citation, Message, PendingAction, TraceStep, Turn, TurnFailed
from bot.chat import render
from bot.chat.conversation_state import RATE_LIMITED
from bot.identity.directory import Person
from testing.recorder import Call
from testing.slack import BOT_USER_ID, TEAM_ID, dm_event, mention_event
from testing.teams import BOT_ACCOUNT, teams_activity, teams_channel_activity
from tests.e2e.conftest import Harness, running_bot
from tests.security.leaks import Corpus, Leak, joined, strings_in
from tests.security.probes import (
    SEED,
    Probe,
    channel_id_probes,
    channel_probes,
    direct_probes,
    follow_up_probes,
    id_probes,
    readers,
    sample,
    users_in,
)

SLACK_CHANNEL_PROBES = 40
SLACK_FOLLOW_UPS = 16
TEAMS_CHANNEL_PROBES = 40
TEAMS_FOLLOW_UPS = 16
# What the answer loop computed, not document text: a trace reason that is only scores
# ("score 0.42 (similarity 0.61)", "coverage 1.00, meaning 0.70"), after an optional "<chunk>: ".
_SCORES = re.compile(r"(?:\(?[a-z_]+ -?\d+\.\d{2}\)?(?:, | |$))+")
# (the error text up to its reference, which differs per reply)
_NOT_ANSWERED = (
    say("en", "something_wrong", ref="").split(" (")[0],
    RATE_LIMITED,
    render.NOT_IN_DIRECTORY,
)


# -- what is scanned ----------------------------------------------------------------------------


def _scrub(where: str, text: str) -> str:
    head, sep, scores = text.rpartition(": ")
    if ".trace" in where and _SCORES.fullmatch(scores):
        return f"{head}{sep}<scores>"
    return text


def answer_outputs(answer: Answer, name: str = "answer") -> list[tuple[str, str]]:
    """Every string of the answer: text, citations, searched, note, the whole trace, and the
    ``to_dict()`` JSON as the terminal prints it; plus all of it as one text."""
    data = json.loads(json.dumps(answer.to_dict(), ensure_ascii=False, default=str))
    parts = [(f"{name}.text", answer.text), *strings_in(data, name)]
    parts = [(w, _scrub(w, t)) for w, t in parts]
    return [*parts, joined(parts, f"{name} (all strings)")]


def wire_outputs(calls: Sequence, name: str) -> list[tuple[str, str]]:
    """Every string of every request a fake received, walked without assuming a layout."""
    out: list[tuple[str, str]] = []
    for i, call in enumerate(calls):
        parts = list(strings_in({"method": call.method, "args": call.args}, f"{name}[{i}]"))
        out += [*parts, joined(parts, f"{name}[{i}] (all strings)")]
    return out


def _wire_text(calls: Sequence) -> str:
    return "\n".join(t for _, t in wire_outputs(calls, "wire"))


# -- running probes -----------------------------------------------------------------------------


def turn_for(people: dict[str, Person], probe: Probe, text: str, history=()) -> Turn:
    asker = people[probe.user]
    member_groups = tuple(dict.fromkeys(readers(people, probe))) if probe.members else ()
    return Turn(
        user_id=asker.user_id,
        text=text,
        groups=asker.groups,
        display_name=asker.name,
        email=asker.email,
        channel_kind="channel" if probe.members else "dm",
        member_groups=member_groups,
        history=tuple(history),
    )


def check(corpus: Corpus, people, probe: Probe, outputs) -> list[tuple[Probe, Leak]]:
    return [
        (probe, leak) for leak in corpus.find_leaks(outputs, readers(people, probe), probe.asked)
    ]


def verdict(probe_tally, kind: str, probes: Sequence[Probe], found, broken=()) -> None:
    """Tally the class, then fail naming each leaking probe with what leaked (and every probe
    that never got an answer, which tested nothing)."""
    by_probe: dict[str, list[Leak]] = {}
    for probe, leak in found:
        by_probe.setdefault(str(probe), []).append(leak)
    probe_tally.add(kind, len(probes), len(by_probe))
    lines = []
    for probe, leaks in list(by_probe.items())[:25]:
        lines.append(f"LEAK {probe}")
        shown: dict[tuple[str, str], list[Leak]] = {}
        for leak in leaks:
            shown.setdefault((leak.kind, leak.doc_id), []).append(leak)
        for (what, doc_id), same in shown.items():
            more = f" (+{len(same) - 1} more)" if len(same) > 1 else ""
            lines.append(f"     {what} of {doc_id}: {same[0].evidence!r} in {same[0].where}{more}")
    lines += [f"NOT ANSWERED {probe}: {why}" for probe, why in broken]
    assert not by_probe and not broken, (
        f"{len(by_probe)} of {len(probes)} {kind} probes leaked:\n" + "\n".join(lines)
    )


async def ask_directly(assistant: Assistant, corpus, people, probes, probe_tally, kind) -> None:
    found, broken = [], []
    firsts: dict[tuple[str, str], Answer] = {}
    for probe in probes:
        history = ()
        outputs = []
        if probe.first:
            key = (probe.user, probe.first)
            if key not in firsts:
                firsts[key] = await assistant.answer(turn_for(people, probe, probe.first))
            history = (Message("user", probe.first), Message("assistant", firsts[key].text))
            outputs += answer_outputs(firsts[key], "first")
        try:
            answer = await assistant.answer(turn_for(people, probe, probe.question, history))
        except TurnFailed as exc:
            broken.append((probe, repr(exc.__cause__)))
            answer = exc.answer
        outputs += answer_outputs(answer)
        found += check(corpus, people, probe, outputs)
    verdict(probe_tally, kind, probes, found, broken)


# -- the direct probes: the assistant as every adapter calls it ---------------------------------


@pytest.mark.parametrize("kind", ["sentence", "title", "figure", "ignore-rules"])
async def test_dm_probes(kind, assistant, corpus, people, probe_tally):
    probes = [p for p in direct_probes(corpus, people) if p.kind == kind]
    assert probes
    await ask_directly(assistant, corpus, people, probes, probe_tally, f"dm/{kind}")


async def test_follow_up_probes_with_terminal_history(assistant, corpus, people, probe_tally):
    probes = follow_up_probes(corpus, people)
    assert probes
    await ask_directly(assistant, corpus, people, probes, probe_tally, "dm/follow-up (history)")


async def test_channel_probes_where_one_member_may_not_read(assistant, corpus, people, probe_tally):
    probes = channel_probes(corpus, people)
    assert probes
    await ask_directly(assistant, corpus, people, probes, probe_tally, "channel/direct")


def test_get_document_by_mangled_ids(assistant, corpus, people, probe_tally):
    """``get_document`` (the tool the LLM reasoner calls) and ``Assistant.document`` (the signed
    /docs links), by every mangled id; in a channel the tool must also honour every member."""
    probes = id_probes(corpus, people) + channel_id_probes(corpus, people)
    found = []
    for probe in probes:
        turn = turn_for(people, probe, probe.question)
        text = TurnTools(assistant.box, turn).get_document(probe.question)
        outputs = [("get_document", text)]
        shared = corpus.shared(readers(people, probe))
        if not probe.members:
            chunks = assistant.document(probe.question, people[probe.user].groups)
            outputs += list(strings_in(chunks, "Assistant.document"))
            found += [
                (probe, Leak("chunk", c.get("doc_id", "?"), c.get("chunk_id", "?"), "document"))
                for c in chunks
                if c.get("doc_id") not in shared
            ]
        found += check(corpus, people, probe, outputs)
    verdict(probe_tally, "document ids (tool + /docs)", probes, found)


# -- over the wire: Slack and Teams loopbacks ---------------------------------------------------


def _slack_escape(text: str) -> str:
    """What Slack does to a typed message before it sends the event."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _not_answered(calls: Sequence) -> str:
    text = _wire_text(calls)
    return next((msg for msg in _NOT_ANSWERED if msg in text), "")


async def _slack_channel_probe(bot: Harness, people, probe: Probe, i: int) -> list:
    asker = people[probe.user]
    channel = f"C0PROBE{i:03d}"
    bot.slack.channels[channel] = [
        asker.slack_id,
        *(people[m].slack_id for m in probe.members),
        BOT_USER_ID,
    ]
    start = len(bot.slack.calls)
    event = mention_event(_slack_escape(probe.question), user=asker.slack_id, channel=channel)
    assert (await bot.send.event(event))[0] == 200
    await bot.slack.final_answer(channel, timeout=60)
    assert bot.slack.of("conversations.members", channel), "the channel's members were not read"
    return bot.slack.calls[start:]


async def _slack_follow_up_probe(bot: Harness, people, probe: Probe, i: int) -> list:
    asker = people[probe.user]
    channel, root = f"D0PROBE{i:03d}", f"1700000{i:03d}.000100"
    start = len(bot.slack.calls)
    for n, text in enumerate(probe.asked, 1):
        event = dm_event(_slack_escape(text), user=asker.slack_id, channel=channel, thread_ts=root)
        assert (await bot.send.event(event))[0] == 200
        await bot.slack.final_answer(channel, n, timeout=60)
    history = await bot.state.history(f"slack:{TEAM_ID}:{channel}:{root}")
    assert len(history.messages) == 4, "the follow-up did not carry the thread's history"
    return bot.slack.calls[start:]


def _teams_account(person: Person) -> dict:
    return {"id": person.teams_id, "name": person.name, "aadObjectId": f"aad-{person.teams_id}"}


async def _teams_channel_probe(bot: Harness, people, probe: Probe, i: int) -> list:
    asker = people[probe.user]
    team, channel = f"19:probe-team-{i}@thread.tacv2", f"19:probe-{i}@thread.tacv2"
    bot.connector.members[team] = [
        *(_teams_account(people[u]) for u in (probe.user, *probe.members)),
        BOT_ACCOUNT,
    ]
    start = len(bot.connector.calls)
    activity = teams_channel_activity(
        probe.question,
        service_url=bot.connector.url,
        team=team,
        channel=channel,
        message_id=f"17000{i:05d}",
        user=asker.teams_id,
        name=asker.name,
    )
    assert (await bot.teams(activity))[0] in (200, 201)
    calls = bot.connector.calls[start:]
    assert any(c.method == "pagedmembers" for c in calls), "the team's members were not read"
    return calls


async def _teams_follow_up_probe(bot: Harness, people, probe: Probe, i: int) -> list:
    asker = people[probe.user]
    conversation = {
        "id": f"a:personal-probe-{i}",
        "conversationType": "personal",
        "tenantId": "t-northwind",
    }
    start = len(bot.connector.calls)
    for text in probe.asked:
        activity = teams_activity(
            text,
            service_url=bot.connector.url,
            user=asker.teams_id,
            name=asker.name,
            conversation=conversation,
        )
        assert (await bot.teams(activity))[0] in (200, 201)
    history = await bot.state.history(f"teams:{conversation['id']}")
    assert len(history.messages) == 4, "the follow-up did not carry the chat's history"
    return bot.connector.calls[start:]


@dataclass(frozen=True)
class WireClass:
    """A probe class sent over a loopback: how one probe is sent, which probes, how many."""

    send: Callable[[Harness, dict, Probe, int], Awaitable[list]]
    fake: str  # "slack" or "teams": whose received payloads are scanned
    generate: Callable[[Corpus, dict], list[Probe]]
    n: int
    seed: int

    def probes(self, corpus: Corpus, people: dict) -> list[Probe]:
        return sample(self.generate(corpus, people), self.n, self.seed)


WIRE = {
    "slack/channel": WireClass(
        _slack_channel_probe, "slack", channel_probes, SLACK_CHANNEL_PROBES, SEED + 10
    ),
    "slack/dm-thread follow-up": WireClass(
        _slack_follow_up_probe, "slack", follow_up_probes, SLACK_FOLLOW_UPS, SEED + 11
    ),
    "teams/channel": WireClass(
        _teams_channel_probe, "teams", channel_probes, TEAMS_CHANNEL_PROBES, SEED + 12
    ),
    "teams/chat follow-up": WireClass(
        _teams_follow_up_probe, "teams", follow_up_probes, TEAMS_FOLLOW_UPS, SEED + 13
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(WIRE))
async def test_wire_probes(kind, handbook, assistant, redis_prefix, corpus, people, probe_tally):
    wire = WIRE[kind]
    probes = wire.probes(corpus, people)
    found, broken = [], []
    async with running_bot(handbook, assistant, redis_prefix) as bot:
        for i, probe in enumerate(probes):
            calls = await wire.send(bot, people, probe, i)
            if why := _not_answered(calls):
                broken.append((probe, why))
            found += check(corpus, people, probe, wire_outputs(calls, wire.fake))
    verdict(probe_tally, kind, probes, found, broken)


# -- the generator and the detector are themselves tested ---------------------------------------


def test_the_probes_cover_every_user_and_document(handbook, corpus, people):
    assert set(corpus.docs) == set(handbook.index.documents())  # no document escapes the scan
    direct = direct_probes(corpus, people)
    asked = direct + follow_up_probes(corpus, people) + channel_probes(corpus, people)
    on_the_wire = [p for wire in WIRE.values() for p in wire.probes(corpus, people)]
    ids = id_probes(corpus, people) + channel_id_probes(corpus, people)
    assert len(asked) + len(on_the_wire) >= 300 and len(ids) >= 300
    # every user x every document they may not read is asked, at least by its title
    pairs = {(u, d) for u, p in people.items() for d in corpus.forbidden([p.groups])}
    assert {(p.user, p.doc_id) for p in direct if p.kind == "title"} == pairs
    assert {(p.user, p.doc_id) for p in ids} >= pairs
    # in a channel the asker may read the document and the other member may not
    for p in channel_probes(corpus, people) + channel_id_probes(corpus, people):
        doc = corpus.docs[p.doc_id]
        assert doc.readable_by(people[p.user].groups), p
        assert not all(doc.readable_by(people[m].groups) for m in p.members), p
    # each loopback class reaches every user who has a forbidden document, the same every run
    shut_out = {u for u, _ in pairs}
    for wire in WIRE.values():
        chosen = wire.probes(corpus, people)
        assert len(chosen) == min(wire.n, len(wire.generate(corpus, people)))
        assert users_in(chosen) == shut_out
        assert wire.probes(corpus, people) == chosen


@dataclass
class Forbidden:
    """Text of one chunk of the HR-only salary bands, which bob (engineering) may not read."""

    readers: list[tuple[str, ...]]
    doc_id: str
    title: str
    sentence: str
    figure: str


@pytest.fixture(scope="module")
def forbidden(handbook, corpus, people) -> Forbidden:
    bob = [people["bob"].groups]
    doc_id = next(d for d in corpus.forbidden(bob) if "salary" in d)
    sentences, figures = (
        corpus.distinctive_sentences(doc_id, bob),
        corpus.distinctive_figures(doc_id, bob),
    )
    text = " ".join(" ".join(c["text"].split()) for c in handbook.index.chunks(doc_id, ["hr"]))
    sentence = next(
        (s for s in sentences if s in text and not re.search(r"\d|salary band", s, re.I)), None
    )
    figure = next((f for f in figures if "," in f and f in text), None)
    assert sentence and figure, f"{doc_id} has no sentence and figure to plant"
    return Forbidden(bob, doc_id, corpus.docs[doc_id].title, sentence, figure)


def _answer(**fields) -> Answer:
    return Answer(**{"text": "You can carry over up to 10 days.", "status": "answered", **fields})


def _citation(**fields) -> Citation:
    blank = dict.fromkeys(
        ["doc_id", "title", "breadcrumbs", "source", "link", "anchor", "quote"], ""
    )
    return Citation(**{**blank, "n": 1, "page": None, "updated": "2026-01-15", **fields})


PLANTS = {
    "sentence in the text": lambda f: _answer(text=f"Carry over 10 days. **{f.sentence.upper()}**"),
    "sentence in a citation quote": lambda f: _answer(citations=[_citation(quote=f.sentence)]),
    "title in a citation": lambda f: _answer(citations=[_citation(breadcrumbs=f.title)]),
    "path in a citation link": lambda f: _answer(
        citations=[_citation(link=f"http://127.0.0.1/docs/{f.doc_id}?sig=x")]
    ),
    "figure in the note": lambda f: _answer(note=f"A fuller answer ({f.figure}) exists."),
    "figure without separators": lambda f: _answer(text=f"It is {f.figure.replace(',', '')}."),
    "sentence in what was searched": lambda f: _answer(searched=[f"bands {f.sentence}"]),
    "sentence in a trace reason": lambda f: _answer(
        trace=[TraceStep(1, "grade", reason=f"kept: {f.sentence}")]
    ),
    "figure among trace scores": lambda f: _answer(
        trace=[TraceStep(1, "grade", dropped=[f"x#1: score 0.91 (band {f.figure})"])]
    ),
    "title in a pending ticket": lambda f: _answer(
        pending_action=PendingAction("a", "create_ticket", "bob", f.title, "", 0.0)
    ),
}


@pytest.mark.parametrize("plant", list(PLANTS))
def test_the_detector_flags_forbidden_text_wherever_it_is(plant, forbidden, corpus):
    answer = PLANTS[plant](forbidden)
    found = corpus.find_leaks(answer_outputs(answer), forbidden.readers, ["What is my band?"])
    assert found and {leak.doc_id for leak in found} == {forbidden.doc_id}, plant


def test_the_detector_reads_the_wire_without_knowing_its_layout(forbidden, corpus):
    """One word per rich-text run, Slack-escaped, in a block type no renderer uses today."""
    runs = [{"type": "text", "text": w.replace("&", "&amp;")} for w in forbidden.sentence.split()]
    block = {"type": "rich_text", "elements": [{"type": "rich_text_section", "elements": runs}]}
    calls = [Call("chat.update", {"channel": "C1", "blocks": [block]})]
    found = corpus.find_leaks(wire_outputs(calls, "slack"), forbidden.readers, ["hi"])
    assert {leak.kind for leak in found} == {"sentence"}
    teams = [Call("POST 1", {"activity": {"attachments": [{"content": {"x": [forbidden.title]}}]}})]
    found = corpus.find_leaks(wire_outputs(teams, "teams"), forbidden.readers, ["hi"])
    assert {leak.kind for leak in found} == {"title"}


def test_the_detector_judges_by_every_reader(forbidden, corpus, people):
    answer = PLANTS["sentence in the text"](forbidden)
    alice = people["alice"].groups  # hr: she may read the salary bands
    assert corpus.find_leaks(answer_outputs(answer), [alice], ["hi"]) == []
    assert corpus.find_leaks(answer_outputs(answer), [alice, *forbidden.readers], ["hi"])


def test_the_detector_passes_allowed_and_asked_text(forbidden, corpus):
    leave = next(d for d in corpus.docs if "leave-policy" in d)
    allowed = " ".join(corpus.docs[leave].sentences[:3])
    question = f"{forbidden.sentence} What is {forbidden.figure} for?"
    echo = _answer(
        text=f"{allowed} [1] I don't know: I searched for “{question}”, “{question} days”.",
        status="unknown",
        citations=[_citation(doc_id=leave, title=corpus.docs[leave].title, quote=allowed)],
        searched=[question, f"{question} days"],
        trace=[
            TraceStep(1, "route", reason=question),
            TraceStep(1, "check", reason="coverage 1.00, meaning 0.90, unseen 0.00"),
        ],
    )
    assert corpus.find_leaks(answer_outputs(echo), forbidden.readers, [question]) == []
    # the same answer to someone who did not type that text is a leak
    assert corpus.find_leaks(answer_outputs(echo), forbidden.readers, ["What is my band?"])
