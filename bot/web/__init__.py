"""The bot's HTTP side on aiohttp: ``server.py`` (the app: Slack events, Teams activities, the
agent on its own loop), signed document links and the /docs page (``links.py``, ``pages.py``),
/admin with its static files, and the operations routes (health, readiness, metrics). What may
live here: routes and the HTML they return; the work behind a route belongs to its own room
(``chat/``, ``identity/``, ``reports/``).
"""
