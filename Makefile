# Two commands: `make demo` (JupyterLab on the tour, offline) and `make test` (every test,
# lint and types). `make demo DEMO=terminal` prints the demo instead. `make fuzz` runs the
# property tests with ten times their Hypothesis examples; CI=true derandomizes them.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint unit fuzz bench otlp-backend

# a real OTLP/HTTP backend for the telemetry tests, in an environment of its own: Arize Phoenix
# pins provider SDKs older than ours, so it cannot share .venv (tests/support/otlp_backend.py)
PHOENIX_VENV ?= .venv-phoenix
PHOENIX_VERSION ?= 20.26.1

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

$(PHOENIX_VENV)/.installed:
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/python -m pip install --quiet 'arize-phoenix==$(PHOENIX_VERSION)'
	touch $@

otlp-backend: $(PHOENIX_VENV)/.installed

DEMO ?= lab
PORT ?= 8888

demo: $(VENV)/.installed
ifeq ($(DEMO),terminal)
	$(PY) -m dtl_notebook
else
	$(PY) -m dtl_notebook --lab --port $(PORT)
endif

unit: $(VENV)/.installed $(PHOENIX_VENV)/.installed
	DTL_PHOENIX=$(abspath $(PHOENIX_VENV))/bin/phoenix $(PY) -m pytest

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
