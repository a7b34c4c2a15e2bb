"""The agent: a turn in, an answer with citations out. Retrieval under the asker's access, the
answer loop (route, plan, search, grade, rewrite, answer, check), its tools (documents, CRM,
tickets), the reasoners (the offline one and LLMs through LlamaIndex), the answer model, traces
and evaluation. What may live here: anything that decides what Footnote says and on which
passages, given a ``Turn``. What may not: chat platforms' SDKs and HTTP (``bot/``), parsing and
writing the index (``ingest/``, which this layer reads through its interfaces)."""
