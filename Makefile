# Everything a fresh machine needs comes from here; `make help` lists the targets.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STACK ?= prod
PYTEST_ARGS ?= -n 2

CHECKOV_VENV ?= .venv-checkov

.PHONY: help venv tools system-deps plan test lint fmt docs bench bench-large catalog clean

help:
	@echo "make plan     set up, then run 'inference-infra plan --stack $(STACK)' offline"
	@echo "make test     set up (Python packages, checkov, promtool, cloud-init), then run lint and the tests"
	@echo "make bench    run the benchmarks (by hand; not part of CI; about 10 minutes, most of it the two weights downloads)"
	@echo "make bench-large   the 5,000-instance watchdog benchmark too (about 15 minutes)"
	@echo "make docs     rewrite the generated sections of docs/reference.md (CLI, policies, config keys)"
	@echo "make catalog  rebuild the price and spot rows generated from the committed SkyPilot copies (by hand)"
	@echo "make lint | fmt | clean"

$(BIN)/inference-infra: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@

venv: $(BIN)/inference-infra

# checkov (checks the Kubernetes objects in the tests) pins packaging<24, Pulumi needs >=26: it
# cannot share .venv, so it has its own.
$(CHECKOV_VENV)/bin/checkov:
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet 'checkov>=3.3,<4'

tools: $(CHECKOV_VENV)/bin/checkov

# promtool (Debian's prometheus) and cloud-init's schema checker are test tools.
system-deps:
	@./.ci/system-deps

plan: venv
	$(BIN)/inference-infra plan --stack $(STACK)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: venv tools system-deps lint
	$(BIN)/pytest $(PYTEST_ARGS)

fmt: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The reference's generated sections; tests/docs fails when they differ from the code.
docs: venv
	$(BIN)/python docs/generate.py

# Each benchmark prints its figures; `make bench` takes about 10 minutes on 2 cores (the weights downloads, 2 GiB
# from loopback five times each way, take most of it).
BENCHMARKS := $(sort $(wildcard benchmarks/*.py))

bench: venv
	@n=0; total=$(words $(BENCHMARKS)); start=$$(date +%s); \
	for b in $(BENCHMARKS); do n=$$((n+1)); \
	  echo "== [$$n/$$total] $$b ($$(( $$(date +%s) - start )) s so far)"; \
	  $(BIN)/python $$b || exit 1; done; \
	echo "== $$total benchmarks in $$(( $$(date +%s) - start )) s"

# The 5,000-instance watchdog run: about 15 minutes under moto.
bench-large: venv
	@echo "== benchmarks/watchdog_scale.py --sizes 100 1000 5000 (about 15 minutes)"
	$(BIN)/python benchmarks/watchdog_scale.py --sizes 100 1000 5000

# By hand, not in CI: rewrites components/catalog/data/generated/ from the committed copies of
# SkyPilot's catalogs (components/catalog/data/sources/, SHA-256 checked). The catalog README says how
# to refresh the copies themselves.
catalog: venv
	$(BIN)/python -m inference_infra.components.catalog.build

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) .pytest_cache .ruff_cache build *.egg-info
