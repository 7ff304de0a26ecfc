# Every target sets itself up from nothing: a local virtualenv in .venv, from package registries.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
SCHEMAS   := $(wildcard schemas/*.json)
ARTIFACTS := $(patsubst schemas/%.json,artifacts/%.toolc,$(SCHEMAS))

.PHONY: install artifacts lint test test-fast bench bench-peers fuzz difftest clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# integrations-test: torch==2.13.0 (pinned: the CPU wheel this machine's index holds) and
	# transformers, for the engine adapter and generation tests
	$(BIN)/python -m pip install --quiet -e '.[compile,test,integrations-test]'
	touch $(STAMP)

artifacts: $(STAMP) $(ARTIFACTS)

artifacts/%.toolc: schemas/%.json $(STAMP) $(wildcard toolc/*.py toolc/*/*.py)
	$(BIN)/toolc compile $< --tokenizer qwen -o $@

lint: $(STAMP)
	$(BIN)/ruff check toolc tests bench examples

test: $(STAMP) lint
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m 'not slow'

# the long runs behind docs/reliability.md (the CI-sized ones are part of `make test`)
fuzz: $(STAMP)
	TOOLC_FUZZ_EXAMPLES=$${TOOLC_FUZZ_EXAMPLES:-10000} TOOLC_FUZZ_LOG=fuzz.log \
	  $(BIN)/python -m pytest -q tests/test_fuzz_compile.py -k front_end
	tail -1 fuzz.log

difftest: $(STAMP)
	TOOLC_DIFFTEST_WALKS=$${TOOLC_DIFFTEST_WALKS:-60} $(BIN)/python -m pytest -q -s \
	  tests/test_difftest_llguidance.py

BENCH_STAMP := $(VENV)/.bench-stamp

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[compile,test,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python bench/bench.py
	$(BIN)/python bench/scaling.py

# toolc side by side with outlines-core, xgrammar and llguidance, in a virtualenv of its own
PEERS_VENV  := bench/.venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed-stamp

$(PEERS_STAMP): pyproject.toml bench/peers/requirements.txt
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PEERS_VENV)/bin/python -m pip install --quiet -e '.[compile,test]' -r bench/peers/requirements.txt
	touch $(PEERS_STAMP)

bench-peers: $(PEERS_STAMP)
	$(PEERS_VENV)/bin/python bench/peers/run.py

clean:
	rm -rf $(VENV) $(PEERS_VENV) build *.egg-info .pytest_cache
