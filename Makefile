# Set-up and checks. `make demo` runs the offline demo; `make test` passes the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

NODE_DIR := src/holodeck/tools/node

# The versions the suite was proven with: every package of the dev extra (and so of the
# base package and every extra), for Python 3.11-3.13 on any platform. make, CI and the
# container build install from it; the package itself keeps ranges for its users.
LOCK := requirements.lock
# `make upgrade` refreshes it (the newest releases pyproject.toml's ranges allow) and
# `make lock` adds what a changed pyproject.toml needs, keeping the other pins; review the
# diff like code, then run make test
COMPILE = $(BIN)/uv pip compile pyproject.toml --extra dev --universal --python-version 3.11 \
	--native-tls --quiet --custom-compile-command "make upgrade" -o $(LOCK)

.PHONY: demo dev test test-fast lint typecheck bench clean node test-js browser services containers \
	sandbox lock upgrade

# the base package: what the demo (and a user) runs. uv installs it: it downloads and
# installs in parallel, 22 s where pip took 218 s on a loaded 2-core machine; it trusts
# the system's certificate store, as pip does
$(BIN)/holodeck: pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet "$$(grep '^uv==' $(LOCK))"
	# with the nlp extra: the research example scores its answers with ROUGE
	$(BIN)/uv pip install --quiet --native-tls --python $(BIN)/python -c $(LOCK) -e '.[nlp]'
	# an editable install's modules are otherwise compiled at every start when
	# PYTHONDONTWRITEBYTECODE is set (0.3 s of each command's start-up)
	$(BIN)/python -m compileall -q src/holodeck
	touch $(BIN)/holodeck

# the dev extra on top: every store, server and tool the tests and benchmarks use. pip,
# not uv: pip.conf's find-links and constraints (a CPU-only torch) apply to it
$(VENV)/.dev: $(BIN)/holodeck
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c $(LOCK) -e '.[dev]'
	touch $@

lock: $(BIN)/holodeck
	$(COMPILE)

upgrade: $(BIN)/holodeck
	$(COMPILE) --upgrade

dev: $(VENV)/.dev

demo: $(BIN)/holodeck
	$(BIN)/holodeck test examples/weather --model test -o .holodeck/demo-report.html
	$(BIN)/holodeck test examples/research --model test
	$(BIN)/holodeck test examples/triage-handoff --model test
	$(BIN)/holodeck validate examples/weather examples/research examples/triage-handoff examples/support-image
	$(BIN)/holodeck pack examples/support-image -o $(VENV)/support-image.tar.gz
	$(BIN)/holodeck validate $(VENV)/support-image.tar.gz

# TypeScript tools read their schemas with the TypeScript compiler (npm package)
$(NODE_DIR)/node_modules/typescript/package.json: $(NODE_DIR)/package.json $(NODE_DIR)/package-lock.json
	npm ci --no-audit --no-fund --prefix $(NODE_DIR)
	touch $@

node: $(NODE_DIR)/node_modules/typescript/package.json

# the official protocol clients the serving tests run (@ag-ui/client, and esbuild to put
# it in a page for the headless-Chromium test)
TEST_JS := tests/js
$(TEST_JS)/node_modules/@ag-ui/client/package.json: $(TEST_JS)/package.json $(TEST_JS)/package-lock.json
	npm ci --no-audit --no-fund --prefix $(TEST_JS)
	touch $@

test-js: $(TEST_JS)/node_modules/@ag-ui/client/package.json

# The HTML report is tested in Debian's headless Chromium (installed when running as root;
# otherwise that one test is skipped, saying why)
browser:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && \
		{ apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } || \
		echo "chromium not installed: the HTML report's browser test will be skipped"; }

# The Redis and PostgreSQL session stores are tested against real servers, which the tests
# start themselves (installed when running as root; otherwise those tests are skipped)
services:
	@{ command -v redis-server && ls /usr/lib/postgresql/*/bin/initdb; } >/dev/null 2>&1 || \
		{ [ "$$(id -u)" = 0 ] && \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq redis-server postgresql >/dev/null; } || \
		echo "redis-server or PostgreSQL not installed: the Redis and PostgreSQL store tests will be skipped"; }

# The sandbox of the file, shell, code and terminal tools is bubblewrap; its tests run
# real sandboxes (installed when running as root; otherwise those tests are skipped)
sandbox:
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq bubblewrap >/dev/null; } || \
		echo "bubblewrap not installed: the sandbox tests will be skipped"; }

# `holodeck deploy --build` is tested by building an image with podman on a base image made
# with mmdebstrap, run with buildah (installed when running as root; otherwise that test is
# skipped, saying why)
containers:
	@{ command -v podman && command -v buildah && command -v mmdebstrap; } >/dev/null 2>&1 || \
		{ [ "$$(id -u)" = 0 ] && \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq podman buildah mmdebstrap >/dev/null; } || \
		echo "podman, buildah or mmdebstrap not installed: the container image test will be skipped"; }

lint: dev
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports  # the layers of DESIGN.md: contracts in pyproject.toml

typecheck: dev
	$(BIN)/mypy

test: lint typecheck node test-js browser services containers sandbox
	$(BIN)/pytest -n 2 -q

# the tests that need no database server, browser, container tools or wheel build (the
# markers are applied in tests/conftest.py from the fixtures a test uses): a few minutes
test-fast: dev node test-js
	$(BIN)/pytest -n 2 -q -m "not services and not browser and not container and not slow"

bench: dev services sandbox
	$(BIN)/python bench/cli_startup.py
	$(BIN)/python bench/runtime_overhead.py
	$(BIN)/python bench/sessions.py
	$(BIN)/python bench/server_load.py
	$(BIN)/python bench/tracing_overhead.py
	$(BIN)/python bench/vector_store.py
	$(BIN)/python bench/search_ingest.py
	$(BIN)/python bench/yaml_limits.py
	$(BIN)/python bench/search_memory.py
	$(BIN)/python bench/server_walls.py
	$(BIN)/python bench/uploads.py
	$(BIN)/python bench/outbound_check.py
	$(BIN)/python bench/protocols_overhead.py
	$(BIN)/python bench/sandbox_overhead.py

clean:
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache $(NODE_DIR)/node_modules \
		$(TEST_JS)/node_modules
