"""Benchmarks: measurements of the product, not part of it.

``footnote bench`` reaches ``benchmarks.cli`` through its entry point only when it runs, so
nothing here is loaded by ``ask``, ``chat`` or ``serve``, and ``bot/`` never imports it. ``bench_embed.py`` and ``bench_slack.py`` are scripts of
their own (``python benchmarks/bench_slack.py``).
"""
