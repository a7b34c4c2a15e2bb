"""``/admin``: what people ask, how each turn went, what they thought of it, and the sources.

Server-rendered HTML on the bot's own server; one stylesheet and a small script
(``bot/web/admin_static/``) that only add to pages that read fine without them (tables sort and
filter through links and forms too). Pages: Overview (per-day charts, inline SVG), Turns, one
turn's x-ray (its trace), Feedback, Sources. Access is ``bot/identity/admin_access.py``.

Everything shown is escaped: a question, an answer, a reason, a query are data, never markup.
An answer quotes documents, so its text is shown only to an admin whose groups may read every
document it cites; a trace's passages and dropped sentences likewise, per turn.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import html
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlencode, urlsplit

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_request import FileField
from multidict import MultiDictProxy
from redis.exceptions import RedisError

from agent.traces import TraceRecord, TraceStore
from bot.identity.admin_access import ADMIN_COMMANDS, SESSION_COOKIE, AdminAccess, Session
from bot.identity.directory import Person
from bot.reports.feedback import REASONS, FeedbackRecord, TurnLog, TurnRecord, ago
from bot.web.links import DocumentSource
from ingest.sources.state import SourceRecord

STATUSES = ("answered", "partial", "unknown", "needs_confirmation", "smalltalk", "error")
ROWS = 200  # rows a table shows
TRACES_READ = 2000  # recent traces read for latencies
STATIC = ("admin.css", "admin.js")
HEADERS = {
    "Cache-Control": "no-store",
    "X-Robots-Tag": "noindex",
    "X-Content-Type-Options": "nosniff",
    # A sign-in link's token never leaves in a Referer to another site; under "no-referrer" a
    # browser would send ``Origin: null`` with our own forms' POSTs, and the sign-in could not
    # tell them from a cross-site one (``same_origin``).
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:;"
        " form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
}


def e(value: object) -> str:
    return html.escape(str(value), quote=True)


@dataclass
class AdminData:
    """Where the pages read from; each may be away, and a page then says so."""

    records: TurnLog
    traces: TraceStore | None
    documents: DocumentSource
    sources: Callable[[], list[SourceRecord]]
    retention_days: int


# ── page furniture ───────────────────────────────────────────────────────────────────────────

NAV = (
    ("overview", "/admin", "Overview"),
    ("turns", "/admin/turns", "Turns"),
    ("feedback", "/admin/feedback", "Feedback"),
    ("sources", "/admin/sources", "Sources"),
)


def page(
    title: str, body: str, *, active: str = "", session: Session | None = None, status: int = 200
) -> web.Response:
    nav = "".join(
        f'<a href="{href}"{" aria-current=page" if key == active else ""}>{label}</a>'
        for key, href, label in NAV
    )
    who = ""
    if session is not None:
        who = (
            f'<form class="who" method="post" action="/admin/signout">'
            f"<span>{e(session.person.name)}</span>"
            f'<input type="hidden" name="csrf" value="{e(session.csrf)}">'
            '<button type="submit" class="link">Sign out</button></form>'
        )
    header = (
        '<header class="top"><div class="bar"><a class="brand" href="/admin">Footnote'
        f"<span>admin</span></a><nav>{nav if session else ''}</nav>{who}</div></header>"
    )
    doc = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(title)} · Footnote admin</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/admin/static/admin.css">'
        '<script src="/admin/static/admin.js" defer></script>'
        f'</head><body>{header}<main class="wrap">{body}</main></body></html>'
    )
    return web.Response(text=doc, status=status, content_type="text/html", headers=HEADERS)


def message(title: str, text: str, status: int, hint: str = "") -> web.Response:
    body = f'<section class="card narrow"><h1>{e(title)}</h1><p>{e(text)}</p>'
    body += f'<p class="muted">{e(hint)}</p>' if hint else ""
    return page(title, body + "</section>", status=status)


HOW_TO_SIGN_IN = (
    f'Write "{ADMIN_COMMANDS[0]}" to Footnote in a direct message (Slack) or personal chat '
    f'(Teams), or type "{ADMIN_COMMANDS[1]}" anywhere in Slack: if you are in an admin group '
    "it sends you a sign-in link in a direct message."
)


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a URL, the port filled in; None for anything that is no web URL."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def same_origin(request: web.Request, public_url: str) -> bool:
    """Whether a POST came from one of our own pages (``FOOTNOTE_SERVER__PUBLIC_URL``'s origin).

    Browsers send ``Origin`` with every form POST (the pages' ``Referrer-Policy: same-origin``
    keeps it the real one); ``Referer`` stands in for browsers that send only that. A POST with
    neither came from no browser page of ours: refused, since no browser sign-in lacks both.
    """
    claimed = request.headers.get("Origin") or request.headers.get("Referer") or ""
    own = _origin(public_url)
    return own is not None and _origin(claimed) == own


async def read_form(
    request: web.Request,
) -> MultiDictProxy[str | bytes | bytearray | FileField] | None:
    """The POSTed form, or None when the body is no form aiohttp can read (junk multipart,
    text that is not UTF-8): a 400 for the caller, never a 500."""
    try:
        return await request.post()
    except web.HTTPException:
        raise  # over client_max_size: aiohttp's own 413
    except (ValueError, AssertionError, LookupError, TypeError, HttpProcessingError):
        return None


def pill(status: str) -> str:
    return f'<span class="pill pill-{e(status)}">{e(status.replace("_", " "))}</span>'


def when(at: str) -> str:
    """An ISO timestamp as UTC minutes, in a <time> the script may show in local time."""
    try:
        moment = dt.datetime.fromisoformat(at).astimezone(dt.UTC)
    except ValueError:
        return e(at)
    return f'<time datetime="{e(moment.isoformat())}">{moment:%Y-%m-%d %H:%M}</time>'


def age(at: str | None, now: dt.datetime) -> str:
    if not at:
        return "never"
    try:
        seconds = (now - dt.datetime.fromisoformat(at).astimezone(dt.UTC)).total_seconds()
    except ValueError:
        return "?"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def millis(ms: float | None) -> str:
    if ms is None:
        return "—"
    return f"{ms / 1000:.1f} s" if ms >= 1000 else f"{ms:.0f} ms"


def empty(title: str, text: str) -> str:
    return f'<div class="empty"><p class="empty-title">{e(title)}</p><p>{e(text)}</p></div>'


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    numeric: bool = False


def table(
    columns: Sequence[Column],
    rows: Sequence[tuple[Mapping[str, Any], list[str]]],
    query: Mapping[str, str],
    default: str,
    newest_first: bool = True,
) -> str:
    """Rows (sort values, cell HTML) sorted as the query asks, else by ``default`` (descending
    when ``newest_first``); headers are links that sort."""
    keys = {c.key for c in columns}
    sort = query.get("sort", default)
    sort = sort if sort in keys else default
    first = "desc" if sort == default and newest_first else "asc"
    desc = query.get("dir", first) == "desc"

    def value(row: Mapping[str, Any]) -> tuple[int, Any]:
        v = row.get(sort)
        return (v is None, v if v is not None else 0)

    present: list[tuple[Mapping[str, Any], list[str]]] = [
        r for r in rows if r[0].get(sort) is not None
    ]
    missing = [r for r in rows if r[0].get(sort) is None]
    present.sort(key=lambda r: value(r[0]), reverse=desc)
    head = []
    for c in columns:
        flip = "asc" if (c.key == sort and desc) else "desc" if c.key == sort else "asc"
        href = "?" + urlencode({**query, "sort": c.key, "dir": flip})
        state = f' aria-sort="{"descending" if desc else "ascending"}"' if c.key == sort else ""
        cls = ' class="num"' if c.numeric else ""
        head.append(
            f'<th scope="col"{state}{cls}><a href="{e(href)}" data-sort="{e(c.key)}">'
            f"{e(c.label)}</a></th>"
        )
    body = []
    for values, cells in present + missing:
        tds = []
        for c, cell in zip(columns, cells, strict=True):
            raw = values.get(c.key)
            data = f' data-v="{e(raw)}"' if raw is not None else ' data-v=""'
            label = f' data-label="{e(c.label)}"'
            tds.append(f"<td{data}{label}{' class=num' if c.numeric else ''}>{cell}</td>")
        body.append(f"<tr>{''.join(tds)}</tr>")
    return (
        f'<div class="scroll"><table class="data cards"><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def select(name: str, label: str, options: Iterable[tuple[str, str]], chosen: str) -> str:
    opts = "".join(
        f'<option value="{e(v)}"{" selected" if v == chosen else ""}>{e(text)}</option>'
        for v, text in options
    )
    return f'<label>{e(label)}<select name="{e(name)}" data-autosubmit>{opts}</select></label>'


# ── charts ───────────────────────────────────────────────────────────────────────────────────

W, H, LEFT, BOTTOM, TOP = 720, 200, 40, 22, 10


def _axis(top: float, days: Sequence[str]) -> str:
    parts = []
    for i in range(3):
        v = top * i / 2
        y = H - BOTTOM - (H - BOTTOM - TOP) * i / 2
        label = f"{v:g}"
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{W}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{label}</text>'
        )
    n = len(days)
    step = (W - LEFT) / max(n, 1)
    for i in sorted({0, n // 2, n - 1}):
        x = LEFT + step * (i + 0.5)
        anchor = "start" if i == 0 else "end" if i == n - 1 else "middle"
        parts.append(
            f'<text class="tick" x="{x:.1f}" y="{H - 6}" text-anchor="{anchor}">'
            f"{e(days[i][5:])}</text>"
        )
    return "".join(parts)


def _nice(top: float) -> float:
    """A round top for the axis, so its middle line is round too."""
    if top <= 2:
        return 2.0
    magnitude = 10 ** math.floor(math.log10(top))
    for m in (1, 2, 4, 6, 8, 10):
        if m * magnitude >= top:
            return float(m * magnitude)
    return top


def bar_chart(
    label: str, days: Sequence[str], series: Sequence[tuple[str, str, Sequence[int]]]
) -> str:
    """Stacked bars per day; ``series`` is (name, css class, value per day)."""
    totals = [sum(s[2][i] for s in series) for i in range(len(days))]
    top = _nice(max(totals, default=0))
    step = (W - LEFT) / max(len(days), 1)
    scale = (H - BOTTOM - TOP) / top
    bars = []
    for i, day in enumerate(days):
        y = float(H - BOTTOM)
        tip = ", ".join(f"{name} {values[i]}" for name, _, values in series)
        for _name, cls, values in series:
            h = values[i] * scale
            if h > 0:
                y -= h
                bars.append(
                    f'<rect class="{cls}" x="{LEFT + step * i + step * 0.15:.1f}" y="{y:.1f}"'
                    f' width="{step * 0.7:.1f}" height="{h:.1f}">'
                    f"<title>{e(day)}: {e(tip)}</title></rect>"
                )
    legend = "".join(f'<span class="key {cls}">{e(name)}</span>' for name, cls, _ in series)
    return (
        f'<figure class="chart"><figcaption>{e(label)}<span class="legend">{legend}</span>'
        f'</figcaption><svg viewBox="0 0 {W} {H}" role="img" aria-label="{e(label)}">'
        f"{_axis(top, days)}{''.join(bars)}</svg></figure>"
    )


def line_chart(
    label: str, days: Sequence[str], series: Sequence[tuple[str, str, Sequence[float | None]]]
) -> str:
    """Lines per day in milliseconds; a day without data leaves a gap."""
    values = [v for _, _, vs in series for v in vs if v is not None]
    top = _nice(max(values, default=0.0))
    step = (W - LEFT) / max(len(days), 1)
    scale = (H - BOTTOM - TOP) / top
    lines = []
    for name, cls, vs in series:
        segment: list[str] = []
        segments: list[list[str]] = []
        for i, v in enumerate(vs):
            if v is None:
                if segment:
                    segments.append(segment)
                segment = []
                continue
            x, y = LEFT + step * (i + 0.5), H - BOTTOM - v * scale
            segment.append(f"{x:.1f},{y:.1f}")
            lines.append(
                f'<circle class="{cls}" cx="{x:.1f}" cy="{y:.1f}" r="3">'
                f"<title>{e(days[i])}: {e(name)} {e(millis(v))}</title></circle>"
            )
        if segment:
            segments.append(segment)
        lines += [f'<polyline class="{cls}" points="{" ".join(s)}"/>' for s in segments]
    legend = "".join(f'<span class="key {cls}">{e(name)}</span>' for name, cls, _ in series)
    return (
        f'<figure class="chart"><figcaption>{e(label)}<span class="legend">{legend}</span>'
        f'</figcaption><svg viewBox="0 0 {W} {H}" role="img" aria-label="{e(label)}">'
        f"{_axis(top, days)}{''.join(lines)}</svg></figure>"
    )


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


# ── the routes ───────────────────────────────────────────────────────────────────────────────

Handler = Callable[[web.Request, Session], Awaitable[web.Response]]


def admin_routes(app: web.Application, access: AdminAccess, data: AdminData) -> None:
    """Mount ``/admin`` and its pages on the bot's application."""

    def guarded(handler: Handler) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def wrapper(request: web.Request) -> web.Response:
            session = await asyncio.to_thread(access.session, request.cookies.get(SESSION_COOKIE))
            if session == "unavailable":
                return message(
                    "Directory unavailable",
                    "The company directory is not answering, so admin rights cannot be checked.",
                    503,
                    hint="Try again in a few minutes.",
                )
            if session == "none":
                return message(
                    "Sign in", "Sign in to see the admin page.", 401, hint=HOW_TO_SIGN_IN
                )
            if session == "not_admin":
                return message(
                    "Not an admin",
                    "Your account is not in an admin group any more.",
                    403,
                    hint="Ask the person who runs Footnote to add you to an admin group.",
                )
            assert isinstance(session, Session)
            if await access.revoked(session):
                return message(
                    "Sign in", "This session has ended. Sign in again.", 401, hint=HOW_TO_SIGN_IN
                )
            return await handler(request, session)

        return wrapper

    async def readable(doc_ids: Iterable[str], person: Person) -> dict[str, bool]:
        """Which documents ``person``'s groups may read, as the index decides now."""

        def check() -> dict[str, bool]:
            return {
                d: bool(data.documents.document(d, list(person.groups)))
                for d in dict.fromkeys(doc_ids)
            }

        return await asyncio.to_thread(check)

    async def latencies() -> dict[str, float]:
        if data.traces is None:
            return {}
        traces = data.traces

        def read() -> list[TraceRecord]:
            try:
                return traces.recent(TRACES_READ)
            except Exception:  # a trace store away costs the column, not the page
                return []

        return {
            str(t.get("turn_id")): float(t["ms"])
            for t in await asyncio.to_thread(read)
            if isinstance(t.get("ms"), int | float)
        }

    def unavailable(session: Session, active: str, title: str) -> web.Response:
        return page(
            title,
            f"<h1>{e(title)}</h1>"
            + empty(
                "The database is not answering",
                "Turns and feedback are kept in the database of FOOTNOTE_DATABASE__URL "
                "(SQLite in the data folder by default). Try again in a minute.",
            ),
            active=active,
            session=session,
            status=503,
        )

    # -- sign-in ---------------------------------------------------------------------------

    link_pages = {
        "expired": ("Link expired", "This sign-in link has expired.", 410),
        "used": ("Link used", "This sign-in link has been used already.", 410),
        "invalid": ("Link not valid", "This sign-in link is not valid.", 400),
        "not_admin": (
            "Not an admin",
            "The admin page is only for members of an admin group.",
            403,
        ),
        "unavailable": (
            "Sign-in unavailable",
            "Sign-in cannot be checked right now (Redis or the company directory is not "
            "answering).",
            503,
        ),
    }

    def cross_site() -> web.Response:
        return message(
            "Request refused",
            "This form was not sent from the Footnote admin page.",
            403,
            hint=f"Open the sign-in link from your direct message; it starts with "
            f"{access.public_url}. {HOW_TO_SIGN_IN}",
        )

    def link_refused(verdict: str) -> web.Response:
        title, text, status = link_pages[verdict]
        hint = HOW_TO_SIGN_IN if status != 403 else ""
        return message(title, text, status, hint=hint)

    async def signin_page(request: web.Request) -> web.Response:
        tokens = request.query.getall("t", [])
        if len(tokens) != 1:
            return link_refused("invalid")
        verdict, person = await asyncio.to_thread(access.check_link, tokens[0])
        if verdict != "ok" or person is None:
            return link_refused(verdict)
        body = (
            '<section class="card narrow"><h1>Sign in to Footnote admin</h1>'
            f"<p>Continue as <strong>{e(person.name)}</strong>. The link works once.</p>"
            '<form method="post" action="/admin/signin">'
            f'<input type="hidden" name="t" value="{e(tokens[0])}">'
            '<button type="submit" class="primary">Continue</button></form></section>'
        )
        return page("Sign in", body)

    async def signin(request: web.Request) -> web.Response:
        if not same_origin(request, access.public_url):
            return cross_site()
        form = await read_form(request)
        if form is None:
            return link_refused("invalid")
        token = form.get("t")
        verdict, cookie = await access.spend_link(token if isinstance(token, str) else "")
        if verdict != "ok":
            return link_refused(verdict)
        response = web.HTTPSeeOther("/admin")
        response.set_cookie(SESSION_COOKIE, cookie, **access.cookie_options())  # type: ignore[arg-type]
        response.headers.update(HEADERS)
        return response

    async def signout(request: web.Request, session: Session) -> web.Response:
        if not same_origin(request, access.public_url):
            return cross_site()
        form = await read_form(request)
        if form is None:
            return message("Request refused", "This form could not be read; reload the page.", 400)
        if form.get("csrf") != session.csrf:
            return message("Request refused", "This form has expired; reload the page.", 403)
        try:
            await access.revoke(session)
        except (RedisError, OSError):
            return message("Sign-out failed", "Redis is not answering; try again.", 503)
        response = message("Signed out", "You are signed out of the admin page.", 200)
        response.del_cookie(SESSION_COOKIE, path="/admin")
        return response

    async def static(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        text = resources.files("bot.web").joinpath("admin_static", name).read_text("utf-8")
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        return web.Response(
            text=text,
            content_type=kind,
            headers={"Cache-Control": "max-age=300", "X-Content-Type-Options": "nosniff"},
        )

    # -- turns -----------------------------------------------------------------------------

    async def turns(request: web.Request, session: Session) -> web.Response:
        status = request.query.get("status", "")
        status = status if status in STATUSES else ""
        text = request.query.get("q", "").strip()[:200]
        found = await data.records.read("admin turns", lambda s: s.recent_turns(status, text, ROWS))
        if found is None:
            return unavailable(session, "turns", "Turns")
        ms = await latencies()
        filters = (
            '<form class="filters" method="get" action="/admin/turns">'
            + select("status", "Status", [("", "All"), *((s, s) for s in STATUSES)], status)
            + f'<label>Question contains<input type="search" name="q" value="{e(text)}"'
            ' data-filter="turns"></label><button type="submit">Filter</button></form>'
        )
        columns = [
            Column("at", "Time"),
            Column("asker", "Asker"),
            Column("status", "Status"),
            Column("question", "Question"),
            Column("ms", "Latency", numeric=True),
        ]
        rows = [
            (
                {
                    "at": t.at,
                    "asker": t.user_id,
                    "status": t.status,
                    "question": t.question.lower(),
                    "ms": ms.get(t.turn_id),
                },
                [
                    when(t.at),
                    e(t.user_id),
                    pill(t.status),
                    f'<a href="/admin/turns/{e(t.turn_id)}">{e(t.question)}</a>',
                    millis(ms.get(t.turn_id)),
                ],
            )
            for t in found
        ]
        query = {k: v for k, v in (("status", status), ("q", text)) if v}
        listing = (
            table(columns, rows, {**query, **_sort(request)}, "at")
            if rows
            else empty(
                "No turns match" if query else "No questions yet",
                "Try another filter."
                if query
                else f"Answered questions appear here and are kept {data.retention_days} days.",
            )
        )
        body = (
            '<div class="head"><h1>Turns</h1>'
            f'<p class="muted">The latest {ROWS} questions, newest first.</p></div>'
            f'{filters}<div id="turns">{listing}</div>'
        )
        return page("Turns", body, active="turns", session=session)

    async def xray(request: web.Request, session: Session) -> web.Response:
        turn_id = request.match_info["turn_id"][:200]
        # In a tuple: None is "the database is away", (None,) "no such turn on record".
        found = await data.records.read("admin turn", lambda s: (s.turn(turn_id),))
        if found is None:  # the turn may be on record: "not found" would be a guess
            return unavailable(session, "turns", "Turn x-ray")
        (record,) = found
        votes = await data.records.read("admin turn feedback", lambda s: s.feedback(turn_id))
        trace: TraceRecord | None = None
        if data.traces is not None:
            traces = data.traces
            try:
                trace = await asyncio.to_thread(traces.find, turn_id)
            except Exception:
                trace = None
        if record is None and trace is None:
            return page(
                "Turn not found",
                "<h1>Turn not found</h1>"
                + empty(
                    "No record of this turn",
                    f"Turns are kept {data.retention_days} days, traces for the latest few "
                    "thousand turns.",
                ),
                active="turns",
                session=session,
                status=404,
            )
        body = await render_xray(turn_id, record, trace, votes or [], session.person, readable)
        return page("Turn x-ray", body, active="turns", session=session)

    # -- feedback --------------------------------------------------------------------------

    async def feedback(request: web.Request, session: Session) -> web.Response:
        vote = request.query.get("vote", "")
        vote = vote if vote in ("up", "down") else ""
        reason = request.query.get("reason", "")
        reason = reason if reason in REASONS else ""
        found = await data.records.read(
            "admin feedback", lambda s: s.recent_feedback(vote, reason, ROWS)
        )
        if found is None:
            return unavailable(session, "feedback", "Feedback")
        filters = (
            '<form class="filters" method="get" action="/admin/feedback">'
            + select(
                "vote", "Vote", [("", "All"), ("up", "Helpful"), ("down", "Not helpful")], vote
            )
            + select("reason", "Reason", [("", "All"), *REASONS.items()], reason)
            + '<button type="submit">Filter</button></form>'
        )
        columns = [
            Column("at", "Time"),
            Column("vote", "Vote"),
            Column("reason", "Reason"),
            Column("note", "Comment"),
            Column("question", "Question"),
            Column("asker", "Asker"),
        ]
        rows = [
            (
                {
                    "at": f.at,
                    "vote": f.vote,
                    "reason": f.reason,
                    "note": f.note.lower(),
                    "question": t.question.lower(),
                    "asker": f.user_id,
                },
                [
                    when(f.at),
                    _vote(f.vote),
                    e(REASONS.get(f.reason, "—")),
                    e(f.note) if f.note else '<span class="muted">—</span>',
                    f'<a href="/admin/turns/{e(t.turn_id)}">{e(t.question)}</a>',
                    e(f.user_id),
                ],
            )
            for t, f in found
        ]
        query = {k: v for k, v in (("vote", vote), ("reason", reason)) if v}
        listing = (
            table(columns, rows, {**query, **_sort(request)}, "at")
            if rows
            else empty(
                "No feedback matches" if query else "No feedback yet",
                "Try another filter."
                if query
                else "When people rate an answer (👍 / 👎), their votes and reasons appear here.",
            )
        )
        body = (
            '<div class="head"><h1>Feedback</h1>'
            '<p class="muted">Votes on answers, with the reason and comment people gave.</p></div>'
            f'{filters}<div id="feedback">{listing}</div>'
        )
        return page("Feedback", body, active="feedback", session=session)

    # -- sources ---------------------------------------------------------------------------

    async def sources(request: web.Request, session: Session) -> web.Response:
        try:
            found = await asyncio.to_thread(data.sources)
        except Exception:
            return unavailable(session, "sources", "Sources")
        now = dt.datetime.now(dt.UTC)
        columns = [
            Column("name", "Source"),
            Column("kind", "Kind"),
            Column("last_sync", "Last sync"),
            Column("cursor_at", "Cursor age"),
            Column("errors", "Errors", numeric=True),
            Column("documents", "Documents", numeric=True),
        ]
        rows = [
            (
                {
                    "name": s.name,
                    "kind": s.kind,
                    "last_sync": s.last_sync or "",
                    "cursor_at": s.cursor_at or "",
                    "errors": s.errors,
                    "documents": s.documents,
                },
                [
                    f"<strong>{e(s.name)}</strong>"
                    + (f'<div class="error">{e(s.last_error)}</div>' if s.last_error else ""),
                    e(s.kind),
                    when(s.last_sync) if s.last_sync else '<span class="muted">never</span>',
                    e(age(s.cursor_at, now)),
                    f'<span class="pill pill-error">{s.errors}</span>' if s.errors else "0",
                    f"{s.documents:,}",
                ],
            )
            for s in found
        ]
        listing = (
            table(columns, rows, _sort(request), "name", newest_first=False)
            if rows
            else empty(
                "No sources configured",
                "Connect one with `footnote sources add …`, then run `footnote sync`.",
            )
        )
        routes = await data.records.read("admin digest routes", lambda st: st.routes()) or []
        route_rows = "".join(
            f"<tr><td>{e(r.owner)}</td><td>{e(r.platform.capitalize())}</td>"
            f"<td><code>{e(r.target)}</code></td></tr>"
            for r in routes
        )
        digests = '<h2 id="digest-routes">Weekly digest routes</h2>' + (
            '<div class="scroll"><table class="data"><thead><tr><th>Document owner</th><th>Platform</th>'
            f"<th>Channel or conversation</th></tr></thead><tbody>{route_rows}</tbody></table></div>"
            if routes
            else empty(
                "No owner has a digest of their own",
                "Every document's gaps go to the default digest channel. Route an owner's "
                "with `footnote digest route --owner … --slack-channel …`.",
            )
        )
        body = (
            '<div class="head"><h1>Sources</h1>'
            '<p class="muted">Company sources Footnote syncs, and how fresh each is.</p></div>'
            + listing
            + digests
        )
        return page("Sources", body, active="sources", session=session)

    # -- overview --------------------------------------------------------------------------

    async def overview(request: web.Request, session: Session) -> web.Response:
        days_n = data.retention_days
        today = dt.datetime.now(dt.UTC).date()
        days = [(today - dt.timedelta(days=days_n - 1 - i)).isoformat() for i in range(days_n)]
        counts = await data.records.read("admin overview", lambda s: s.daily(ago(days_n)))
        if counts is None:
            return unavailable(session, "overview", "Overview")
        by_day: dict[str, list[float]] = {}
        if data.traces is not None:
            traces = data.traces

            def read() -> list[TraceRecord]:
                try:
                    return traces.recent(TRACES_READ * 3)
                except Exception:
                    return []

            for t in await asyncio.to_thread(read):
                if isinstance(t.get("ms"), int | float) and isinstance(t.get("at"), int | float):
                    day = dt.datetime.fromtimestamp(float(t["at"]), dt.UTC).date().isoformat()
                    by_day.setdefault(day, []).append(float(t["ms"]))

        def per_day(*keys: str) -> list[int]:
            return [sum(counts.get(d, {}).get(k, 0) for k in keys) for d in days]

        questions = per_day(*STATUSES)
        answered, partial, unknown = per_day("answered"), per_day("partial"), per_day("unknown")
        up, down = per_day("up"), per_day("down")
        p50 = [percentile(by_day[d], 0.5) if d in by_day else None for d in days]
        p95 = [percentile(by_day[d], 0.95) if d in by_day else None for d in days]
        total = sum(questions)
        all_ms = [v for d in days for v in by_day.get(d, [])]
        votes = sum(up) + sum(down)
        tiles = [
            ("Questions", f"{total:,}", f"last {days_n} days"),
            (
                "Answered",
                f"{sum(answered) / total:.0%}" if total else "—",
                f"{sum(partial)} partial · {sum(unknown)} unknown",
            ),
            ("Helpful", f"{sum(up) / votes:.0%}" if votes else "—", f"of {votes} votes"),
            (
                "Latency p50",
                millis(percentile(all_ms, 0.5)) if all_ms else "—",
                f"p95 {millis(percentile(all_ms, 0.95))}" if all_ms else "no traces yet",
            ),
        ]
        kpis = "".join(
            f'<div class="tile"><div class="tile-label">{e(a)}</div>'
            f'<div class="tile-value">{e(b)}</div><div class="tile-note">{e(c)}</div></div>'
            for a, b, c in tiles
        )
        if not total and not votes:
            charts = empty(
                "No questions yet",
                f"Charts fill in as people ask Footnote; they cover the last {days_n} days "
                "(the retention period).",
            )
        else:
            charts = (
                '<div class="charts">'
                + bar_chart("Questions per day", days, [("Questions", "s-total", questions)])
                + bar_chart(
                    "Outcome",
                    days,
                    [
                        ("Answered", "s-answered", answered),
                        ("Partial", "s-partial", partial),
                        ("Unknown", "s-unknown", unknown),
                    ],
                )
                + bar_chart(
                    "Feedback", days, [("Helpful", "s-up", up), ("Not helpful", "s-down", down)]
                )
                + line_chart("Latency (ms)", days, [("p50", "s-p50", p50), ("p95", "s-p95", p95)])
                + "</div>"
            )
        body = (
            '<div class="head"><h1>Overview</h1>'
            f'<p class="muted">The last {days_n} days, per UTC day.</p></div>'
            f'<div class="tiles">{kpis}</div>{charts}'
        )
        return page("Overview", body, active="overview", session=session)

    app.router.add_get("/admin", guarded(overview))
    app.router.add_get("/admin/turns", guarded(turns))
    app.router.add_get("/admin/turns/{turn_id}", guarded(xray))
    app.router.add_get("/admin/feedback", guarded(feedback))
    app.router.add_get("/admin/sources", guarded(sources))
    app.router.add_get("/admin/signin", signin_page)
    app.router.add_post("/admin/signin", signin)
    app.router.add_post("/admin/signout", guarded(signout))
    app.router.add_get("/admin/static/{name}", static)


def _sort(request: web.Request) -> dict[str, str]:
    return {k: request.query[k][:40] for k in ("sort", "dir") if k in request.query}


def _vote(vote: str) -> str:
    if vote == "up":
        return '<span class="pill vote pill-answered">Helpful</span>'
    return '<span class="pill vote pill-error">Not helpful</span>'


def _doc_of(entry: str) -> str:
    """The document of a trace's passage entry (``doc#n`` or ``doc#n: why``)."""
    return entry.split("#", 1)[0]


async def render_xray(
    turn_id: str,
    record: TurnRecord | None,
    trace: TraceRecord | None,
    votes: Sequence[FeedbackRecord],
    admin: Person,
    readable: Callable[[Iterable[str], Person], Awaitable[dict[str, bool]]],
) -> str:
    """One turn: who asked what, the answer (if the admin may read its sources), the feedback,
    and the trace step by step."""
    steps: list[dict[str, Any]] = list(trace.get("steps") or []) if trace else []
    cited = [c.doc_id for c in record.citations] if record else []
    touched = [
        _doc_of(str(x))
        for s in steps
        if s.get("step") != "check"
        for x in [*(s.get("kept") or []), *(s.get("dropped") or [])]
    ]
    may = await readable([*cited, *touched], admin)
    hidden = sorted({d for d, ok in may.items() if not ok})
    question = record.question if record else str(trace.get("question", "") if trace else "")
    status = record.status if record else str(trace.get("status", "") if trace else "")
    facts = [
        ("Asked", when(record.at) if record else "—"),
        ("Asker", e(record.user_id if record else (trace or {}).get("user", ""))),
        ("Where", e(f"{record.platform} · {record.channel_kind}") if record else "—"),
        ("Latency", millis((trace or {}).get("ms"))),
        ("Trace", e((trace or {}).get("summary", "not kept"))),
    ]
    parts = [
        '<p class="crumbs"><a href="/admin/turns">Turns</a> / x-ray</p>',
        f'<div class="head"><h1 class="question">{e(question)}</h1>{pill(status)}</div>',
        '<dl class="facts">'
        + "".join(f"<div><dt>{e(k)}</dt><dd>{v}</dd></div>" for k, v in facts)
        + "</dl>",
    ]
    # the answer
    answer = '<section class="card"><h2>Answer</h2>'
    if record is None:
        answer += empty("Answer not on record", "Only the trace of this turn is kept.")
    elif any(not may.get(d, False) for d in cited):
        answer += (
            '<p class="notice">This answer quotes '
            f"{sum(1 for d in dict.fromkeys(cited) if not may.get(d, False))} document(s) "
            "your groups may not read, so its text is not shown.</p>"
        )
    else:
        answer += f'<p class="answer">{e(record.answer)}</p>'
        if record.citations:
            answer += '<ol class="sources">' + "".join(
                f"<li>{e(c.title or c.doc_id)} <code>{e(c.doc_id)}</code></li>"
                for c in record.citations
            )
            answer += "</ol>"
    parts.append(answer + "</section>")
    # feedback
    fb = '<section class="card"><h2>Feedback</h2>'
    if votes:
        fb += "<ul class='plain'>" + "".join(
            f"<li>{_vote(v.vote)} <strong>{e(REASONS.get(v.reason, 'no reason given'))}</strong>"
            + (f" — {e(v.note)}" if v.note else "")
            + f' <span class="muted">{e(v.user_id)}, {when(v.at)}</span></li>'
            for v in votes
        )
        fb += "</ul>"
    else:
        fb += '<p class="muted">No feedback on this turn.</p>'
    parts.append(fb + "</section>")
    # the trace
    tr = '<section class="card"><h2>Trace</h2>'
    if not steps:
        tr += empty(
            "No trace kept for this turn",
            "Traces are kept for the latest few thousand turns; this one has been rotated out "
            "or was never traced.",
        )
    else:
        if hidden:
            tr += (
                f'<p class="notice">This turn read {len(hidden)} document(s) your groups may not '
                "read: their passages and the queries built from them are not shown.</p>"
            )
        slowest = max((float(s.get("ms") or 0) for s in steps), default=0.0) or 1.0
        rows = []
        for s in steps:
            kept = [str(x) for x in s.get("kept") or []]
            dropped = [str(x) for x in s.get("dropped") or []]
            if s.get("step") == "check":  # dropped sentences of the draft answer: document text
                shown_dropped = (
                    [e(x) for x in dropped]
                    if not hidden
                    else [f"{len(dropped)} sentence(s), hidden"]
                    if dropped
                    else []
                )
            else:
                shown_dropped = [
                    e(x) if may.get(_doc_of(x), False) else "a passage you may not read"
                    for x in dropped
                ]
            shown_kept = [
                e(x) if may.get(_doc_of(x), False) else "a passage you may not read" for x in kept
            ]
            queries = [str(q) for q in s.get("queries") or []]
            shown_queries = (
                [e(q) for q in queries]
                if not hidden or int(s.get("round") or 1) <= 1
                else [f"{len(queries)} quer{'y' if len(queries) == 1 else 'ies'}, hidden"]
            )
            ms = float(s.get("ms") or 0)
            bar = (
                f'<svg class="timing" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">'
                f'<rect width="{max(1.0, 100 * ms / slowest):.1f}" height="8"/></svg>'
            )
            fallback = str(s.get("llm_fallback") or "")
            fallback_cell = (
                f'<span class="pill pill-partial">{e(fallback)}</span>' if fallback else ""
            )
            reason = s.get("reason")
            decision = e(s.get("decision", "")) + (
                f'<div class="muted">{e(reason)}</div>' if reason else ""
            )
            cells = [
                ("Round", e(s.get("round", "")), True),
                ("Step", f"<strong>{e(s.get('step', ''))}</strong>", False),
                ("Decision", decision, False),
                ("Queries", _list(shown_queries), False),
                ("Passages", e(s.get("hits", 0)), True),
                ("Kept", _list(shown_kept, "kept"), False),
                ("Dropped", _list(shown_dropped, "dropped"), False),
                ("LLM fallback", fallback_cell, False),
                ("Time", f"<span>{millis(ms)}{bar}</span>", True),
            ]
            rows.append(
                "<tr>"
                + "".join(
                    f'<td data-label="{label}"{" class=num" if num else ""}>{cell}</td>'
                    for label, cell, num in cells
                )
                + "</tr>"
            )
        tr += (
            '<div class="scroll"><table class="data cards steps"><thead><tr>'
            "<th>Round</th><th>Step</th><th>Decision</th><th>Queries</th>"
            '<th class="num">Passages</th><th>Kept</th><th>Dropped</th><th>LLM fallback</th>'
            '<th class="num">Time</th></tr></thead><tbody>'
            + "".join(rows)
            + "</tbody></table></div>"
        )
    parts.append(tr + "</section>")
    return "".join(parts)


def _list(items: Sequence[str], kind: str = "") -> str:
    if not items:
        return '<span class="muted">—</span>'
    cls = f' class="items {kind}"' if kind else ' class="items"'
    return f"<ul{cls}>" + "".join(f"<li>{x}</li>" for x in items) + "</ul>"
