# The two commands a new user runs: `make demo` and `make test`.
# Both build .venv from requirements.lock when it is missing or stale, and skip the install when it is current.
# The venv is installed with its bytecode compiled: with PYTHONDONTWRITEBYTECODE set (as in many CI images) every
# process would otherwise compile numpy, scipy, click and Airflow from source (about 2x the CPU of a small run).

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
UV_VERSION := 0.13.8
# The venv holds requirements.lock plus the Celery executor's add-on lock (the deployment image's set), so the
# scheduler tests can run the DAG on Celery workers.
LOCKS  := requirements.lock deploy/requirements-celery.lock
# The stamp records the hash of the locks and of pyproject.toml; a different hash means a stale venv.
STAMP  := $(VENV)/.evalops-lock.sha256
LOCK_HASH := $(shell cat $(LOCKS) pyproject.toml | sha256sum | cut -d' ' -f1)

.PHONY: venv demo test test-fast lock bench docs clean help

help:
	@echo "make demo   - run the evaluation loop on the embedded SQLite warehouse with the sample data"
	@echo "make test   - run the test suite"
	@echo "make bench  - run the benchmarks (see docs/benchmarks.md)"
	@echo "make docs   - build the documentation site into build/site (strict: a warning fails)"
	@echo "make lock   - regenerate requirements.lock from pyproject.toml"

venv:
	@if [ -x $(BIN)/python ] && [ -f $(STAMP) ] && [ "$$(cat $(STAMP))" = "$(LOCK_HASH)" ]; then \
		echo "venv is current ($(VENV))"; \
	else \
		echo "building $(VENV) from $(LOCKS) ..."; \
		[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV) || exit 1; \
		$(BIN)/python -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)" || exit 1; \
		$(BIN)/uv pip sync --quiet --compile-bytecode --python $(BIN)/python $(LOCKS) || exit 1; \
		$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e . || exit 1; \
		echo "$(LOCK_HASH)" > $(STAMP); \
	fi

demo: venv
	$(BIN)/evalops demo

# The type-check and lint ratchet first (tools/ratchet.py: mypy's and ruff's findings per file may only shrink).
test: venv
	$(BIN)/python tools/ratchet.py
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: venv
	$(BIN)/python -m pytest -m "not airflow and not scheduler and not slow" $(PYTEST_ARGS)

# Each benchmark compares evalops with a peer in the same run and prints the ratio (see docs/benchmarks.md).
BENCHMARKS := metrics_vs_peers stats_speed stats_power stats_rule stats_broken_queries warehouse_io querylog_validate_sample http_throughput context_measures dashboard_pages judge_throughput ingest_vs_peers bad_inputs dag_parse fuzz_long retrievers_dense

bench: venv
	@for b in $(BENCHMARKS); do echo "== benchmarks/$$b.py"; $(BIN)/python benchmarks/$$b.py || exit 1; done

docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

# Regenerates the locks (the Celery add-on is compiled against the main one). Needs uv (installed by `make venv`).
lock: venv
	$(BIN)/uv pip compile pyproject.toml --extra fast --extra pipeline --extra dashboard --extra airflow --extra gx --extra postgres --extra retrievers --extra wordllama --extra reports --extra langchain --extra llamaindex --extra irmeasures --extra docs --extra dev \
		--python-version 3.11 --python-platform x86_64-manylinux_2_28 --generate-hashes --no-header -o requirements.lock
	UV=$(BIN)/uv bash deploy/lock-celery.sh

clean:
	rm -rf $(VENV) .evalops .pytest_cache
