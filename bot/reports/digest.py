"""The weekly digest: the gap report (``bot/reports/gaps.py``) posted to the document owners' channel —
Slack through the Web API's ``chat.postMessage`` with Block Kit, Teams as a proactive message
into a conversation the bot is installed in (the Bot Framework connector's
``POST /v3/conversations/{id}/activities``, through botbuilder's ``continue_conversation``).

Teams: the proactive message, not an incoming webhook, because it needs nothing new — the bot's
own app id and password, which ``serve`` already holds and checks — and the same card rendering as
answers; Office 365 connector webhooks are being retired by Microsoft, and a webhook URL is a
bearer secret of its own to rotate.

Owners who chose a channel (``footnote digest route``; the ``digest_routes`` table) get their
own share of the report: what concerns their documents (``for_owners``). The rest goes to the
default channel, as before routes existed.

Exactly once per (route, period), however many replicas run: before building or posting, a
replica claims each target with an insert-or-nothing row in the shared database
(``FeedbackStore.claim_digest``; the period's start and the route as primary key). The one whose
insert lands posts; the others see a conflict and do nothing. A post that fails gives that
target back (its row is deleted), so a later check — on any replica — tries again.

Who reads a digest decides what it holds. Before each post, the members of the channel or
conversation it goes to are listed and looked up in the directory exactly as for an answer in a
channel (``bot.chat.conversation.lookup_members``); a member the directory does not know, or a list
that cannot be read, leaves only public documents. An item stays only when every member may read
every document it names or is about (``for_audience``): a topic by its closest documents, what
its answers cited and what each asker alone would have been pointed to; an outdated answer by
what it cited; a stale document and both sides of a conflict by themselves. An item that names no
document is about nothing the index can check: it stays only when every member reads, by group,
everything its askers do. The digest says how many items it left out, never which. An owner's
route is a channel like any other: it gets what its members may read.

Document text and questions are data: every piece is rendered inert (Slack rich_text text
elements, Teams TextRuns — never mrkdwn or Markdown), with no mention and no link.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.chat import slack_blocks, teams_cards
from bot.chat.conversation import Member, Profile, lookup_members
from bot.identity.directory import Directory
from bot.reports.feedback import DigestRoute, FeedbackStore, owner_key
from bot.reports.gaps import DocRef, GapReport
from bot.settings import DigestSettings, Settings
from ingest.errors import ConfigError

log = logging.getLogger(__name__)

CHECK_EVERY_S = 300.0  # how often serve looks whether a period's digest is due
_ANCHOR = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)  # a Monday, 00:00 UTC


@dataclass(frozen=True)
class Period:
    start: dt.datetime  # the report covers [start - length, start); it is due from ``start``
    length: dt.timedelta

    @property
    def key(self) -> str:
        return self.start.strftime("%Y-%m-%dT%H:%MZ")

    @property
    def since(self) -> str:
        return (self.start - self.length).isoformat(timespec="milliseconds")

    @property
    def until(self) -> str:
        return self.start.isoformat(timespec="milliseconds")


def current_period(now: dt.datetime, s: DigestSettings) -> Period:
    """The latest period boundary at or before ``now``: every ``period_days`` from the first
    ``weekday`` at ``hour_utc`` (weekly: each Monday 08:00 UTC by default)."""
    length = dt.timedelta(days=s.period_days)
    anchor = _ANCHOR + dt.timedelta(days=s.weekday, hours=s.hour_utc)
    steps = (now - anchor) // length
    return Period(anchor + steps * length, length)


def replica_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# --- rendering --------------------------------------------------------------------------------


def _title(report: GapReport, name_owner: bool = True) -> str:
    """The owner's address is named only where it stays plain text: Slack's mrkdwn ``text``
    (the notification) would turn an e-mail into a mailto link."""
    whose = ""
    if report.owner:
        whose = f" for {report.owner}" if name_owner else " for your documents"
    return f"Footnote digest{whose} · {report.since[:10]} to {report.until[:10]}"


def _summary(report: GapReport) -> str:
    if report.owner:
        said = (
            f"{report.unanswered} of the {report.turns} questions asked were about your "
            "documents and went unanswered."
        )
    else:
        said = (
            f"{report.turns} questions asked, {report.unanswered} the documents could not answer."
        )
    if report.left_out:
        n = report.left_out
        said += (
            f" {n} item{'' if n == 1 else 's'} left out: not everyone in this conversation may "
            "read the documents concerned."
        )
    return said


# --- what the conversation's members may read -------------------------------------------------

Audience = tuple[tuple[str, ...], ...]  # each member's principals; () for one nobody knows
PUBLIC_ONLY: Audience = ((),)


def for_audience(report: GapReport, audience: Audience) -> GapReport:
    """The part of ``report`` every member of ``audience`` may see, with how many items were
    left out (``left_out``). No member at all counts as a stranger: public documents only."""
    readers = audience or PUBLIC_ONLY

    def shown(docs: Sequence[DocRef], askers: Sequence[Sequence[str]]) -> bool:
        if docs:
            return all(d.readable_by(r) for d in docs for r in readers)
        # nothing to check by: only where every member reads all that its askers do
        return all(set(a) <= set(r) for a in askers for r in readers)

    topics = [t for t in report.topics if shown([*t.closest, *t.related], t.readers)]
    outdated = [o for o in report.outdated if shown(o.cited, [o.groups])]
    stale = [st for st in report.stale if shown([st.doc], [])]
    conflicts = [c for c in report.conflicts if shown([c.older, c.newer], [])]
    dropped = (
        len(report.topics) - len(topics)
        + len(report.outdated) - len(outdated)
        + len(report.stale) - len(stale)
        + len(report.conflicts) - len(conflicts)
    )  # fmt: skip
    return replace(
        report,
        topics=topics,
        outdated=outdated,
        stale=stale,
        conflicts=conflicts,
        left_out=report.left_out + dropped,
    )


async def audience_of(
    directory: Directory, members: Callable[[], AsyncIterator[Member]], where: str
) -> Audience:
    """Who is in the conversation a digest goes to, as the directory knows them; when the list
    or the directory cannot be read, public documents only (fail closed)."""
    try:
        groups, _strangers = await lookup_members(directory, members)
    except Exception as exc:  # an outside call: post what everyone may read
        log.warning("could not list the members of %s: %r; the digest holds public documents "
                    "only", where, exc)  # fmt: skip
        return PUBLIC_ONLY
    return tuple(dict.fromkeys(groups.values())) or PUBLIC_ONLY


def slack_members(client: Any, channel: str) -> Callable[[], AsyncIterator[Member]]:
    """A Slack channel's members but the bot, as the Slack adapter lists them for an answer
    (``conversations.members`` page by page; ``users.info`` for the e-mail and bots, a profile
    Slack will not give making a stranger)."""
    from slack_sdk.errors import SlackApiError

    from bot.chat.conversation import MAX_MEMBERS

    async def profile(user: str) -> Profile:
        try:
            info = await client.users_info(user=user)
        except SlackApiError as exc:
            log.info("users.info %s failed: %s", user, exc)
            return Profile()
        found = info.get("user") or {}
        email = (found.get("profile") or {}).get("email") or ""
        return Profile(email, bool(found.get("is_bot")) or user == "USLACKBOT")

    def member(user: str) -> Member:
        return Member((user,), lambda: profile(user))

    async def members() -> AsyncIterator[Member]:
        me = (await client.auth_test()).get("user_id")
        cursor, seen = None, 0
        while seen < MAX_MEMBERS * 4:
            resp = await client.conversations_members(channel=channel, cursor=cursor, limit=200)
            for user in resp.get("members") or []:
                seen += 1
                if user != me:
                    yield member(str(user))
            cursor = (resp.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break

    return members


# --- one digest per owner ---------------------------------------------------------------------


def for_owners(report: GapReport, routed: Collection[str]) -> dict[str, GapReport]:
    """Split ``report`` by document owner: ``{owner: their share}`` for each routed owner with
    anything to report, and ``""``: what concerns a document whose owner has no route (or no
    document at all) — the default digest, which is the whole report when nothing is routed.
    An item goes to every routed owner of its documents (a topic: of its closest documents; a
    conflict: of both sides), and to the default digest too when one of them is unrouted."""
    routed = {owner_key(o) for o in routed}
    shares: dict[str, GapReport] = {}

    def share(owner: str) -> GapReport:
        if owner not in shares:
            shares[owner] = GapReport(report.since, report.until, report.turns, 0, owner=owner)
        return shares[owner]

    def owners(docs: Sequence[DocRef]) -> set[str]:
        found = {owner_key(d.owner) for d in docs}
        mine = found & routed
        return mine | {""} if (found - routed) or not docs else mine

    share("")
    for t in report.topics:
        for o in owners(t.closest):
            share(o).topics.append(t)
            share(o).unanswered += t.count
    for od in report.outdated:
        for o in owners(od.cited):
            share(o).outdated.append(od)
    for st in report.stale:
        for o in owners([st.doc]):
            share(o).stale.append(st)
    for c in report.conflicts:
        for o in owners([c.older, c.newer]):
            share(o).conflicts.append(c)
    shares[""].unanswered = report.unanswered  # the company-wide figure, as before routes
    return shares


def _doc(d: DocRef) -> str:
    return d.title if d.title and d.title != d.doc_id else d.doc_id


def _sections(report: GapReport) -> list[tuple[str, list[tuple[str, list[str]]]]]:
    """The digest's content, once for both platforms: (heading, [(item line, sub-lines)])."""
    out: list[tuple[str, list[tuple[str, list[str]]]]] = []
    if report.topics:
        items = []
        for i, t in enumerate(report.topics, 1):
            people = f"{t.askers} {'person' if t.askers == 1 else 'people'}"
            sub = [f"“{q}”" for q in t.examples]
            if t.closest:
                sub.append("Closest: " + "; ".join(_doc(d) for d in t.closest))
            asked = f"{t.count} question{'' if t.count == 1 else 's'}"
            items.append((f"{i}. {t.name} — {asked}, {people}", sub))
        out.append(("Questions the documents could not answer", items))
    if report.outdated:
        out.append(
            (
                "Answers marked outdated",
                [
                    (f"“{o.question}”", ["Cited: " + ("; ".join(_doc(d) for d in o.cited) or "—")])
                    for o in report.outdated[:10]
                ],
            )
        )
    if report.stale:
        out.append(
            (
                "Cited often, not updated for a year",
                [
                    (f"{_doc(s.doc)} — cited {s.citations} times, updated {s.doc.updated[:10]}", [])
                    for s in report.stale[:10]
                ],
            )
        )
    if report.conflicts:
        out.append(
            (
                "Documents that disagree",
                [
                    (
                        f"{_doc(c.older)} ({c.older.updated[:10]}) vs {_doc(c.newer)} "
                        f"({c.newer.updated[:10]}) — noted in {c.count} answers",
                        [c.note] if c.note else [],
                    )
                    for c in report.conflicts[:10]
                ],
            )
        )
    if not out and report.left_out:
        line = "Everything this digest had concerns documents not everyone here may read."
        out.append(("Nothing to show here", [(line, [])]))
    elif not out:
        out.append(("Nothing to report", [("Every question found an answer.", [])]))
    return out


