"""Benchmarks: measurements of the product, not part of it.

``footnote bench`` imports ``benchmarks.retrieval`` only when it runs, so nothing here is loaded
by ``ask``, ``chat`` or ``serve``. ``bench_embed.py`` and ``bench_slack.py`` are scripts of
their own (``python benchmarks/bench_slack.py``).
"""
