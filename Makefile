# Set-up and checks. `make demo` runs the offline demo; `make test` passes the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck bench clean

$(BIN)/holodeck: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(BIN)/holodeck

demo: $(BIN)/holodeck
	$(BIN)/holodeck validate examples/weather examples/research examples/support-image
	$(BIN)/holodeck pack examples/support-image -o $(VENV)/support-image.tar.gz
	$(BIN)/holodeck validate $(VENV)/support-image.tar.gz

lint: $(BIN)/holodeck
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(BIN)/holodeck
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest -n 2 -q

bench: $(BIN)/holodeck
	$(BIN)/python bench/cli_startup.py

clean:
	rm -rf $(VENV) dist build .pytest_cache .mypy_cache .ruff_cache