def slack_digest(report: GapReport) -> tuple[str, list[dict]]:
    """``chat.postMessage``'s ``text`` (notifications; mrkdwn, so escaped and made inert) and
    ``blocks``: a header, a summary, then one rich_text block per section."""
    blocks: list[dict] = [
        {"type": "header", "text": {"type": "plain_text", "text": _title(report)[:150]}},
        {"type": "context", "elements": [{"type": "plain_text", "text": _summary(report)}]},
    ]
    for heading, items in _sections(report):
        blocks += [
            {"type": "divider"},
            slack_blocks.slack_rich_block(slack_blocks.slack_literal(heading, {"bold": True})),
        ]
        for line, sub in items:
            text = "\n".join([line, *("    " + s for s in sub)])[: slack_blocks.MAX_RICH_TEXT]
            head, _, rest = text.partition("\n")
            elements = slack_blocks.slack_literal(head)
            if rest:
                elements += slack_blocks.slack_literal("\n" + rest, {"italic": True})
            blocks.append(slack_blocks.slack_rich_block(elements))
    text = slack_blocks.slack_inert(f"{_title(report, name_owner=False)}: {_summary(report)}")
    return text, blocks[: slack_blocks.MAX_BLOCKS]


def teams_digest(report: GapReport) -> dict[str, Any]:
    """An Adaptive Card: every line a RichTextBlock of TextRuns (never read as Markdown)."""
    body: list[dict] = [
        teams_cards.teams_plain(_title(report), weight="Bolder", size="Medium"),
        teams_cards.teams_plain(_summary(report), isSubtle=True),
    ]
    for heading, items in _sections(report):
        body.append(teams_cards.teams_plain(heading, weight="Bolder"))
        for line, sub in items:
            body.append(teams_cards.teams_plain(line))
            body += [teams_cards.teams_plain(s, italic=True, isSubtle=True) for s in sub]
    return {
        "type": "AdaptiveCard",
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "version": "1.4",
        "body": body,
    }


