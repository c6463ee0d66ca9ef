# The two commands of the quick start: `make demo` and `make test`. Each sets itself up first
# (idempotent): a .venv with the package and its pinned dependencies, and a Chromium.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: setup demo test bench doc-tools clean check-deploy

setup: $(STAMP)
	@scripts/ensure-chromium

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[test]'
	@touch $@

demo: setup
	$(PY) -m webhand demo

# The real-page corpus (MiniWoB++ comes with the test extra; Python's docs and Swagger UI here).
# Two workers, one test file each at a time (pytest-xdist): most of a browser test is waiting. The
# suite runs on three browsers (raw CDP, Playwright, Firefox): about 25 minutes on 2 cores (CI's runs:
# 23 to 26 min); the README quotes the same figure (tests/test_readme_examples.py checks they agree).
# The 30 slowest tests are listed at the end: where the time goes when the figure grows.
TEST_MINUTES := 25
test: setup
	@echo "make test: about $(TEST_MINUTES) minutes on 2 cores (the suite on Chromium over CDP and Playwright, and on Firefox)"
	@scripts/ensure-corpus
	@# The Firefox driver's tests (tests/test_firefox.py) need firefox-esr: installed like Chromium when
	@# missing; where it cannot be, those tests are skipped with the reason and the rest still run.
	@scripts/ensure-firefox || true
	$(PY) -m pytest -q -n 2 --dist loadfile --durations=30 $(PYTEST_ARGS)

# `make bench` (full, ~15-20 min) or `make bench QUICK=1` (< 3 min): webhand next to Playwright MCP,
# Chrome DevTools MCP and agent-browser (pinned in bench/package-lock.json; installed again when the
# lock is newer than node_modules), results in bench/results/.
BENCH_STAMP := $(VENV)/.bench-stamp

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install -q -c constraints.txt -e '.[test,bench]'
	@touch $@

bench: setup $(BENCH_STAMP)
	@if [ ! -f bench/node_modules/.package-lock.json ] || [ bench/package-lock.json -nt bench/node_modules/.package-lock.json ]; then \
	  if command -v npm >/dev/null 2>&1; then \
	    (cd bench && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund); \
	  else echo "bench: npm is missing: the peers are skipped"; fi; fi
	@scripts/ensure-corpus
	$(PY) bench/run.py $(if $(QUICK),--quick,) $(BENCH_ARGS)
	@# web_fetch next to browser_navigate + browser_text on Python's docs (bench/results/fetch_vs_browser.json).
	$(PY) bench/fetch_vs_browser.py $(if $(QUICK),--quick,)
	@# webhand's two drivers (Playwright, raw CDP) side by side: cold start, actions, snapshot, memory, 50 sessions.
	$(PY) bench/drivers.py $(if $(QUICK),--quick,)
	@# The corpus figures (instruction visible, names matched, characters), webhand next to Playwright MCP.
	$(if $(QUICK),,$(PY) bench/corpus_figures.py)

doc-tools: setup
	$(PY) scripts/gen_tool_table.py
	$(PY) scripts/layout.py --write

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache

# deploy/ against the Kubernetes and compose schemas (validators in their own venv, offline).
check-deploy:
	@scripts/check-deploy
