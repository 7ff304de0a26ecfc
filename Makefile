# Every target sets itself up from nothing: a local virtualenv in .venv, from package registries.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
VENDOR_VENV  := build/venv-vendor
VENDOR_STAMP := $(VENDOR_VENV)/.installed-stamp
SCHEMAS   := $(wildcard schemas/*.json)
ARTIFACTS := $(patsubst schemas/%.json,artifacts/%.toolc,$(SCHEMAS))

.PHONY: install llama-cpp vendor-env artifacts lint test test-fast test-vllm test-vendor bench bench-peers fuzz difftest clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# integrations-test: torch==2.13.0 (pinned: the CPU wheel this machine's index holds) and
	# transformers, for the engine adapter and generation tests
	$(BIN)/python -m pip install --quiet -e '.[compile,test,integrations-test]'
	# the llama3 / llama4 tokenizers are fetched into the cache, not shipped (toolc/fetch.py)
	$(BIN)/python -m toolc.fetch llama3 llama4
	touch $(STAMP)

artifacts: $(STAMP) $(ARTIFACTS)

artifacts/%.toolc: schemas/%.json $(STAMP) $(wildcard toolc/*.py toolc/*/*.py)
	$(BIN)/toolc compile $< --tokenizer qwen -o $@

# llama-cpp-python for the real-engine test (tests/test_engine_llama_cpp.py), built from its
# source (the registry has no wheel): a minimal CPU build, tests, examples, tools and server off.
# The first build took 21.9 min on this 2-core machine while other work shared it (about 8 min
# alone); pip's wheel cache makes later installs take seconds. A build that does not finish
# within 15 minutes is stopped and the test skips, giving the reason written to SKIPPED. The
# source is unpacked too: its vendored llama.cpp holds convert_hf_to_gguf.py and gguf-py.
LLAMA_CPP_VERSION := 0.3.36
LLAMA_DIR   := build/llama-cpp
LLAMA_STAMP := $(VENV)/.llama-cpp-stamp
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DLLAMA_BUILD_TESTS=OFF \
               -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
               -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF

llama-cpp: $(LLAMA_STAMP)

$(LLAMA_STAMP): $(STAMP)
	mkdir -p $(LLAMA_DIR)
	rm -f $(LLAMA_DIR)/SKIPPED
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: \
	  llama-cpp-python==$(LLAMA_CPP_VERSION) -d $(LLAMA_DIR)
	tar -xzf $(LLAMA_DIR)/llama_cpp_python-$(LLAMA_CPP_VERSION).tar.gz -C $(LLAMA_DIR)
	CMAKE_ARGS="$(LLAMA_CMAKE)" CMAKE_BUILD_PARALLEL_LEVEL=2 timeout 900 \
	  $(BIN)/python -m pip install --quiet llama-cpp-python==$(LLAMA_CPP_VERSION) \
	  || echo "llama-cpp-python $(LLAMA_CPP_VERSION) did not build within 15 minutes here" \
	     "(make llama-cpp); the real-engine test is skipped" > $(LLAMA_DIR)/SKIPPED
	touch $@

lint: $(STAMP)
	$(BIN)/ruff check toolc tests bench examples

# the suite runs in PYTEST_PROCS processes (pytest-xdist), a test file to one process at a time
# so that a file's module fixtures are built once; PYTEST_PROCS=0 runs it in this process
PYTEST_PROCS ?= 2
PYTEST_PAR := -n $(PYTEST_PROCS) --dist loadfile

test: $(STAMP) $(LLAMA_STAMP) $(VENDOR_STAMP) lint
	$(BIN)/python -m pytest $(PYTEST_PAR)
	$(MAKE) test-vendor

test-fast: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_PAR) -m 'not slow'

# the vendors' own tool-call parsers (vLLM 0.33.0, SGLang 0.5.23) and the GLM-5.3 chat template
# SGLang ships, for tests/test_vendor_parsers.py and tests/test_vendor_templates.py: the wheels
# (CUDA builds) without their dependencies, in a virtualenv of their own that sees .venv's
# packages (CPU torch, transformers), plus the pure-Python modules the parsers import, pinned in
# tests/vendor-requirements.txt (docs/formats.md has the install times measured here). An
# install that does not finish within 15 minutes is stopped and those tests skip, giving the
# reason written to SKIPPED.
vendor-env: $(VENDOR_STAMP)

