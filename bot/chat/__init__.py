"""Conversations, on every platform the same: the core (``conversation.py``: who asks, the size
and rate checks, history, the answer, the record), each platform's adapter with its own
rendering (``slack.py``, ``teams.py`` and its Bot Framework tokens in ``teams_auth.py``, and the
``terminal.py`` of ``footnote ask``/``chat``; ``render.py`` holds Block Kit, Adaptive Cards and
the escaping both share), the Redis-backed conversation state, and ``failure.py``, the one place
a failure becomes the person's reply. What may live here: code that speaks to a person in a chat;
not HTTP routes (``web/``), not who someone is (``identity/``).
"""