# --- posting ----------------------------------------------------------------------------------


async def post_slack(
    settings: Settings,
    report: GapReport,
    directory: Directory,
    client: Any = None,
    channel: str = "",
) -> str:
    """Post to ``channel`` (default ``FOOTNOTE_DIGEST__SLACK_CHANNEL``) what all its members may
    read; the message's ts."""
    from slack_sdk.web.async_client import AsyncWebClient

    slack = settings.slack
    if slack is None:
        raise ConfigError(
            "a digest goes to a Slack channel but Slack is not set up: set FOOTNOTE_SLACK__*"
        )
    client = client or AsyncWebClient(
        token=slack.bot_token.get_secret_value(),
        base_url=slack.api_url or AsyncWebClient.BASE_URL,
    )
    channel = channel or settings.digest.slack_channel
    readers = await audience_of(directory, slack_members(client, channel), f"slack {channel}")
    text, blocks = slack_digest(for_audience(report, readers))
    reply = await client.chat_postMessage(
        channel=channel,
        text=text,
        blocks=blocks,
        unfurl_links=False,
        unfurl_media=False,
    )
    return str(reply.get("ts", ""))


async def post_teams(
    settings: Settings, report: GapReport, directory: Directory, conversation: str = ""
) -> str:
    """A proactive message into ``conversation`` (default ``FOOTNOTE_DIGEST__TEAMS_CONVERSATION``)
    at ``FOOTNOTE_DIGEST__TEAMS_SERVICE_URL``, of what all its members may read."""
    from botbuilder.core import CardFactory, MessageFactory, TurnContext
    from botbuilder.integration.aiohttp import CloudAdapter
    from botbuilder.schema import ChannelAccount, ConversationAccount, ConversationReference

    from bot.chat.teams import FootnoteTeamsBot
    from bot.chat.teams_auth import bot_authentication

    teams, digest = settings.teams, settings.digest
    if teams is None:
        raise ConfigError(
            "a digest goes to a Teams conversation but Teams is not set up: set FOOTNOTE_TEAMS__*"
        )
    if not digest.teams_service_url:
        raise ConfigError(
            "FOOTNOTE_DIGEST__TEAMS_SERVICE_URL is missing: the serviceUrl of the conversation "
            "(in any activity the bot received from it, e.g. https://smba.trafficmanager.net/emea/)"
        )
    adapter = CloudAdapter(bot_authentication(teams))
    reference = ConversationReference(
        channel_id="msteams",
        service_url=digest.teams_service_url,
        conversation=ConversationAccount(id=conversation or digest.teams_conversation),
        bot=ChannelAccount(id=teams.app_id),
    )
    sent: list[str] = []

    async def send(ctx: TurnContext) -> None:
        where = f"teams {reference.conversation.id}"
        readers = await audience_of(directory, lambda: FootnoteTeamsBot.members(ctx), where)
        card = CardFactory.adaptive_card(teams_digest(for_audience(report, readers)))
        reply = await ctx.send_activity(MessageFactory.attachment(card))
        sent.append(getattr(reply, "id", "") or "")

    await adapter.continue_conversation(reference, send, bot_app_id=teams.app_id or None)
    return sent[0] if sent else ""


