"""The permanent attack suite: every hole found when Footnote was attacked stays tested here."""

# The end-to-end harness (real assistant, real Redis, the bot on loopback with its fakes), so that
# attacks are made over HTTP against the real app.
from tests.e2e.conftest import assistant, bot, handbook, redis_prefix  # noqa: F401
