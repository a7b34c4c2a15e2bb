"""``footnote eval``: the golden set, rated cases, or the public answer sets (``--dataset``)."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from agent.corpora import DATASETS as CORPORA
from bot.chat.terminal import console, plain
from bot.cli.asker import EXAMPLES, INGEST_CODE, require_documents, shown
from bot.cli.ingesting import run_ingest
from bot.cli.process import preload_models, stderr
from bot.settings import Settings
from ingest.errors import ConfigError


def cmd_eval(args, settings: Settings) -> int:
    if args.dataset:
        return eval_datasets(args, settings)
    for flag, given in (("--json", args.json), ("--eval-dir", args.eval_dir)):
        if given:
            raise ConfigError(f"{flag} goes with --dataset NAME")
    report = golden_report(args, settings)
    console.print(report.table())
    console.print(report.kind_table())
    if args.failures:
        for line in report.failures():
            console.print(line, markup=False, highlight=False)
    return 0


def golden_report(args, settings: Settings):
    """The golden set (or --cases) asked of the data dir's index, the handbook ingested first
    when the index is empty."""
    from agent.assistant import build_assistant
    from agent.evaluation import load_golden, run_eval
    from bot.app import build_deps
    from bot.identity.directory import groups_of

    path = args.cases or args.golden or EXAMPLES / "golden.yaml"
    if not path.is_file():
        raise ConfigError(f"no such file: {path}")
    golden = load_golden(path)
    if not golden:
        raise ConfigError(f"{path} holds no cases")
    kinds = {k.strip() for k in args.kind.split(",") if k.strip()}
    if kinds:
        unknown = kinds - {item.kind for item in golden}
        if unknown:
            raise ConfigError(
                f"no golden items of kind {', '.join(sorted(unknown))}; "
                f"known kinds: {', '.join(sorted({item.kind for item in golden}))}"
            )
        golden = [item for item in golden if item.kind in kinds]
    if not args.dataset:
        golden = golden[: args.limit]
    deps = build_deps(settings)
    try:
        if args.cases:
            require_documents(deps)  # cases are asked of the company's documents, not the sample
        elif not deps.index.count():
            run_ingest(deps, EXAMPLES / "handbook", [])
        with console.status("asking the golden questions…"):
            return asyncio.run(run_eval(build_assistant(deps), golden, groups_of(deps.directory)))
    finally:
        deps.close()


def eval_datasets(args, settings: Settings) -> int:
    """``footnote eval --dataset NAME|all``: each set's split asked of its own scratch index,
    one table; with all, the golden set's row under the sets'."""
    import json

    from agent.answer_model import build_answer_model
    from agent.assistant import build_assistant
    from agent.corpora import answers_dir, default_eval_dir, load_corpus, sample
    from agent.evaluation import datasets_table, run_corpus_eval

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit takes a number of questions >= 1, got {args.limit}")
    names = CORPORA if args.dataset == "all" else (args.dataset,)
    eval_dir = args.eval_dir or default_eval_dir()
    for name in names:
        answers_dir(eval_dir, name)  # every set is there before the first one is ingested
    # piped or logged, the table keeps its columns whole (a terminal gives its own width)
    out = console if console.is_terminal else Console(width=140)
    reports = []
    embedders = shared_embedders(settings)  # each model loads once for every set
    model = build_answer_model(settings.embedding.threads, settings.data_dir / "cache")  # and this
    for name in names:
        asked = sample(
            [q for q in load_corpus(eval_dir, name) if q.split == args.split], args.limit
        )
        deps, ingest = corpus_deps(settings, eval_dir, name, embedders=embedders)
        deps.__dict__["answer_model"] = model  # the cached property, given
        try:
            preload_models(deps)
            with Progress(
                TextColumn(f"[bold]{name}[/] {args.split}"),
                BarColumn(),
                MofNCompleteColumn(),
                console=console,
                transient=True,
            ) as bar:
                task = bar.add_task("", total=len(asked))
                report = asyncio.run(
                    run_corpus_eval(
                        build_assistant(deps),
                        name,
                        args.split,
                        asked,
                        on_item=partial(bar.advance, task),
                    )
                )
        finally:
            deps.close()
        report.ingest = ingest
        reports.append(report)
        if len(names) > 1:
            out.print(datasets_table([report]))
        if args.failures:
            for o in report.outcomes:
                if not o.correct:
                    out.print(
                        f"{name} {o.failure()}", markup=False, highlight=False, soft_wrap=True
                    )
    golden = golden_report(args, settings) if args.dataset == "all" else None
    out.print(datasets_table(reports, golden))
    if args.json:
        written = {
            "split": args.split,
            "limit": args.limit,
            "datasets": [r.as_json() for r in reports],
        }
        if golden is not None:
            written["golden"] = {
                "metrics": golden.metrics,
                "items": [
                    {"id": r.item.id, "status": r.answer.status, "correct": r.correct}
                    for r in golden.results
                ],
            }
        args.json.write_text(json.dumps(written, indent=1, default=str) + "\n", encoding="utf-8")
        stderr.print(plain(f"wrote {shown(args.json)}", "dim"))
    return 0


def shared_embedders(settings: Settings):
    """The embedders as the data dir's own commands build them (loaded when first used)."""
    from ingest.backends import build_embedders

    return build_embedders(
        settings.embedding, settings.cohere, cache_dir=settings.data_dir / "cache"
    )


