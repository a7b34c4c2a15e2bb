"""Two kinds of failure.

``BadDocument``  the data is at fault (corrupt PDF, empty file, binary junk): report it, skip the
                 file, go on with the batch.
``ConfigError``  our setup is at fault (missing key, unreachable index): stop, and say the fix.
"""


class FootnoteError(Exception):
    pass


class BadDocument(FootnoteError):
    """A file that cannot be indexed; the message says why in words a document owner understands."""


class ConfigError(FootnoteError):
    """Raised with a message that names the setting or command that fixes it."""
