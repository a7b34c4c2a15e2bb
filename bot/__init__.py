"""The bot: what people talk to, and the process that serves them. The composition root lives
here at the top — ``settings.py`` (the one root ``Settings``), ``app.py`` (``Deps``, every client
built once), ``entry.py`` / ``arguments.py`` / ``cli/`` (the ``footnote`` command, a module per verb group), and the
process's own ``logs.py``, ``bad_settings.py`` and ``progress.py`` — and the rest in rooms:
``chat/`` (conversations on each platform), ``identity/`` (who someone is, and signing in),
``web/`` (the HTTP server and its pages) and ``reports/`` (what the turns on record tell). Imports
go ``bot → agent → ingest``; nothing here imports Qdrant or LlamaIndex.
"""
