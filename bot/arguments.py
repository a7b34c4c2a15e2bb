"""The command line's arguments, parsed with the standard library alone (``bot.entry`` parses
with them before anything else is imported). Nothing of Footnote is imported here: ``bot.cli``
builds its own parser from this module, and this module never reaches back.
"""

from __future__ import annotations

import argparse
from pathlib import Path

# agent.corpora.DATASETS, written out: --help imports nothing of Footnote (test_startup checks
# the two agree)
CORPORA = ("squad2", "conditionalqa", "policyqa", "doc2dial", "mtrag", "or_sharc")

DEMO_USER = "alice"  # who ask, chat and search act as while the sample directory is in use

USER_HELP = (
    f"who is asking: a user from FOOTNOTE_DIRECTORY_FILE (with the sample directory, "
    f"{DEMO_USER} unless given)"
)


WORKERS_HELP = (
    "parse and embed in N processes, writing in this one (default 1: all in this process)"
)


def workers_arg(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"--workers takes a number of processes >= 1, got {text!r}"
        )
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="footnote", description="Answers from your company's documents, with citations."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="index a folder of documents (incremental)")
    p.add_argument("folder", type=Path)
    p.add_argument(
        "--acl",
        default=None,
        help="default groups for files with no access rule of their own, e.g. hr,managers "
        "(default: FOOTNOTE_INGEST__DEFAULT_ACL; none: admins only)",
    )
    p.add_argument(
        "--collection",
        default=None,
        help="index into another collection (e.g. the fallback source)",
    )
    p.add_argument("--workers", type=workers_arg, default=1, help=WORKERS_HELP)

    p = sub.add_parser("sources", help="company sources to sync: add one, list them")
    what = p.add_subparsers(dest="action", required=True)
    what.add_parser("list", help="each source: documents, last sync, cursor age, errors")
    add = what.add_parser("add", help="connect a source (then run footnote sync)")
    kinds = add.add_subparsers(dest="kind", required=True)
    web = kinds.add_parser("web", help="an intranet site, through its sitemap.xml")
    web.add_argument("--sitemap", required=True, help="e.g. https://intranet.example/sitemap.xml")
    web.add_argument(
        "--acl",
        default="",
        help="who may read its pages: groups (hr or group:hr), user:EMAIL, or * for every "
        "member of the directory; comma-separated (none: admins only)",
    )
    web.add_argument("--name", default=None, help="defaults to the site's host name")
    wiki = kinds.add_parser(
        "confluence",
        help="Confluence Cloud spaces, with their permissions "
        "(FOOTNOTE_CONFLUENCE__EMAIL and FOOTNOTE_CONFLUENCE__API_TOKEN at sync time)",
    )
    wiki.add_argument("--url", required=True, help="your site, e.g. https://acme.atlassian.net")
    wiki.add_argument(
        "--space", action="append", required=True, help="a space key; repeat for more spaces"
    )
    wiki.add_argument(
        "--group-map",
        default=None,
        help="YAML mapping Confluence group names to directory groups, for groups not synced "
        "from your identity provider (e.g. hr-team: hr)",
    )
    wiki.add_argument(
        "--everyone-group",
        action="append",
        default=None,
        help="a Confluence group every licensed user is in, read as * (default: confluence-users)",
    )
    wiki.add_argument("--name", default=None, help="defaults to the site's host name")
    sp = kinds.add_parser(
        "sharepoint",
        help="SharePoint document libraries or a OneDrive, with their permissions, through "
        "Microsoft Graph (FOOTNOTE_GRAPH__TENANT_ID, __CLIENT_ID, __CLIENT_SECRET at sync time)",
    )
    where = sp.add_mutually_exclusive_group(required=True)
    where.add_argument("--site", help="e.g. https://acme.sharepoint.com/sites/Support")
    where.add_argument("--drive-id", help="one drive by its Graph id, e.g. a person's OneDrive")
    sp.add_argument(
        "--drive", default=None, help="one document library of the site, by name (default: all)"
    )
    sp.add_argument(
        "--group-map",
        default=None,
        help="YAML mapping SharePoint site group names to directory groups "
        "(e.g. 'Support Members: support'); unmapped site groups are left out",
    )
    sp.add_argument(
        "--full-every-days",
        type=float,
        default=7.0,
        help="list every file again this often, not only Graph's delta (default: 7)",
    )
    sp.add_argument(
        "--concurrency",
        type=int,
        default=4,
        help="files fetched from Graph at once (default: 4; 1 to 16)",
    )
    sp.add_argument("--name", default=None, help="defaults to the site's name")
    gdrive = kinds.add_parser(
        "gdrive",
        help="a Google shared drive or folder, with its sharing "
        "(FOOTNOTE_GDRIVE__KEY_FILE, and FOOTNOTE_GDRIVE__SUBJECT with domain-wide delegation)",
    )
    where = gdrive.add_mutually_exclusive_group(required=True)
    where.add_argument("--shared-drive", help="a shared drive's name (or id)")
    where.add_argument("--folder", help="a folder's id (the last part of its URL)")
    gdrive.add_argument(
        "--domain",
        action="append",
        default=None,
        help="your Workspace domain: files shared with everyone in it are read as * "
        "(default: the domain of FOOTNOTE_GDRIVE__SUBJECT); repeat for more",
    )
    gdrive.add_argument("--name", default=None, help="defaults to the drive's or folder's name")

    p = sub.add_parser("sync", help="bring company sources up to date (incremental)")
    p.add_argument("--source", default=None, help="only this source (default: every one)")
    p.add_argument("--workers", type=workers_arg, default=1, help=WORKERS_HELP)
    p.add_argument(
        "--shard",
        default=None,
        metavar="INDEX/COUNT",
        help="write only this shard's documents, e.g. 0/4 (one per pod of a Kubernetes Indexed "
        "Job; needs a Qdrant server and FOOTNOTE_DATABASE__URL): the cursor moves when every "
        "shard is done",
    )

    p = sub.add_parser("search", help="ranked passages for a query, as a given user or groups")
    p.add_argument("query")
    who = p.add_mutually_exclusive_group()
    who.add_argument("--user", help=USER_HELP)
    who.add_argument("--groups", help="comma-separated groups")
    p.add_argument("-k", "--top-k", type=int, default=5)

    for name, text in (
        ("ask", "answer one question, with citations"),
        ("chat", "a conversation in the terminal"),
    ):
        p = sub.add_parser(name, help=text)
        if name == "ask":
            p.add_argument("question")
            p.add_argument("--json", action="store_true", help="print the Answer as JSON")
            p.add_argument(
                "--yes", action="store_true", help="confirm a proposed ticket without asking"
            )
        p.add_argument("--user", help=USER_HELP)
        p.add_argument("--trace", action="store_true", help="show every step of the loop")

    p = sub.add_parser("demo", help="ingest the sample handbook, then chat")
    p.add_argument("--user", help=USER_HELP)
    p.add_argument("--trace", action="store_true")

    p = sub.add_parser("eval", help="run the golden question set and print the metrics")
    cases = p.add_mutually_exclusive_group()
    cases.add_argument("--golden", type=Path, default=None, help="defaults to examples/golden.yaml")
    cases.add_argument(
        "--cases",
        type=Path,
        default=None,
        help="a file of cases in the golden format (e.g. from footnote feedback export), "
        "asked of the documents already ingested",
    )
    cases.add_argument(
        "--dataset",
        default=None,
        metavar="NAME",
        help=f"a public answer set instead: {' | '.join(CORPORA)}, or all (every set and the "
        "golden set in one table); each corpus is ingested once into a scratch index under the "
        "data dir and reused while its files and the index settings stay the same",
    )
    p.add_argument(
        "--split",
        choices=["train", "dev", "test"],
        default="dev",
        help="with --dataset: the questions of this split (by document; default dev)",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="only N questions: the first N golden items; with --dataset a fixed sample per "
        "set that keeps the share of unanswerable questions (all asks the golden set whole)",
    )
    p.add_argument(
        "--eval-dir",
        type=Path,
        default=None,
        help="with --dataset: the folder holding answers/ (default ../shared/eval beside the "
        "checkout)",
    )
    p.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --dataset: write each set's metrics and every item's outcome to FILE",
    )
    p.add_argument("--kind", default="", help="only these kinds, e.g. table,followup")
    p.add_argument("--failures", action="store_true", help="list the items answered wrongly")

    p = sub.add_parser("feedback", help="rated answers: export them as evaluation cases")
    what = p.add_subparsers(dest="action", required=True)
    export = what.add_parser(
        "export", help="answers rated in a period, as cases in the golden file's format"
    )
    export.add_argument(
        "--since", default="7d", help="an age (7d, 12h, 2w) or a date (2026-11-24); default 7d"
    )
    export.add_argument("--out", type=Path, default=None, help="a file (default: stdout)")
    export.add_argument(
        "--reviewer",
        default=None,
        help="who will read the cases (user id or e-mail in the directory): cases citing a "
        "document they may not read, and askers' words they might not be allowed to see, are "
        "left out and counted. Required.",
    )

    p = sub.add_parser("report", help="for document owners: what the documents could not answer")
    what = p.add_subparsers(dest="action", required=True)
    gaps = what.add_parser(
        "gaps",
        help="unanswered questions by topic, outdated answers, stale and disagreeing documents",
    )
    gaps.add_argument(
        "--since", default="7d", help="an age (7d, 12h, 2w) or a date (2026-11-24); default 7d"
    )
    gaps.add_argument("--json", action="store_true", help="print the report as JSON")
    digest = what.add_parser(
        "digest",
        help="the gap report of the last period, as posted to FOOTNOTE_DIGEST__SLACK_CHANNEL / "
        "FOOTNOTE_DIGEST__TEAMS_CONVERSATION",
    )
    digest.add_argument(
        "--post",
        action="store_true",
        help="post it (once per period, however many replicas or runs; serve does it on schedule)",
    )

    p = sub.add_parser(
        "digest", help="where each document owner's weekly digest goes (Slack or Teams)"
    )
    what = p.add_subparsers(dest="action", required=True)
    route = what.add_parser(
        "route",
        help="send the digest of one owner's documents to their own channel (or --remove it)",
    )
    route.add_argument(
        "--owner", required=True, help="as the documents name it (owner: in front matter)"
    )
    where = route.add_mutually_exclusive_group(required=True)
    where.add_argument("--slack-channel", help="a channel id, e.g. C0123456789 (invite Footnote)")
    where.add_argument(
        "--teams-conversation",
        help="a conversation id, e.g. 19:…@thread.tacv2 (posted at FOOTNOTE_DIGEST__TEAMS_SERVICE_URL)",
    )
    where.add_argument(
        "--remove", action="store_true", help="their documents go to the default digest again"
    )
    what.add_parser("routes", help="list the owners' routes")

    p = sub.add_parser("privacy", help="delete recorded questions, answers and feedback")
    what = p.add_subparsers(dest="action", required=True)
    what.add_parser(
        "purge",
        help="delete what is older than FOOTNOTE_PRIVACY__RETENTION_DAYS (serve does it hourly)",
    )
    forget = what.add_parser(
        "forget",
        help="delete everything of one person: turns, feedback, traces, conversation histories, "
        "pending and filed tickets",
    )
    forget.add_argument(
        "--user", required=True, help="their user id, e-mail, Slack or Teams id in the directory"
    )

    p = sub.add_parser(
        "serve", help="the Slack and Teams adapters, citation links and health checks"
    )
    p.add_argument(
        "--socket-mode",
        action="store_true",
        help="Slack over Socket Mode (needs FOOTNOTE_SLACK__APP_TOKEN)",
    )

    p = sub.add_parser("bench", help="measure retrieval quality and speed, or ingest throughput")
    p.add_argument("what", choices=["retrieval", "ingest"])
    p.add_argument(
        "--dataset",
        default="scifact",
        help="scifact | xquad-en | xquad-zh | xquad-ru | xquad-zh-en | xquad-ru-en",
    )
    p.add_argument(
        "--eval-dir", type=Path, default=None, help="defaults to ../shared/eval beside the checkout"
    )
    p.add_argument("--split", default="test")
    p.add_argument("--limit", type=int, default=None, help="only the first N queries")
    p.add_argument(
        "--workers",
        default=None,
        metavar="N,M,…",
        help="with ingest: the handbook ingested with each number of worker processes "
        "(e.g. 1,2), chunks per second and the ratio to the first",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="with ingest: only the handbook, stage by stage (parse, each encoder, sparse, index "
        "write) beside its encoders called directly; needs no evaluation data",
    )
    p.add_argument(
        "--folder",
        type=Path,
        default=None,
        help="with ingest --profile: this folder instead of the sample handbook",
    )
    return parser
