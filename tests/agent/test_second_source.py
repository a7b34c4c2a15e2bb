"""The second source: tried only when the company documents say nothing, and labelled external."""

from __future__ import annotations

import asyncio

from agent.assistant import build_assistant
from agent.retrieval import Retriever
from agent.second_source import CollectionFallback
from agent.turns import Turn
from bot.settings import Settings
from ingest.edge_index import EdgeIndex
from ingest.index import vector_dims
from ingest.pipeline import Ingester
from ingest.sparse import BM25Encoder


def test_fallback_answers_what_the_handbook_cannot_and_is_marked_external(
    handbook_deps, embedders, tmp_path
):
    public = tmp_path / "public"
    public.mkdir()
    (public / "pets.md").write_text(
        "---\ntitle: Insurance glossary\nacl: ['*']\n---\n# Pet insurance\n\n"
        "Pet insurance covers veterinary bills for cats and dogs; premiums depend on the pet's age and breed.\n"
    )
    settings = Settings(data_dir=tmp_path / "fallback")
    index = EdgeIndex(
        settings.index_dir, vector_dims(embedders, settings.embedding.sentence_vectors)
    )
    Ingester(index, embedders, BM25Encoder(), settings.ingest, settings.admin_groups).ingest(public)
    fallback = CollectionFallback(Retriever(index, embedders, BM25Encoder(), settings.retrieval))
    assistant = build_assistant(handbook_deps, fallback=fallback)

    a = asyncio.run(
        assistant.answer(
            Turn(user_id="alice", text="What does pet insurance cover?", groups=("hr",))
        )
    )
    assert a.status == "answered"
    assert a.citations and all(c.external for c in a.citations)
    assert "external" in a.text and "veterinary" in a.text
    steps = [s.step for s in a.trace]
    assert "fallback" in steps and steps.index("fallback") > steps.index("grade")

    inside = asyncio.run(
        assistant.answer(
            Turn(user_id="alice", text="How many vacation days can I carry over?", groups=("hr",))
        )
    )
    assert inside.status == "answered" and not any(c.external for c in inside.citations)
    index.close()
