# Everything a fresh machine needs comes from here; `make help` lists the targets.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STACK ?= prod
PYTEST_ARGS ?= -n 2

.PHONY: help venv system-deps plan test lint fmt bench clean

help:
	@echo "make plan     set up, then run 'inference-infra plan --stack $(STACK)' offline"
	@echo "make test     set up (Python packages, promtool, cloud-init), then run lint and the tests"
	@echo "make bench    run the benchmarks (by hand; not part of CI)"
	@echo "make lint | fmt | clean"

$(BIN)/inference-infra: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@

venv: $(BIN)/inference-infra

# promtool (Debian's prometheus) and cloud-init's schema checker are test tools.
system-deps:
	@./.ci/system-deps

plan: venv
	$(BIN)/inference-infra plan --stack $(STACK)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: venv system-deps lint
	$(BIN)/pytest $(PYTEST_ARGS)

fmt: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: venv
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
