# Two commands: `make demo` (JupyterLab on the tour, offline) and `make test` (every test,
# lint and types). `make demo DEMO=terminal` prints the demo instead. `make fuzz` runs the
# property tests with ten times their Hypothesis examples; CI=true derandomizes them.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint unit fuzz bench

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

fuzz: $(VENV)/.installed
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -m hypothesis tests --ignore=tests/notebook/browser

bench: $(VENV)/.installed
	$(PY) benchmarks/run.py
	$(PY) benchmarks/cache_findings.py
	$(PY) benchmarks/cli.py
