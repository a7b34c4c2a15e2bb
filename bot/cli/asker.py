"""Who a command acts as (``--user``, else the demo's user with the sample directory only), and
the stop before a question meets an empty index."""

from __future__ import annotations

from pathlib import Path

from bot.arguments import DEMO_USER
from bot.chat.terminal import plain
from bot.cli.process import stderr
from bot.identity.directory import Person
from bot.settings import HANDBOOK_DIRECTORY
from ingest.errors import ConfigError, FootnoteError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


INGEST_CODE = Path(__file__).resolve().parents[2] / "ingest"  # its modules shape an index


class NothingIngested(FootnoteError):
    """Asked before any document is in the index: the answer would be a silent "I don't know"."""


def person_for(args, deps, announce: bool = True) -> Person:
    """Who a command acts as, said on stderr. Without ``--user`` that is the demo's user, and
    only while the sample directory is in use: with a company's directory nobody is assumed."""
    directory_file = deps.settings.directory_file
    source = deps.settings.directory_source
    where = {
        "file": f"{directory_file} (FOOTNOTE_DIRECTORY_FILE)",
        "scim": "what the identity provider pushed over SCIM (their userName or e-mail)",
        "graph": "Microsoft Entra ID (their e-mail, user principal name or object id)",
    }[source]
    name = args.user
    if name is None:
        if source != "file" or Path(directory_file).resolve() != HANDBOOK_DIRECTORY.resolve():
            raise ConfigError(f"say who is asking: pass --user NAME, a user in {where}")
        name = DEMO_USER
    person = deps.directory.find(name)
    if person is None:
        raise ConfigError(f"unknown user {name!r}; pass --user with someone in {where}")
    if announce:
        stderr.print(plain(f"acting as {who(person)}{other_user_hint(args)}", "dim"))
    return person


def who(person: Person) -> str:
    return f"{person.user_id} ({person.name} · {', '.join(person.groups) or 'no groups'})"


def other_user_hint(args) -> str:
    return "" if args.user else "; --user NAME acts as someone else"


def groups_for(args, deps) -> list[str]:
    if getattr(args, "groups", None):
        return [g.strip() for g in args.groups.split(",") if g.strip()]
    return list(person_for(args, deps).principals)


def require_documents(deps) -> None:
    """Stop before a question meets an empty index, which can only answer "I don't know"."""
    if not deps.index.count():
        s = deps.settings
        where = f"{s.qdrant.url} collection {s.qdrant.collection}" if s.qdrant.url else s.index_dir
        raise NothingIngested(
            f"nothing is ingested yet: run footnote ingest {shown(EXAMPLES / 'handbook')} "
            f"(the sample handbook) or footnote ingest YOUR_FOLDER (the index: {where})"
        )


def shown(path: Path) -> str:
    """A path as typed from here: relative under the current folder, absolute elsewhere."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
