"""Rated answers as evaluation cases: ``footnote feedback export`` writes, in the golden file's
own format (``agent.evaluation.dump_golden``), one case per turn the asker rated, for a person to
review and then run with ``footnote eval --cases FILE``.

A case holds the question (and the asker's earlier questions when it was a follow-up), who asked
(the directory user when their groups are still those they asked with, else the groups), the
documents the answer cited as its expected sources, the vote and reason, and no key facts: the
reviewer writes those. No document text is written: the answer itself stays in the record.

Written for one named reviewer (``--reviewer``), as the index lets that person read now: a case
whose answer, or an earlier question it follows up, cited a document the reviewer may not read is
left out whole — its question, sources and comments describe that document. The asker's own words
are kept only when the reviewer reads everything the asker does by group (the asker's groups are
all the reviewer's) and every cited document: free text may quote anything its writer can read,
not only what the answer cited. What is left out is counted (``Export``), never named.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from agent.evaluation import GoldenItem, dump_golden
from bot.identity.directory import Directory, Person
from bot.reports.feedback import REASONS, FeedbackRecord, FeedbackStore, TurnRecord

FEEDBACK_SET = "feedback"  # the set exported cases belong to, reported apart from the golden set
_SINCE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}

HEADER = """\
Evaluation cases from rated answers (footnote feedback export), in the format of
examples/golden.yaml. For each case: check the question and who asks, keep the sources a correct
answer must cite, write the facts it must contain (or set answerable: false), then run
  footnote eval --cases THIS_FILE
A case whose answer was rated wrong keeps guarding the fix once its facts are filled in."""


def parse_since(text: str, now: dt.datetime | None = None) -> str:
    """``7d``, ``12h``, ``30m``, ``2w`` or an ISO date/time → the timestamp the records compare."""
    now = now or dt.datetime.now(dt.UTC)
    m = _SINCE.match(text)
    if m:
        since = now - dt.timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
    else:
        try:
            since = dt.datetime.fromisoformat(text.strip())
        except ValueError:
            raise ValueError(
                f"--since {text!r}: give an age (7d, 12h, 30m, 2w) or a date (2026-11-24)"
            ) from None
        if since.tzinfo is None:
            since = since.replace(tzinfo=dt.UTC)
    return since.astimezone(dt.UTC).isoformat(timespec="milliseconds")


def case_for(
    turn: TurnRecord,
    feedback: FeedbackRecord,
    directory: Directory,
    earlier: list[str],
    keep_note: bool = True,
) -> tuple[GoldenItem, list[str]]:
    """One rated turn as a case, and the comment lines a reviewer reads above it (the asker's
    own words only with ``keep_note``)."""
    person = directory.find(turn.user_id)
    same_groups = person is not None and sorted(person.groups) == sorted(turn.groups)
    sources = list(dict.fromkeys(c.doc_id for c in turn.citations))
    case_id = f"fb-{turn.turn_id[:12]}"
    item = GoldenItem(
        id=case_id,
        question=turn.question,
        user=turn.user_id if same_groups else f"golden-{case_id}",  # load_golden's "nobody"
        # "I don't know" rated 👍 was right not to answer; anything else should be answered
        answerable=not (turn.status == "unknown" and feedback.vote == "up"),
        sources=sources,
        facts=[],
        kind="feedback",
        turns=earlier,
        today=dt.datetime.fromisoformat(turn.at).date(),
        groups=None if same_groups else tuple(turn.groups),
        set=FEEDBACK_SET,
        verdict=feedback.vote,
        reason=feedback.reason,
    )
    vote = "👍" if feedback.vote == "up" else "👎"
    why = REASONS.get(feedback.reason, "").lower() or "no reason given"
    said = f': "{feedback.note}"' if feedback.note and keep_note else ""
    if feedback.note and not keep_note:
        said = " (the asker's words are left out: they may quote documents you may not read)"
    comments = [
        f"{vote} {why}{said}",
        f"asked {turn.at} in a {turn.platform} {turn.channel_kind} · the answer was {turn.status}"
        + (
            " · in a channel: the answer used only what every member could read"
            if turn.channel_kind == "channel"
            else ""
        ),
    ]
    comments += [f"cited: {c.title or c.doc_id} ({c.doc_id})" for c in turn.citations]
    if not same_groups:
        comments.append(
            "asked by someone whose groups have changed or who left the directory: "
            "asked again with the groups they had"
        )
    comments.append("facts: what a correct answer must contain — for the reviewer to fill in")
    return item, comments


@dataclass(frozen=True)
class Reviewer:
    """Who the cases are written for: their principals, and whether the index lets them read a
    document now (``readable(doc_id)``)."""

    person: Person
    readable: Callable[[str], bool]

    def reads_as_much_as(self, groups: tuple[str, ...]) -> bool:
        return set(groups) <= set(self.person.groups)


@dataclass
class Export:
    text: str
    items: list[GoldenItem]
    cases_left_out: int = 0  # cited (or followed up on) a document the reviewer may not read
    citations_left_out: int = 0  # the unreadable citations of those cases
    notes_left_out: int = 0  # the asker's words, on cases that were kept


def export_cases(
    store: FeedbackStore,
    directory: Directory,
    since: str,
    reviewer: Reviewer,
    history_turns: int = 10,
    history_ttl_s: int = 7 * 24 * 3600,
) -> Export:
    """Every turn rated at or after ``since`` that ``reviewer`` may see, as the text of a cases
    file, and the cases. A follow-up carries the questions the bot still remembered when it
    answered."""
    out = Export("", [])
    comments: dict[str, list[str]] = {}
    for turn, feedback in store.rated_since(since):
        window = dt.datetime.fromisoformat(turn.at) - dt.timedelta(seconds=history_ttl_s)
        earlier = store.earlier_turns(
            turn, limit=history_turns, after=window.isoformat(timespec="milliseconds")
        )
        cited = {c.doc_id for t in (*earlier, turn) for c in t.citations}
        hidden = {d for d in cited if not reviewer.readable(d)}
        if hidden:
            out.cases_left_out += 1
            out.citations_left_out += len(hidden)
            continue
        keep_note = reviewer.reads_as_much_as(turn.groups)
        out.notes_left_out += bool(feedback.note) and not keep_note
        item, lines = case_for(
            turn, feedback, directory, [e.question for e in earlier], keep_note=keep_note
        )
        out.items.append(item)
        comments[item.id] = lines
    out.text = dump_golden(out.items, comments, HEADER)
    return out
