"""The permanent attack suite: every hole found when Footnote was attacked stays tested here."""

# The end-to-end harness (real Redis, the bot on loopback, Slack and Teams fakes) is shared.
from tests.e2e.conftest import (  # noqa: E402, F401
    assistant,
    bot,
    handbook,
    own_redis,
    redis_prefix,
)
