"""The public answer sets in ``../shared/eval/answers/``, split by document."""

from __future__ import annotations

import hashlib


def split_of(dataset: str, doc: str | None, qid: str) -> str:
    key = doc if doc else f"id:{qid}"
    bucket = int(hashlib.sha256(f"{dataset}:{key}".encode()).hexdigest(), 16) % 10
    return "train" if bucket < 6 else "dev" if bucket < 8 else "test"