def corpus_deps(settings: Settings, eval_dir: Path, name: str, files=None, embedders=None):
    """Deps over the set's scratch index (``<data dir>/eval/<name>-<key>``, readable by everyone,
    on Qdrant Edge whatever the settings say), ingesting the corpus (or just ``files`` of it)
    the first time; the key covers the files and what of the settings and the ingest code shapes
    the index. ``embedders``: models already built (every set of a run, and tests, share one
    set). Returns the deps and the ingest's figures (chunks, seconds, reused)."""
    import hashlib
    import json

    from agent.corpora import corpus_dir, corpus_key
    from bot.app import build_deps
    from ingest.settings import QdrantSettings

    folder = corpus_dir(eval_dir, name)
    chosen = sorted(files) if files is not None else sorted(folder.glob("*.md"))
    shaping = {
        "ingest": settings.ingest.model_dump(exclude={"default_acl"}),
        # how many texts a model reads at once, and on how many threads, shape no vector
        "embedding": settings.embedding.model_dump(exclude={"batch_size", "threads"}),
        "bm25": [
            settings.retrieval.bm25_k1,
            settings.retrieval.bm25_b,
            settings.retrieval.bm25_avgdl,
        ],
        "cohere": settings.cohere.model_dump(exclude={"api_key"}) if settings.cohere else None,
        "code": [
            hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(INGEST_CODE.glob("*.py"))
        ],
    }
    scratch = settings.data_dir / "eval" / f"{name}-{corpus_key(chosen, shaping)}"
    done = scratch / "ingested.json"
    deps = build_deps(
        settings.model_copy(
            update={"data_dir": scratch, "qdrant": QdrantSettings(), "fallback": None}
        )
    )
    # the models and their compiled cache are the data dir's own, not one copy per set
    deps.__dict__["embedders"] = embedders or shared_embedders(settings)
    if done.is_file():
        info = json.loads(done.read_text(encoding="utf-8")) | {"reused": True}
        stderr.print(
            plain(
                f"{name}: reusing {shown(scratch)} ({info['chunks']} chunks, ingested in "
                f"{info['seconds']:.0f}s)",
                "dim",
            )
        )
        return deps, info
    try:
        stderr.print(
            plain(f"{name}: ingesting {len(chosen)} documents into {shown(scratch)}", "dim")
        )
        report = run_ingest(deps, folder, ["*"], files=chosen)
    except BaseException:
        deps.close()
        raise
    info = {
        "documents": len(chosen),
        "chunks": report.chunks,
        "seconds": round(report.seconds, 1),
        "cpu_seconds": round(report.cpu_seconds, 1),
        "failed": len(report.failed),
    }
    done.write_text(json.dumps(info) + "\n", encoding="utf-8")
    return deps, info | {"reused": False}
