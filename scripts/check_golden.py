"""Check the sample corpus (examples/handbook), the demo directory, the CRM and the golden set.

    python scripts/check_golden.py [--examples PATH] [-v]

Exits with status 1 and lists every problem if a check fails. Checks:

* corpus: enough documents of each format, every document has title/owner/updated, access
  rules resolve as intended (drafts/ has no rule, no _access.yaml at the root), the multi-page
  PDFs really differ per page, and no document mentions pets;
* directory.yaml: every user has identity fields and known groups;
* golden.yaml: required fields and kinds, minimum counts per kind, every source exists and is
  readable by the asker (and, in a channel, by every member), every fact occurs
  (case-insensitively; for a fact with alternatives, one of them) in at least one listed
  source, acl_denied entries name a document the user cannot read, and the fields of the
  second set are well-formed (turns, conclusions, forbidden, today, groups, channel);
* crm.json: customers referenced in the ticket log exist and orders are consistent with the plans.

The access rules mirror the ingester's conventions: Markdown front-matter ``acl`` first, then a
``<file>.meta.yaml`` sidecar, then the nearest ``_access.yaml`` up to the corpus root; no rule
means admins only. A front-matter block or sidecar without an ``acl`` key falls through to the
next level. A PDF or Word file without a title in its sidecar takes the title from its own
metadata, as the ingester does.

A fact is looked up in the text as extracted and, for PDFs, also in the text a reader sees: the
lines repeated on every page (running header, "Page N of M") removed and words hyphenated at a
line end joined. So a fact may sit in a sentence that runs across a page break.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import yaml

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GROUPS = {
    "hr",
    "engineering",
    "finance",
    "sales",
    "support",
    "managers",
    "contractors",
    "admins",
    "*",
}
ADMIN_GROUPS = {"admins"}
KINDS = {
    "single",
    "compound",
    "compare",
    "conflict",
    "version",
    "uk",
    "zh",
    "crosslingual",
    "acl_denied",
    "unanswerable",
    "injection",
    # the second set (issue 12): one kind per way answers went wrong for new users
    "table",
    "scope",
    "superlative",
    "followup",
    "tool_policy",
    "longpdf",
    "no_conflict",
    "terse",
    "typo",
    "ja",
    "de",
    "ru",
    "near_miss",
    "channel",
    # the third set (issue 21): questions for the steps, requirements or conditions of something,
    # answered by them, not by a sentence that names the word "steps"
    "broad",
    # a greeting or thanks around the question ("Good morning! …", "… ? Thanks!"), as in a chat
    "courtesy",
    # a year the question names decides which document or row answers, or that none does
    "year",
}
MIN_KIND = {
    "unanswerable": 14,
    "acl_denied": 5,
    "version": 4,
    "uk": 5,
    "zh": 5,
    "crosslingual": 2,
    "injection": 1,
    "conflict": 1,
    "table": 10,
    "scope": 8,
    "superlative": 6,
    "followup": 10,
    "tool_policy": 6,
    "longpdf": 10,
    "no_conflict": 3,
    "terse": 3,
    "typo": 3,
    "ja": 3,
    "de": 3,
    "ru": 3,
    "near_miss": 6,
    "channel": 2,
}
MIN_ENTRIES = 150
# Kinds whose entries expect "I don't know"; followups and channel questions may go either way.
REFUSAL_KINDS = {"unanswerable", "acl_denied", "near_miss"}
EITHER_KINDS = {"followup", "channel", "year"}
SETS = {"v1", "v2", "v3"}
MIN_FORMATS = {".md": 1, ".html": 1, ".pdf": 2, ".docx": 2, ".txt": 2}
EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(\.[\w-]+)+$")
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
PET = re.compile(r"\bpets?\b", re.IGNORECASE)
INJECTION_MARK = "ignore your previous instructions"


# ----------------------------------------------------------------------------- corpus model


def is_document(path: Path, root: Path) -> bool:
    rel = path.relative_to(root)
    if not path.is_file():
        return False
    if any(part.startswith((".", "_")) for part in rel.parts):
        return False
    return not path.name.endswith(".meta.yaml")


def documents(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if is_document(p, root))


def split_front_matter(text: str) -> tuple[dict, str]:
    if not text.startswith("---"):
        return {}, text
    m = re.match(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(\r?\n|$)", text, re.DOTALL)
    if not m:
        return {}, text
    meta = yaml.safe_load(m.group(1)) or {}
    return (meta if isinstance(meta, dict) else {}), text[m.end() :]


def load_yaml(path: Path) -> dict:
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return data if isinstance(data, dict) else {}


def metadata(path: Path, root: Path) -> dict:
    """title/owner/updated/url and the resolved acl (None = no rule = admins only)."""
    fm: dict = {}
    if path.suffix == ".md":
        fm, _ = split_front_matter(path.read_text(encoding="utf-8"))
    side = load_yaml(path.with_name(path.name + ".meta.yaml"))
    meta = {k: fm.get(k, side.get(k)) for k in ("title", "owner", "updated", "url")}
    if not meta["title"]:
        meta["title"] = embedded_title(path)
    acl, acl_from = None, "none"
    if "acl" in fm:
        acl, acl_from = fm["acl"], "front-matter"
    elif "acl" in side:
        acl, acl_from = side["acl"], "sidecar"
    else:
        folder = path.parent
        while True:
            access = folder / "_access.yaml"
            if access.exists() and "acl" in load_yaml(access):
                acl = load_yaml(access)["acl"]
                acl_from = str(access.relative_to(root))
                break
            if folder == root:
                break
            folder = folder.parent
    meta["acl"] = acl
    meta["acl_from"] = acl_from
    return meta


def can_read(groups: set[str], acl: list[str] | None) -> bool:
    if groups & ADMIN_GROUPS:
        return True
    if acl is None:
        return False
    return "*" in acl or bool(groups & set(acl))


# ----------------------------------------------------------------------------- text extraction


def pdf_pages(path: Path) -> list[str]:
    from pypdf import PdfReader

    return [page.extract_text() or "" for page in PdfReader(str(path)).pages]


def embedded_title(path: Path) -> str:
    """The title a PDF or Word file carries in its own metadata ("" if none or reportlab's
    "untitled"), which the ingester uses when the sidecar names no title."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        from pypdf import PdfReader

        info = PdfReader(str(path)).metadata
        title = str(info.title or "").strip() if info else ""
    elif suffix == ".docx":
        import docx

        title = (docx.Document(str(path)).core_properties.title or "").strip()
    else:
        return ""
    return "" if title.lower() == "untitled" else title


