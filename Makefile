# Four verbs. Every one sets up the venv first, so each works on a fresh clone.
VENV ?= .venv
PY := $(VENV)/bin/python
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test lint bench lock

install: $(VENV)/.installed

# --no-deps: the lock is complete, and it keeps any package from pulling a GPU build of torch.
$(VENV)/.installed: requirements.lock pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade "pip>=24" "setuptools>=68" wheel
	$(PY) -m pip install -q --no-deps -r requirements.lock
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	touch $@

demo: install
	$(VENV)/bin/footnote demo

test: install
	$(PY) -m pytest -q -p no:cacheprovider

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

# Re-pin after changing dependencies in pyproject.toml (run inside the venv).
lock:
	$(PY) -m pip list --format=freeze --exclude-editable | grep -v -E "^(footnote|pip|setuptools|wheel)==" > requirements.lock
