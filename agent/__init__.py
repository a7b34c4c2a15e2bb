"""Retrieval, rerank, the answer loop, its tools and reasoners (offline or LLM), traces."""