PAGE_NUMBER = re.compile(r"^\s*(page\s+)?\d+(\s+(of|/)\s+\d+)?\s*$", re.IGNORECASE)


def pdf_reader_text(pages: list[str]) -> str:
    """A PDF's text as a reader sees it: the lines repeated on most pages (running header and
    footer) and page numbers dropped, words hyphenated at a line end joined again."""
    lines = [[line.strip() for line in page.splitlines()] for page in pages]
    seen = Counter(line for page in lines for line in set(page) if line)
    repeated = {line for line, n in seen.items() if len(pages) >= 3 and n >= 0.75 * len(pages)}
    kept = [
        line
        for page in lines
        for line in page
        if line and line not in repeated and not PAGE_NUMBER.match(line)
    ]
    return re.sub(r"(?<=[a-z])-\n(?=[a-z])", "", "\n".join(kept))


def docx_text(path: Path) -> str:
    import docx

    d = docx.Document(str(path))
    parts = [p.text for p in d.paragraphs]
    for table in d.tables:
        for row in table.rows:
            parts.append(" | ".join(cell.text for cell in row.cells))
    for section in d.sections:
        parts.extend(p.text for p in section.footer.paragraphs)
        parts.extend(p.text for p in section.header.paragraphs)
    return "\n".join(parts)


