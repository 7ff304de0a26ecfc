# Every target sets itself up from nothing: a local virtualenv in .venv, from package registries.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
SCHEMAS   := $(wildcard schemas/*.json)
ARTIFACTS := $(patsubst schemas/%.json,artifacts/%.toolc,$(SCHEMAS))

.PHONY: install artifacts test test-fast bench fuzz difftest clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

artifacts: $(STAMP) $(ARTIFACTS)

artifacts/%.toolc: schemas/%.json $(STAMP) $(wildcard toolc/*.py toolc/*/*.py)
	$(BIN)/toolc compile $< --tokenizer qwen -o $@

test: $(STAMP)
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

bench: $(STAMP)
	$(BIN)/python bench/bench.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
