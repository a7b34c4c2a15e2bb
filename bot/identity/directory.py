"""Who a chat user is and which groups they belong to: a YAML file for the demo, an interface for an IdP.

Implementations: ``FileDirectory`` (the YAML file), ``bot.identity.scim.ScimDirectory`` (what an identity
provider pushed), ``bot.identity.graph_directory.GraphDirectory`` (Microsoft Graph, asked per person,
behind ``bot.identity.directory_cache.CachedDirectory``). ``find`` may block on the network or a database:
async code calls it through ``find_off_loop``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import yaml

from ingest.errors import ConfigError, FootnoteError


@dataclass(frozen=True)
class Person:
    user_id: str
    name: str
    email: str = ""
    groups: tuple[str, ...] = ()
    slack_id: str = ""
    teams_id: str = ""

    @property
    def principals(self) -> tuple[str, ...]:
        """What this person reads as: their groups, and ``user:<email>`` (lower-cased) when the
        directory knows their e-mail, so a document a source shared with them by e-mail is
        theirs alone. Every search, tool and document link filters with these."""
        mine = (f"user:{self.email.strip().lower()}",) if self.email.strip() else ()
        return (*self.groups, *mine)


class DirectoryUnavailable(FootnoteError):
    """The directory could not be asked (unreachable, throttled past the retries, refusing the
    app's credentials): nobody is known, so nobody may read anything until it answers again. The
    message says what failed and, for a configuration fault, what to set."""


class Directory(Protocol):
    def find(self, key: str) -> Person | None:
        """Look a person up by user id, e-mail, Slack id or Teams id. None: unknown (or a guest,
        or disabled); ``DirectoryUnavailable`` when the directory cannot tell."""
        ...


async def find_off_loop(directory: Directory, key: str) -> Person | None:
    """``directory.find`` on a worker thread: a Graph or database lookup must not hold up every
    other turn on the event loop while it waits."""
    return await asyncio.to_thread(directory.find, key)


def groups_of(directory: Directory) -> Callable[[str], tuple[str, ...]]:
    """user → their principals (none for someone the directory lacks), for code that needs only
    that."""

    def lookup(user: str) -> tuple[str, ...]:
        person = directory.find(user)
        return person.principals if person else ()

    return lookup


@dataclass
class FileDirectory:
    people: dict[str, Person] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> FileDirectory:
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except OSError as exc:
            raise ConfigError(
                f"cannot read the user directory {path}: {exc}; set FOOTNOTE_DIRECTORY_FILE"
            ) from exc
        people = {}
        for user_id, row in (data.get("users") or {}).items():
            people[user_id] = Person(
                user_id=user_id,
                name=row.get("name", user_id),
                email=row.get("email", ""),
                groups=tuple(row.get("groups", [])),
                slack_id=row.get("slack_id", ""),
                teams_id=str(row.get("teams_id", "")),
            )
        return cls(people)

    def find(self, key: str) -> Person | None:
        if key in self.people:
            return self.people[key]
        key_l = key.lower()
        for p in self.people.values():
            if key_l in (p.email.lower(), p.slack_id.lower(), p.teams_id.lower()):
                return p
        return None
