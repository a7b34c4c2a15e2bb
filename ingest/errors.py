"""Two kinds of failure.

``BadDocument``  the data is at fault (corrupt PDF, empty file, binary junk): report it, skip the
                 file, go on with the batch.
``ConfigError``  our setup is at fault (missing key, unreachable index): stop, and say the fix.

``past_limit`` words a ``BadDocument`` skipped for one of the input limits, for every reader.
"""


class FootnoteError(Exception):
    pass


class BadDocument(FootnoteError):
    """A file that cannot be indexed; the message says why in words a document owner understands."""


class ConfigError(FootnoteError):
    """Raised with a message that names the setting or command that fixes it."""


def past_limit(what: str, limit: float, setting: str, unit: str = "bytes") -> str:
    """The message of an input skipped for a limit: what, the limit, the setting that raises it."""
    shown = human_size(int(limit)) if unit == "bytes" else f"{limit:,g} {unit}"
    return f"{what}: past the limit of {shown} (FOOTNOTE_INGEST__{setting})"


def human_size(n: int) -> str:
    """A byte count as a person reads it: "1.5 MB", "12 KB", "900 bytes"."""
    for unit, scale in (("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"
