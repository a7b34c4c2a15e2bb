"""How long to wait before asking a throttled HTTP API again: what every client here obeys."""

from __future__ import annotations

import email.utils
import time


def retry_after(value: str | None, attempt: int, cap: float) -> float:
    """Seconds to wait: Retry-After as seconds or an HTTP date, else exponential backoff."""
    wait = 2.0**attempt
    if value:
        value = value.strip()
        if value.isdigit():
            wait = float(value)
        else:
            try:
                when = email.utils.parsedate_to_datetime(value)
                wait = when.timestamp() - time.time()
            except (TypeError, ValueError):
                pass
    return max(0.0, min(wait, cap))
