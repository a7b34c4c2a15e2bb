"""``footnote feedback``, ``report``, ``digest`` and ``privacy``: what the record of turns tells,
and forgetting a person."""

from __future__ import annotations

import asyncio
import re
import sys

from bot.chat.terminal import console, plain
from bot.cli.asker import shown
from bot.cli.process import stderr
from bot.settings import Settings
from ingest.errors import ConfigError


def open_records(settings: Settings):
    from bot.reports.feedback import FeedbackStore

    return FeedbackStore.open(settings.database, settings.data_dir)


def _with_records(settings: Settings, fn):
    store = open_records(settings)
    try:
        return fn(store)
    finally:
        store.close()


def cmd_feedback(args, settings: Settings) -> int:
    from bot.app import build_deps
    from bot.reports.cases import Reviewer, export_cases, parse_since

    try:
        since = parse_since(args.since)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if not (args.reviewer or "").strip():
        raise ConfigError(
            "say who will read the cases: footnote feedback export --reviewer USER (their user "
            "id or e-mail): what they may not read is left out. Cases name documents and quote "
            "askers, so there is no export for nobody in particular"
        )
    deps = build_deps(settings)
    try:
        directory = deps.directory
        person = directory.find(args.reviewer.strip())
        if person is None:
            raise ConfigError(
                f"--reviewer {args.reviewer.strip()!r} is not in the directory: give their user "
                "id or e-mail as the directory has it"
            )
        readable: dict[str, bool] = {}

        def may_read(doc_id: str) -> bool:
            if doc_id not in readable:
                readable[doc_id] = bool(deps.index.chunks(doc_id, person.principals))
            return readable[doc_id]

        store = open_records(settings)
        try:
            export = export_cases(
                store,
                directory,
                since,
                Reviewer(person, may_read),
                history_turns=settings.redis.history_turns,
                history_ttl_s=settings.redis.history_ttl_s,
            )
        finally:
            store.close()
    finally:
        deps.close()
    items = export.items
    down = sum(1 for i in items if i.verdict == "down")
    summary = (
        f"{len(items)} cases ({down} 👎, {len(items) - down} 👍) rated since {since}, "
        f"for {person.user_id}"
    )
    left_out = (
        f"left out for {person.user_id}: {export.cases_left_out} cases citing "
        f"{export.citations_left_out} documents they may not read, "
        f"{export.notes_left_out} askers' comments (the asker reads documents they may not)"
    )
    if args.out is None:
        sys.stdout.write(export.text)
        stderr.print(plain(summary, "dim"))
        stderr.print(plain(left_out, "dim"))
    else:
        args.out.write_text(export.text, encoding="utf-8")
        console.print(plain(f"wrote {summary} to {shown(args.out)}"))
        console.print(plain(left_out))
        if items:
            console.print(
                plain(
                    f"next: fill in their facts, then footnote eval --cases {shown(args.out)}",
                    "dim",
                )
            )
    return 0


def cmd_report(args, settings: Settings) -> int:
    import json

    from bot.app import build_deps
    from bot.reports.cases import parse_since
    from bot.reports.digest import report_builder
    from bot.reports.gaps import report_lines

    deps = build_deps(settings)
    try:
        build = report_builder(settings, deps)
        if args.action == "gaps":
            try:
                since = parse_since(args.since)
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
            report = build(since, None)
            if args.json:
                sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
            else:
                for line in report_lines(report):
                    console.print(plain(line), highlight=False)
            return 0
        return report_digest(args, settings, build, deps.directory)
    finally:
        deps.close()


