"""The connector seam: list changes since a cursor, as documents with their permissions.

A connector never writes anything. ``changes(cursor, known)`` yields ``Batch`` es; each carries
the cursor to store once that batch is in the index (``ingest.sources.sync``), so a sync killed
between two batches resumes after the last one written, and a batch written but not recorded is
simply written again (the index skips what is unchanged).

Permissions are principals, named by the directory that owns them: ``group:<id>``,
``user:<email>``, or ``*`` for every member of the directory (never "anyone who can reach the bot").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ingest.errors import ConfigError, FootnoteError
from ingest.settings import ConfluenceSettings, GoogleDriveSettings, GraphSettings

EVERYONE = "*"
GROUP = "group:"
USER = "user:"


class SourceUnavailable(FootnoteError):
    """The source could not be listed (unreachable, refusing, throttled past the retries): the
    sync stops with this error recorded, and nothing is deleted."""


@dataclass(frozen=True)
class ConnectorEnv:
    """What a connector takes from the settings rather than from the sources table: the input
    limits and credentials, which live in the environment and are never stored with the source."""

    max_bytes: int = 50 * 2**20  # per document or page (FOOTNOTE_INGEST__MAX_FILE_MB)
    max_expanded_bytes: int = 100 * 2**20  # what a sitemap expands to (…__MAX_EXPANDED_MB)
    fetch_timeout_s: float = 30.0  # one whole request, body included (…__FETCH_TIMEOUT_S)
    confluence: ConfluenceSettings | None = None
    graph: GraphSettings | None = None
    gdrive: GoogleDriveSettings | None = None


@dataclass(frozen=True)
class SourceDocument:
    """One document as its source has it: the bytes, where it lives, who may read it."""

    key: str  # stable within the source (a page's URL, a file's id)
    url: str  # where a citation opens it; section anchors are appended
    content: bytes | str
    media_type: str  # text/html, text/markdown, application/pdf, ...
    version: str  # what the source says this version is (ETag, Last-Modified, revision id)
    principals: tuple[str, ...]
    title: str = ""
    updated: str = ""  # ISO date
    owner: str = ""


@dataclass
class Batch:
    """Changes to write together; ``cursor`` is where to resume once they are written."""

    cursor: str
    documents: list[SourceDocument] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)  # keys gone from the source
    unchanged: list[str] = field(default_factory=list)  # keys the source confirmed as they were
    failed: list[tuple[str, str]] = field(default_factory=list)  # (key, reason): retried next sync


class Connector(Protocol):
    kind: str

    def changes(self, cursor: str | None, known: Mapping[str, str]) -> Iterator[Batch]:
        """What changed since ``cursor`` (None: everything). ``known`` maps each key already
        synced to the version recorded for it, for conditional requests and for deletions."""
        ...

    def close(self) -> None:
        """Release the connections it holds."""
        ...


def principal(value: str) -> str:
    """``hr`` or ``group:hr`` → ``group:hr``; ``ann@x.com`` or ``user:Ann@x.com`` →
    ``user:ann@x.com``; ``*`` stays."""
    value = value.strip()
    if not value:
        raise ConfigError("an empty principal; give a group id, user:<email> or *")
    if value == EVERYONE or value.startswith(GROUP):
        return value
    if value.startswith(USER) or "@" in value:  # e-mail addresses compare case-blind
        return USER + value.removeprefix(USER).lower()
    return GROUP + value


def principals(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted({principal(v) for v in values}))


def index_acl(granted: Sequence[str], admin_groups: Sequence[str]) -> list[str]:
    """The ACL values the index filter matches: readers carry their directory's group names and
    ``user:<email>``, so ``group:hr`` is stored as ``hr`` and ``user:`` principals stay whole.
    Nothing granted means admins only, as for a file with no access rule."""
    if not granted:
        return sorted(admin_groups)
    return sorted({p.removeprefix(GROUP) for p in granted})