Builder = Callable[[str, str | None], GapReport]  # (since, until or now) → the report


def report_builder(settings: Settings, deps: Any) -> Builder:
    """(since, until) → the gap report, over the records on file and the index of ``deps``."""
    from bot.reports.gaps import build_report, index_access

    embed, search, lookup = index_access(deps)
    d = settings.digest

    def build(since: str, until: str | None = None) -> GapReport:
        rows = _with_store(
            lambda: FeedbackStore.open(settings.database, settings.data_dir),
            lambda s: s.turns_since(since),
        )
        return build_report(
            rows,
            embed=embed,
            search=search,
            lookup=lookup,
            since=since,
            until=until,
            max_topics=d.topics,
            stale_days=d.stale_days,
            stale_min_citations=d.stale_min_citations,
        )

    return build


def scheduled(
    settings: Settings,
    build: Builder,
    directory: Directory,
    check_every_s: float = CHECK_EVERY_S,
):
    """An aiohttp cleanup context for ``serve``: while the app runs, post each period's digest
    once it is due (every replica checks; the claim lets one post)."""

    def open_store() -> FeedbackStore:
        return FeedbackStore.open(settings.database, settings.data_dir, connect_timeout=3)

    async def loop() -> None:
        while True:
            try:
                await post_digest(settings, open_store, build, directory=directory)
            except Exception as exc:  # logged and retried at the next check; serving goes on
                log.warning("could not post the digest: %s; trying again later", exc)
            await asyncio.sleep(check_every_s)

    async def context(_: Any):
        task = asyncio.ensure_future(loop())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    return context


