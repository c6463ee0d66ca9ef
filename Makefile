# The two commands of the quick start: `make demo` and `make test`. Each sets itself up first
# (idempotent): a .venv with the package and its pinned dependencies, and a Chromium.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: setup demo test bench doc-tools clean

setup: $(STAMP)
	@scripts/ensure-chromium

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[test]'
	@touch $@

demo: setup
	$(PY) -m webhand demo

test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

bench: setup
	$(PY) bench/run.py $(if $(QUICK),--quick,)

doc-tools: setup
	$(PY) scripts/gen_tool_table.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