def html_text(path: Path) -> str:
    raw = path.read_text(encoding="utf-8")
    try:
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(raw, "html.parser")
        for tag in soup(["style", "script"]):
            tag.decompose()
        return soup.get_text(" ")
    except ImportError:  # pragma: no cover - bs4 is a project dependency
        import html

        raw = re.sub(r"(?is)<(style|script).*?</\1>", " ", raw)
        return html.unescape(re.sub(r"<[^>]+>", " ", raw))


def document_text(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        pages = pdf_pages(path)
        # As extracted, then as read: a fact may be found in either.
        return "\n".join(pages) + "\n\n" + pdf_reader_text(pages)
    if suffix == ".docx":
        return docx_text(path)
    if suffix in (".html", ".htm"):
        return html_text(path)
    text = path.read_text(encoding="utf-8")
    if suffix == ".md":
        text = split_front_matter(text)[1]
    return text


def norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u2212", "-").replace("\u2011", "-")
    return re.sub(r"\s+", " ", text).strip().lower()


# ----------------------------------------------------------------------------- checks


class Report:
    def __init__(self) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def error(self, msg: str) -> None:
        self.errors.append(msg)

    def warn(self, msg: str) -> None:
        self.warnings.append(msg)


def check_corpus(root: Path, rep: Report) -> tuple[dict[str, dict], dict[str, str]]:
    docs = documents(root)
    metas: dict[str, dict] = {}
    texts: dict[str, str] = {}
    if len(docs) < 18:
        rep.error(f"corpus: only {len(docs)} documents (need at least 18)")
    formats = Counter(p.suffix.lower() for p in docs)
    for suffix, n in MIN_FORMATS.items():
        if formats[suffix] < n:
            rep.error(f"corpus: {formats[suffix]} {suffix} documents (need at least {n})")
    if (root / "_access.yaml").exists():
        rep.error(
            "corpus: _access.yaml at the corpus root would open every document without a rule"
        )

    four_page_pdf = False
    for path in docs:
        rel = path.relative_to(root).as_posix()
        meta = metadata(path, root)
        metas[rel] = meta
        try:
            texts[rel] = document_text(path)
        except Exception as exc:  # noqa: BLE001 - report and continue
            rep.error(f"{rel}: cannot extract text ({exc})")
            texts[rel] = ""
            continue
        if len(texts[rel].split()) < 80:
            rep.warn(f"{rel}: very short ({len(texts[rel].split())} words)")
        if not meta["title"]:
            rep.error(f"{rel}: no title in front-matter or sidecar")
        if not meta["owner"] or not EMAIL.match(str(meta["owner"])):
            rep.error(f"{rel}: owner missing or not an email ({meta['owner']!r})")
        updated = meta["updated"]
        if not updated or not ISO_DATE.match(str(updated)):
            rep.error(f"{rel}: updated missing or not YYYY-MM-DD ({updated!r})")
        acl = meta["acl"]
        if acl is not None:
            if not isinstance(acl, list) or not acl:
                rep.error(f"{rel}: acl must be a non-empty list, got {acl!r}")
            else:
                unknown = set(acl) - GROUPS
                if unknown:
                    rep.error(f"{rel}: unknown groups in acl: {sorted(unknown)}")
        if PET.search(texts[rel]):
            rep.error(f"{rel}: mentions pets")
        if path.suffix.lower() == ".pdf":
            pages = [norm(t) for t in pdf_pages(path)]
            if len(pages) >= 4 and len(set(pages)) == len(pages):
                four_page_pdf = True
    if not four_page_pdf:
        rep.error("corpus: no PDF with 4+ pages whose pages all differ")

    # drafts/ must stay admins-only: no rule anywhere on the way up.
    for rel, meta in metas.items():
        if rel.startswith("drafts/") and meta["acl"] is not None:
            rep.error(
                f"{rel}: drafts must have no access rule, resolved {meta['acl']} from {meta['acl_from']}"
            )
    if not any(rel.startswith("drafts/") for rel in metas):
        rep.error("corpus: no document in drafts/")
    return metas, texts


def check_directory(path: Path, rep: Report) -> dict[str, set[str]]:
    users = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("users") or {}
    out: dict[str, set[str]] = {}
    for name, info in users.items():
        for key in ("name", "email", "groups", "slack_id", "teams_id"):
            if not info.get(key):
                rep.error(f"directory: {name} has no {key}")
        groups = set(info.get("groups") or [])
        if groups - GROUPS:
            rep.error(f"directory: {name} has unknown groups {sorted(groups - GROUPS)}")
        out[name] = groups
    return out


def denied_comments(golden_path: Path) -> dict[str, str]:
    """Map entry id -> path named in a '# denied: <path>' comment directly above it."""
    result: dict[str, str] = {}
    pending: str | None = None
    for line in golden_path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^#\s*denied:\s*(\S+)", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^-\s+id:\s*(\S+)", line)
        if m:
            if pending:
                result[m.group(1)] = pending
            pending = None
    return result


def alternatives(fact: object) -> list[str]:
    """A fact is a string or a list of acceptable strings (any one of them is enough)."""
    if isinstance(fact, list):
        return [str(f) for f in fact]
    return [str(fact)]


def check_item_fields(e: dict, where: str, users: dict[str, set[str]], rep: Report) -> None:
    """The optional fields of the second set: well-formed, or an error that says how."""
    if e.get("set", "v1") not in SETS:
        rep.error(f"{where}: set must be one of {sorted(SETS)}")
    for key in ("facts", "conclusions"):
        for fact in e.get(key) or []:
            alts = alternatives(fact)
            if not alts or not all(a.strip() for a in alts):
                rep.error(f"{where}: empty string in {key}")
    forbidden = e.get("forbidden")
    if forbidden is not None and (
        not isinstance(forbidden, list) or not all(isinstance(f, str) and f for f in forbidden)
    ):
        rep.error(f"{where}: forbidden must be a list of strings")
    if e.get("conclusions") and e.get("answerable") is not True:
        rep.error(f"{where}: conclusions only make sense on answerable entries")
    turns = e.get("turns")
    if turns is not None and (
        not isinstance(turns, list) or not turns or not all(isinstance(t, str) for t in turns)
    ):
        rep.error(f"{where}: turns must be a non-empty list of earlier questions")
    if (e.get("kind") == "followup") != bool(turns):
        rep.error(f"{where}: followup entries and only they have turns")
    today = e.get("today")
    if today is not None and not isinstance(today, dt.date):
        rep.error(f"{where}: today must be a YYYY-MM-DD date, got {today!r}")
    if e.get("kind") == "tool_policy" and today is None:
        rep.error(f"{where}: tool_policy entries depend on the date, give them a today:")
    groups = e.get("groups")
    if groups is not None:
        if "user" in e:
            rep.error(f"{where}: give user or groups, not both")
        if not isinstance(groups, list) or not groups or set(groups) - GROUPS:
            rep.error(f"{where}: groups must be a non-empty list of known groups {sorted(GROUPS)}")
    channel = e.get("channel")
    if channel is not None:
        if e.get("kind") != "channel":
            rep.error(f"{where}: only channel entries have channel members")
        if not isinstance(channel, list) or not channel:
            rep.error(f"{where}: channel must list the other members of the channel")
        else:
            for member in channel:
                if member not in users:
                    rep.error(f"{where}: unknown channel member {member!r}")
    elif e.get("kind") == "channel":
        rep.error(f"{where}: channel entries need channel: [other members]")


def asker_groups(e: dict, users: dict[str, set[str]]) -> set[str] | None:
    if "groups" in e:
        return set(e.get("groups") or [])
    return users.get(e.get("user"))


def check_golden(
    path: Path,
    root: Path,
    metas: dict[str, dict],
    texts: dict[str, str],
    users: dict[str, set[str]],
    rep: Report,
) -> Counter:
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    kinds: Counter = Counter()
    ids: set[str] = set()
    denied = denied_comments(path)
    used_sources: set[str] = set()
    users_seen: set[str] = set()
    norm_texts = {rel: norm(t) for rel, t in texts.items()}
    scope_askers: dict[str, set[str]] = {}

    for e in entries:
        qid = str(e.get("id"))
        where = f"golden {qid}"
        for key in ("id", "question", "answerable", "sources", "facts", "kind"):
            if key not in e:
                rep.error(f"{where}: missing {key}")
        if "user" not in e and "groups" not in e:
            rep.error(f"{where}: missing user (or groups)")
        if qid in ids:
            rep.error(f"{where}: duplicate id")
        ids.add(qid)
        kind = e.get("kind")
        kinds[kind] += 1
        if kind not in KINDS:
            rep.error(f"{where}: unknown kind {kind!r}")
        check_item_fields(e, where, users, rep)
        user = e.get("user")
        if user is not None:
            users_seen.add(user)
            if user not in users:
                rep.error(f"{where}: unknown user {user!r}")
                continue
        groups = asker_groups(e, users) or set()
        readers = [groups] + [users[m] for m in e.get("channel") or [] if m in users]
        sources = e.get("sources") or []
        facts = e.get("facts") or []
        if kind == "scope":
            who = "contractor" if "contractors" in groups else "employee"
            scope_askers.setdefault(norm(str(e.get("question", ""))), set()).add(who)

        if e.get("answerable") is False:
            if sources:
                rep.error(f"{where}: unanswerable entries must have sources: []")
            if kind not in REFUSAL_KINDS | EITHER_KINDS:
                rep.error(f"{where}: answerable false but kind {kind}")
            if kind == "acl_denied":
                target = denied.get(qid)
                if not target:
                    rep.warn(f"{where}: acl_denied without a '# denied:' comment")
                elif target not in metas:
                    rep.error(f"{where}: denied document {target} does not exist")
                elif can_read(groups, metas[target]["acl"]):
                    rep.error(f"{where}: {user} CAN read {target}, so this is not acl_denied")
            continue

        if e.get("answerable") is not True:
            rep.error(f"{where}: answerable must be true or false")
        if kind in REFUSAL_KINDS:
            rep.error(f"{where}: kind {kind} must have answerable: false")
        if not sources:
            rep.error(f"{where}: answerable entry without sources")
        if not facts:
            rep.error(f"{where}: answerable entry without facts")
        if kind in ("compound", "compare", "no_conflict") and len(sources) < 2:
            rep.error(f"{where}: {kind} needs at least 2 sources")
        for src in sources:
            used_sources.add(src)
            if src not in metas:
                rep.error(f"{where}: source {src} is not a document in the corpus")
                continue
            for reader in readers:
                if not can_read(reader, metas[src]["acl"]):
                    rep.error(
                        f"{where}: {sorted(reader)} cannot read source {src} (acl {metas[src]['acl']})"
                    )
        for fact in facts:
            if not any(
                norm(alt) in norm_texts.get(src, "")
                for alt in alternatives(fact)
                for src in sources
            ):
                rep.error(f"{where}: fact {fact!r} not found in {sources}")
        for conclusion in e.get("conclusions") or []:
            for alt in alternatives(conclusion):
                quoted = [src for src in sources if norm(alt) in norm_texts.get(src, "")]
                if quoted:
                    rep.error(
                        f"{where}: conclusion {alt!r} is written in {quoted}; quoting it would "
                        "pass without drawing the conclusion (make it a fact, or reword it)"
                    )
        if kind == "longpdf" and not any(s.endswith(".pdf") for s in sources):
            rep.error(f"{where}: longpdf entries need a PDF source")
        question = norm(str(e.get("question", "")))
        if len(question.split()) >= 8 and any(
            question.rstrip("?") in norm_texts.get(s, "") for s in sources
        ):
            rep.warn(f"{where}: question is copied verbatim from a source")
        if kind == "injection" and not any(
            INJECTION_MARK in norm_texts.get(s, "") for s in sources
        ):
            rep.error(f"{where}: injection question whose sources contain no injection line")
        if kind == "conflict" and (not sources or "2026" not in sources[0]):
            rep.warn(f"{where}: conflict question should list the current (2026) source first")

    if len(entries) < MIN_ENTRIES:
        rep.error(f"golden: {len(entries)} entries (need at least {MIN_ENTRIES})")
    for kind, n in MIN_KIND.items():
        if kinds[kind] < n:
            rep.error(f"golden: {kinds[kind]} {kind} entries (need at least {n})")
    if kinds["compound"] + kinds["compare"] < 5:
        rep.error("golden: need at least 5 compound/compare entries")
    if kinds["scope"] and not any(len(who) == 2 for who in scope_askers.values()):
        rep.error("golden: no scope question is asked by both a contractor and an employee")
    missing_users = set(users) - users_seen
    if missing_users:
        rep.warn(f"golden: no questions from {sorted(missing_users)}")
    unused = set(metas) - used_sources
    if len(unused) > len(metas) // 4:
        rep.warn(f"golden: many documents are never a source: {sorted(unused)}")
    return kinds


def check_crm(path: Path, texts: dict[str, str], rep: Report) -> None:
    if not path.exists():
        rep.error("crm.json missing")
        return
    crm = json.loads(path.read_text(encoding="utf-8"))
    customers = {c["id"]: c for c in crm.get("customers", [])}
    plans = {p["id"]: p for p in crm.get("plans", [])}
    if len(customers) < 8:
        rep.error(f"crm: only {len(customers)} customers (need 8)")
    for o in crm.get("orders", []):
        where = f"crm order {o.get('order_id')}"
        if o.get("customer_id") not in customers:
            rep.error(f"{where}: unknown customer {o.get('customer_id')}")
        if o.get("plan") not in plans:
            rep.error(f"{where}: unknown plan {o.get('plan')}")
        if o.get("billing") not in ("monthly", "annual"):
            rep.error(f"{where}: billing must be monthly or annual")
        if not ISO_DATE.match(str(o.get("order_date", ""))) or not str(
            o.get("order_date")
        ).startswith("2026"):
            rep.error(f"{where}: order_date must be an ISO date in 2026")
        plan = plans.get(o.get("plan")) or {}
        price = plan.get("price_eur_per_user_month")
        if price and o.get("seats"):
            expected = (
                price
                * o["seats"]
                * (1 if o["billing"] == "monthly" else 12 * (1 - plan.get("annual_discount", 0)))
            )
            if abs(expected - float(o["amount_eur"])) > 0.01:
                rep.error(f"{where}: amount {o['amount_eur']} != {expected:.2f}")
    if not any(
        o["customer_id"] == 4471 and o["plan"] == "team" and o["billing"] == "monthly"
        for o in crm.get("orders", [])
    ):
        rep.error("crm: customer 4471 needs a monthly Team order")
    log = texts.get("support/ticket-log.txt", "")
    for cid in sorted({int(x) for x in re.findall(r"\|\s*(\d{4}) \(", log)}):
        if cid not in customers:
            rep.error(f"crm: ticket log mentions customer {cid}, which is not in crm.json")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=Path, default=EXAMPLES)
    ap.add_argument(
        "-v", "--verbose", action="store_true", help="print the resolved metadata per document"
    )
    args = ap.parse_args(argv)
    root = args.examples / "handbook"
    rep = Report()

    metas, texts = check_corpus(root, rep)
    users = check_directory(args.examples / "directory.yaml", rep)
    kinds = check_golden(args.examples / "golden.yaml", root, metas, texts, users, rep)
    check_crm(args.examples / "crm.json", texts, rep)

    if args.verbose:
        for rel, meta in metas.items():
            acl = "admins only" if meta["acl"] is None else ", ".join(meta["acl"])
            print(f"{rel:45} {acl:38} ({meta['acl_from']}) {meta['updated']} {meta['owner']}")
        print()
    print(
        f"{len(metas)} documents, {sum(kinds.values())} golden entries: "
        + ", ".join(f"{k}={n}" for k, n in sorted(kinds.items()))
    )
    for w in rep.warnings:
        print(f"warning: {w}")
    for e in rep.errors:
        print(f"ERROR: {e}")
    if rep.errors:
        print(f"{len(rep.errors)} error(s)")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