def report_digest(args, settings: Settings, build, directory) -> int:
    import datetime as dt

    from bot.reports.digest import current_period, post_digest
    from bot.reports.gaps import report_lines

    period = current_period(dt.datetime.now(dt.UTC), settings.digest)
    if not args.post:
        for line in report_lines(build(period.since, period.until)):
            console.print(plain(line), highlight=False)
        return 0
    if not settings.digest.enabled and not _with_records(settings, lambda s: s.routes()):
        raise ConfigError(
            "nowhere to post: set FOOTNOTE_DIGEST__SLACK_CHANNEL (a channel id) and/or "
            "FOOTNOTE_DIGEST__TEAMS_CONVERSATION with FOOTNOTE_DIGEST__TEAMS_SERVICE_URL, "
            "or route an owner's digest (footnote digest route)"
        )
    outcome = asyncio.run(
        post_digest(settings, lambda: open_records(settings), build, directory=directory)
    )
    if outcome.posted:
        console.print(plain(f"posted the digest of {period.key} to {', '.join(outcome.where)}"))
    else:
        console.print(plain(f"the digest of {period.key} is already posted (or being posted)"))
    return 0


SLACK_CHANNEL_ID = re.compile(r"[CG][A-Z0-9]{6,}")


def cmd_digest(args, settings: Settings) -> int:
    from bot.reports.feedback import DigestRoute

    store = open_records(settings)
    try:
        if args.action == "routes":
            routes = store.routes()
            for r in routes:
                console.print(plain(f"{r.owner}\t{r.platform}\t{r.target}"), highlight=False)
            if not routes:
                console.print(
                    plain(
                        "no routes: every owner's documents are in the default digest "
                        "(add one with footnote digest route --owner … --slack-channel …)",
                        "dim",
                    )
                )
            return 0
        if args.remove:
            gone = store.remove_route(args.owner)
            console.print(
                plain(
                    f"removed the route of {args.owner.strip().lower()}: their documents go to "
                    "the default digest"
                    if gone
                    else f"{args.owner} has no route (footnote digest routes lists them)"
                )
            )
            return 0 if gone else 1
        if not args.owner.strip():
            raise ConfigError("--owner is empty: give the owner as the documents name it")
        if args.slack_channel is not None:
            channel = args.slack_channel.strip()
            if not SLACK_CHANNEL_ID.fullmatch(channel):
                raise ConfigError(
                    f"--slack-channel {channel!r} is not a channel id: use the id (C0123456789, "
                    "in the channel's details in Slack), not its #name"
                )
            r = DigestRoute(args.owner, "slack", channel)
        else:
            conversation = args.teams_conversation.strip()
            if not conversation:
                raise ConfigError("--teams-conversation is empty: give the conversation id")
            r = DigestRoute(args.owner, "teams", conversation)
        store.set_route(r)
        console.print(
            plain(
                f"{r.owner}'s digest goes to {r.platform} {r.target}: footnote serve posts the "
                "last period's at its next check (within 5 minutes), then one each period"
            )
        )
        if r.platform == "teams" and not settings.digest.teams_service_url:
            stderr.print(
                plain(
                    "note: set FOOTNOTE_DIGEST__TEAMS_SERVICE_URL (the conversation's serviceUrl) "
                    "or the post will fail",
                    "yellow",
                )
            )
    finally:
        store.close()
    return 0


def cmd_privacy(args, settings: Settings) -> int:
    from bot.identity.directory import FileDirectory
    from bot.reports.feedback import ago
    from bot.reports.privacy import forget

    store = open_records(settings)
    try:
        if args.action == "purge":
            days = settings.privacy.retention_days
            turns, feedback = store.purge(ago(days))
            console.print(
                plain(
                    f"deleted {turns} turns and {feedback} feedback records older than {days} days"
                )
            )
            return 0
        person = FileDirectory.load(settings.directory_file).find(args.user)
        users = list(dict.fromkeys([args.user, *([person.user_id] if person else [])]))
        done = forget(settings, store, users)
    finally:
        store.close()
    console.print(plain(f"forgot {users[-1]}:"))
    for kind, n in done.removed.items():
        console.print(plain(f"  {n:>5}  {kind}"), highlight=False)
    for where in done.unreachable:
        stderr.print(plain(f"error: not forgotten everywhere: {where}", "red"))
    return 1 if done.unreachable else 0
