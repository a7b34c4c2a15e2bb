"""Ingestion: sources → parse → chunk → embed (dense + sparse) → index, and the index's reading
side that the agent searches through. What may live here: parsers, chunking, the encoders and the
model files they load, the index backends (Qdrant Edge or server), connectors to document
sources with their sync state, and the database engine and its migrations. What may not:
anything that answers a question (``agent/``) or talks to a chat platform (``bot/``); nothing
here imports either."""
