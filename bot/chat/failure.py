"""The one place an unexpected failure (a bug, a store or platform call that broke) becomes what
the person reads and what the log keeps. Every chat turn, button click and terminal turn ends
here when something fails: the agent raises (``agent.turns.TurnFailed`` keeps the trace), the
bot says sorry. A small module of its own so that ``footnote ask`` need not import the chat
core to say it.
"""

from __future__ import annotations

import logging
import uuid

from agent.messages import say

log = logging.getLogger(__name__)


def failure_reply(what: str, lang: str = "en", error: BaseException | None = None) -> str:
    """The one place an unexpected failure becomes words: the log line (with the traceback of
    ``error``, else of the exception being handled) and the reply in ``lang`` share a short
    reference, so support can find one from the other; the reply never names the exception."""
    ref = uuid.uuid4().hex[:8]
    log.error("%s failed (reference %s)", what, ref, exc_info=error or True)
    return say(lang, "something_wrong", ref=ref)
