"""Conversations, on every platform the same: the core (``conversation.py``: who asks, the size
and rate checks, history, the answer, the record), each platform's adapter with its own
rendering beside it (``slack.py`` and ``slack_blocks.py``; ``teams.py``, ``teams_cards.py`` and
its Bot Framework tokens in ``teams_auth.py``; the ``terminal.py`` of ``footnote ask``/``chat``),
what both renderings share in ``render.py`` (button ids, escaping, the streamed draft), the
Redis-backed conversation state, and ``failure.py``, the one place a failure becomes the
person's reply. What may live here: code that speaks to a person in a chat;
not HTTP routes (``web/``), not who someone is (``identity/``).
"""