$(VENDOR_STAMP): $(STAMP) tests/vendor-requirements.txt
	rm -rf $(VENDOR_VENV)
	$(PYTHON) -m venv $(VENDOR_VENV)
	$(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > \
	  $$($(VENDOR_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/dotvenv.pth
	timeout 900 $(VENDOR_VENV)/bin/python -m pip install --quiet --no-deps \
	  -r tests/vendor-requirements.txt \
	  || echo "the vendor parsers' environment did not install within 15 minutes here" \
	     "(make vendor-env); the vendor-parser tests are skipped" > $(VENDOR_VENV)/SKIPPED
	touch $@

# the vLLM adapter's tests run here too: this environment holds vLLM 0.33.0's wheel, whose
# v1 logits-processor classes import on CPU, so they run against vLLM's own BatchUpdate,
# MoveDirectionality, SamplingParams and LogitsProcessor (the main run uses stand-ins);
# TOOLC_EXPECT_VLLM=1 (unless the environment did not install) makes a failed import an error
test-vendor: $(VENDOR_STAMP)
	TOOLC_EXPECT_VLLM=$$(test -e $(VENDOR_VENV)/SKIPPED || echo 1) $(VENDOR_VENV)/bin/python -m pytest -q tests/test_vendor_parsers.py \
	  tests/test_vendor_streaming.py tests/test_vendor_templates.py tests/test_integrations_vllm.py

# the vLLM adapter against vLLM 0.33.0's own classes: its wheel (a CUDA build) without its
# dependencies, in a virtualenv of its own that sees .venv's packages (CPU torch), plus the few
# pure-Python modules that vllm.v1.sample.logits_processor imports
VLLM_VENV := build/venv-vllm
VLLM_DEPS := msgspec cbor2 psutil pyzmq aiohttp multidict yarl propcache aiohappyeyeballs \
             aiosignal frozenlist openai sniffio cloudpickle pybase64 cachetools uvloop py-cpuinfo

test-vllm: $(STAMP)
	test -d $(VLLM_VENV) || $(PYTHON) -m venv $(VLLM_VENV)
	$(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > \
	  $$($(VLLM_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/dotvenv.pth
	$(VLLM_VENV)/bin/python -m pip install --quiet --no-deps vllm==0.33.0 $(VLLM_DEPS)
	TOOLC_EXPECT_VLLM=1 $(VLLM_VENV)/bin/python -m pytest -q tests/test_integrations_vllm.py

# the long runs behind docs/reliability.md (the CI-sized ones are part of `make test`)
fuzz: $(STAMP)
	TOOLC_FUZZ_EXAMPLES=$${TOOLC_FUZZ_EXAMPLES:-10000} TOOLC_FUZZ_LOG=fuzz.log \
	  $(BIN)/python -m pytest -q tests/test_fuzz_compile.py -k front_end
	TOOLC_FUZZ_ARTIFACTS=$${TOOLC_FUZZ_ARTIFACTS:-3000} TOOLC_FUZZ_LOG=fuzz.log \
	  $(BIN)/python -m pytest -q tests/test_fuzz_artifact.py
	tail -2 fuzz.log

difftest: $(STAMP)
	TOOLC_DIFFTEST_WALKS=$${TOOLC_DIFFTEST_WALKS:-60} $(BIN)/python -m pytest -q -s \
	  tests/test_difftest_llguidance.py

BENCH_STAMP := $(VENV)/.bench-stamp

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[compile,test,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python bench/bench.py
	$(BIN)/python bench/counting.py
	$(BIN)/python bench/scaling.py
	$(BIN)/python bench/batch.py
	# dynamic tool sets: 1,000 requests of 5-20 tools from a 500-tool catalogue
	$(BIN)/python bench/dynamic.py --engines toolc toolc-cold
	# llama.cpp's generation loop with and without toolc (skipped without `make llama-cpp`)
	$(BIN)/python bench/llama_loop.py

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
	$(PEERS_VENV)/bin/python bench/dynamic.py --engines toolc xgrammar \
	  --json bench/results/dynamic.json

clean:
	rm -rf $(VENV) $(PEERS_VENV) build *.egg-info .pytest_cache
