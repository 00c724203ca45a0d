# Two commands: `make demo` (the offline demo) and `make test` (every test, lint and types).
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

demo: $(VENV)/.installed
	$(PY) -m dtl_notebook

unit: $(VENV)/.installed
	$(PY) -m pytest

lint: $(VENV)/.installed
	$(PY) -m ruff check dtl_notebook tests benchmarks
	$(PY) -m mypy

test: unit lint

bench: $(VENV)/.installed
	$(PY) benchmarks/run.py
