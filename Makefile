# Two commands: `make demo` (JupyterLab on the tour, offline) and `make test` (every test,
# lint and types). `make demo DEMO=terminal` prints the demo instead.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint unit bench

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

DEMO ?= lab
PORT ?= 8888

demo: $(VENV)/.installed
ifeq ($(DEMO),terminal)
	$(PY) -m dtl_notebook
else
	$(PY) -m dtl_notebook --lab --port $(PORT)
endif

unit: $(VENV)/.installed
	$(PY) -m pytest

lint: $(VENV)/.installed
	$(PY) -m ruff check dtl_notebook tests benchmarks
	$(PY) -m mypy

test: unit lint

bench: $(VENV)/.installed
	$(PY) benchmarks/run.py
