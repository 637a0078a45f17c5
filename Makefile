# Everything a fresh machine needs comes from here; `make help` lists the targets.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STACK ?= prod
PYTEST_ARGS ?= -n 2 --dist worksteal --durations=10

CHECKOV_VENV ?= .venv-checkov

WHEELHOUSE ?= .wheelhouse

.PHONY: help venv tools system-deps wheelhouse plan test lint fmt generate docs bench bench-large catalog clean

help:
	@echo "make plan     set up, then run 'inference-infra plan --stack $(STACK)' offline"
	@echo "make test     set up (Python packages, checkov, promtool, cloud-init), then run lint and the tests"
	@echo "make bench    run the benchmarks (by hand; not part of CI; about 10 minutes, most of it the two weights downloads)"
	@echo "make bench-large   the 5,000-instance watchdog benchmark too (about 15 minutes)"
	@echo "make generate rewrite every generated file: the catalog's generated tables, infra/config.schema.json,"
	@echo "              docs/reference.md's generated sections (CLI, alerts, policies, config keys); make docs: the same"
	@echo "make catalog  only the catalog's price and spot rows, from the committed SkyPilot and Cyclenerd copies"
	@echo "make lint | fmt | clean"

# pip prints one line per package it collects and installs (about 3 minutes on a cold machine), so a
# first `make plan` shows its progress; `make venv QUIET=--quiet` for silence.
QUIET ?= --progress-bar off
$(BIN)/inference-infra: pyproject.toml setup.py
	@echo "== creating $(VENV) and installing inference-infra[dev] with every provider SDK (a few minutes the first time)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install $(QUIET) -e '.[dev]'
	@touch $@
	@echo "== $(VENV) ready: $$($(BIN)/inference-infra --version)"

venv: $(BIN)/inference-infra

# checkov (checks the Kubernetes objects in the tests) pins packaging<24, Pulumi needs >=26: it
# cannot share .venv, so it has its own.
$(CHECKOV_VENV)/bin/checkov:
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet 'checkov>=3.3,<4'

tools: $(CHECKOV_VENV)/bin/checkov

# The wheels of `inference-infra[aws]`'s dependencies, so tests/test_install_extras.py installs the
# built wheel with that extra alone into a fresh virtualenv offline (--no-index).
$(WHEELHOUSE)/.aws: pyproject.toml | venv
	$(BIN)/pip download --quiet --dest $(WHEELHOUSE) '.[aws]'
	@touch $@

wheelhouse: $(WHEELHOUSE)/.aws

# promtool (Debian's prometheus) and cloud-init's schema checker are test tools.
system-deps:
	@./.ci/system-deps

plan: venv
	$(BIN)/inference-infra plan --stack $(STACK)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: venv tools system-deps wheelhouse lint
	$(BIN)/pytest $(PYTEST_ARGS)

fmt: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Every generated file, in one run: the catalog's generated tables, infra/config.schema.json and the
# reference's generated sections; tests/docs/test_generate.py fails when one differs from a rewrite.
generate: venv
	$(BIN)/python docs/generate.py

docs: generate

# Each benchmark prints its figures. `make bench` stays under 5 minutes on 2 cores: the two weights
# downloads run there at a quarter of the issue's size (16 x 32 MiB, median of 3); `make bench-large`
# runs them at full size (64 x 32 MiB, median of 5: about 5 minutes more) and the 5,000-instance
# watchdog (about 15 minutes).
WEIGHTS_BENCHMARKS := benchmarks/prefetch_manifest.py benchmarks/gcs_weights_fetch.py
# Run by hand, never by `make bench`: proof tools that compare two plans or two trees (they take the
# files or the base commit to compare: their docstrings say how), and the install measurement (a fresh
# virtualenv per extra, several minutes; `make bench-large` runs it).
BENCH_TOOLS := benchmarks/compare_plans.py benchmarks/boot_corpus.py benchmarks/watchdog_core_equivalence.py
SLOW_BENCHMARKS := benchmarks/install_size.py
BENCHMARKS := $(filter-out $(WEIGHTS_BENCHMARKS) $(BENCH_TOOLS) $(SLOW_BENCHMARKS),$(sort $(wildcard benchmarks/*.py)))

bench: venv
	@n=0; total=$$(( $(words $(BENCHMARKS)) + 2 )); start=$$(date +%s); \
	for b in $(BENCHMARKS); do n=$$((n+1)); \
	  echo "== [$$n/$$total] $$b ($$(( $$(date +%s) - start )) s so far)"; \
	  $(BIN)/python $$b || exit 1; done; \
	echo "== [$$((n+1))/$$total] benchmarks/prefetch_manifest.py --shards 16 --runs 3"; \
	$(BIN)/python benchmarks/prefetch_manifest.py --shards 16 --runs 3 || exit 1; \
	echo "== [$$total/$$total] benchmarks/gcs_weights_fetch.py --shards 16 --runs 3"; \
	$(BIN)/python benchmarks/gcs_weights_fetch.py --shards 16 --runs 3 || exit 1; \
	echo "== $$total benchmarks in $$(( $$(date +%s) - start )) s"

bench-large: venv
	@echo "== weights downloads at the issue's size: 64 x 32 MiB, median of 5"
	$(BIN)/python benchmarks/prefetch_manifest.py --shards 64 --runs 5
	$(BIN)/python benchmarks/gcs_weights_fetch.py --shards 64 --runs 5
	@echo "== benchmarks/watchdog_scale.py --sizes 100 1000 5000 (about 15 minutes)"
	$(BIN)/python benchmarks/watchdog_scale.py --sizes 100 1000 5000
	@echo "== benchmarks/install_size.py (a fresh virtualenv per extra: several minutes)"
	$(BIN)/python benchmarks/install_size.py

# Rewrites components/catalog/data/generated/ alone (`make generate` does it too) from the committed copies of
# SkyPilot's catalogs and Cyclenerd's pricing.yml (components/catalog/data/sources/, SHA-256 checked).
# Run as a file, not `-m`, so the rebuild never loads the tables it rewrites. The catalog README says
# how to refresh the copies themselves.
catalog: venv
	$(BIN)/python components/catalog/build.py

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) $(WHEELHOUSE) .pytest_cache .ruff_cache build *.egg-info