@dataclass(frozen=True)
class Outcome:
    period: Period
    posted: bool  # False: other replicas (or earlier runs) have every digest of this period
    where: Sequence[str] = ()
    report: GapReport | None = None


DEFAULT_ROUTE = ""  # the claim key of the default channel's digest


async def post_digest(
    settings: Settings,
    open_store: Callable[[], FeedbackStore],
    build: Builder,
    now: dt.datetime | None = None,
    by: str | None = None,
    slack_client: Any = None,
    *,
    directory: Directory,
) -> Outcome:
    """Claim the current period's digests — the default channel's and each routed owner's, one
    claim each — then build the report once and post every share this replica claimed, each
    narrowed to what its channel's members may read (looked up in ``directory``). A share
    whose post fails is given back (the others stay posted); the first failure is raised after
    the rest are done."""
    period = current_period(now or dt.datetime.now(dt.UTC), settings.digest)
    by = by or replica_id()

    def claim(store: FeedbackStore) -> tuple[list[DigestRoute], list[DigestRoute | None]]:
        routes = store.routes()
        targets: list[DigestRoute | None] = [None] if settings.digest.enabled else []
        targets += routes
        won = [t for t in targets if store.claim_digest(period.key, by, _route_key(t))]
        return routes, won

    routes, claimed = await asyncio.to_thread(_with_store, open_store, claim)
    if not claimed:
        return Outcome(period, posted=False)
    try:
        report = await asyncio.to_thread(build, period.since, period.until)
        shares = for_owners(report, [r.owner for r in routes])
    except BaseException:
        await asyncio.to_thread(_with_store, open_store, lambda s: _release(s, period, by, claimed))
        raise
    where: list[str] = []
    failed: BaseException | None = None
    for target in claimed:
        key = _route_key(target)
        try:
            if target is None:
                where += await _post_default(settings, shares[""], directory, slack_client)
            else:
                share = shares.get(target.owner) or GapReport(
                    report.since, report.until, report.turns, 0, owner=target.owner
                )
                if target.platform == "slack":
                    await post_slack(
                        settings, share, directory, slack_client, channel=target.target
                    )
                else:
                    await post_teams(settings, share, directory, conversation=target.target)
                where.append(f"{target.platform} {target.target} for {target.owner}")
        except BaseException as exc:
            await asyncio.to_thread(_with_store, open_store, _releasing(period, by, key))
            if not isinstance(exc, Exception):
                raise
            log.warning(
                "could not post the digest of %s to %s: %s",
                period.key,
                key or "the default channel",
                exc,
            )
            failed = failed or exc
            continue
        await asyncio.to_thread(_with_store, open_store, _marking_posted(period, key))
    if failed is not None:
        raise failed
    log.info("posted the digest of %s to %s", period.key, ", ".join(where) or "nowhere")
    return Outcome(period, posted=True, where=where, report=report)


def _releasing(period: Period, by: str, key: str) -> Callable[[FeedbackStore], None]:
    return lambda store: store.release_digest(period.key, by, key)


def _marking_posted(period: Period, key: str) -> Callable[[FeedbackStore], None]:
    return lambda store: store.digest_posted(period.key, key)


def _route_key(target: DigestRoute | None) -> str:
    return DEFAULT_ROUTE if target is None else target.key


def _release(
    store: FeedbackStore, period: Period, by: str, claimed: Sequence[DigestRoute | None]
) -> None:
    for target in claimed:
        store.release_digest(period.key, by, _route_key(target))


async def _post_default(
    settings: Settings, report: GapReport, directory: Directory, slack_client: Any
) -> list[str]:
    where = []
    if settings.digest.slack_channel:
        await post_slack(settings, report, directory, slack_client)
        where.append(f"slack {settings.digest.slack_channel}")
    if settings.digest.teams_conversation:
        await post_teams(settings, report, directory)
        where.append("teams")
    return where


def _with_store(open_store: Callable[[], FeedbackStore], fn: Callable[[FeedbackStore], Any]) -> Any:
    store = open_store()
    try:
        return fn(store)
    finally:
        store.close()
