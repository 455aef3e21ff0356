# Entry points for smtlab. A newcomer needs two: `make demo` and `make test`; both install what is missing first
# (scripts/bootstrap.sh: Debian packages and the Python venv), then build. Every variable below can be overridden:
#   make test BUILD_DIR=build-debug BUILD_TYPE=Debug JOBS=4
BUILD_DIR  ?= build
BUILD_TYPE ?= Release
JOBS       ?= 2
VENV       ?= .venv
PYTHON     ?= $(VENV)/bin/python
CMAKE_ARGS ?=
DEMO_ARGS  ?=
BENCH_ARGS ?=
# Hardening phases of `make test` (docs/hardening.md): the ASan+UBSan suites and a short fuzz run of each target.
# HARDENING=0 skips both; FUZZ_SECONDS is the fuzzing time per target (targets run JOBS at a time).
HARDENING    ?= 1
FUZZ_SECONDS ?= 30

SMTLAB := $(BUILD_DIR)/smtlab
export VENV

# Prerequisites run in the order written (bootstrap before build before test).
.NOTPARALLEL:
.PHONY: all bootstrap build test demo bench policies clean distclean sanitize fuzz fuzz-long

all: build

bootstrap:
	@bash scripts/bootstrap.sh

# Configure once; afterwards ninja re-runs CMake by itself when a CMakeLists.txt or a globbed folder changes.
$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: $(BUILD_DIR)/build.ninja
	@start=$$(date +%s); cmake --build $(BUILD_DIR) -j$(JOBS) && echo "make build: $$(($$(date +%s) - start)) s"

# C++ suites through ctest, the Python tests, then the hardening phases: scripts/test.sh (which builds the hardening
# trees in the background meanwhile; each phase's private TMPDIR must be empty afterwards). The last line counts the
# skipped tests and names their causes (scripts/count_skips.py, from ctest's log and pytest's JUnit file). Where
# everything the tests need is installed, REQUIRE_ALL_TESTS=1 makes any skip fail the run; it is the default when
# the environment variable CI is set (CI services set it, and CI's bootstrap installs everything; CONTRIBUTING.md).
REQUIRE_ALL_TESTS ?= $(if $(filter-out false 0,$(CI)),1,0)
PYTEST_JUNIT := $(BUILD_DIR)/pytest-junit.xml
test: bootstrap build
	@rm -f $(PYTEST_JUNIT)
	@BUILD_DIR=$(BUILD_DIR) JOBS=$(JOBS) PYTHON=$(PYTHON) HARDENING=$(HARDENING) FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  PYTEST_ADDOPTS="-rs --junitxml=$(abspath $(PYTEST_JUNIT)) $${PYTEST_ADDOPTS:-}" bash scripts/test.sh
	@$(PYTHON) scripts/count_skips.py --ctest-log $(BUILD_DIR)/Testing/Temporary/LastTest.log \
	  $$(test -f $(PYTEST_JUNIT) && echo --junit $(PYTEST_JUNIT)) $(if $(filter 1,$(REQUIRE_ALL_TESTS)),--strict)

# The hardening phases alone (they need only the bootstrap, not the Release build).
sanitize: bootstrap
	JOBS=$(JOBS) bash scripts/sanitize.sh

fuzz: bootstrap
	JOBS=$(JOBS) bash scripts/fuzz.sh $(FUZZ_SECONDS)

# Deep fuzzing: every target for FUZZ_RUNS executions, one target at a time, no time cap, with UBSan
# alone (FUZZ_SANITIZERS=address,undefined for the slower ASan build; docs/hardening.md says what each finds).
FUZZ_RUNS ?= 10000000
FUZZ_LONG_SANITIZERS ?= undefined
fuzz-long: bootstrap
	FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_SANITIZERS=$(FUZZ_LONG_SANITIZERS) JOBS=1 bash scripts/fuzz.sh 0

# The main job: the reference study (docs/study.md), tables on stdout, report, CSV and figures in out/.
# DEMO_ARGS=--quick for the short version (about 100 s on two cores).
demo: bootstrap build
	./$(SMTLAB) study -o out $(DEMO_ARGS)

# Traces the real programs once (cached in $(BUILD_DIR)/bench-traces), then times everything (bench/README.md).
bench: bootstrap build
	cmake --build $(BUILD_DIR) --target bench_traces
	$(PYTHON) bench/bench.py $(SMTLAB) $(BENCH_ARGS)

# The policy study (bench/README.md): every fetch x allocation policy on pairs of real code, STP, ANTT, fairness.
policies: bootstrap build
	$(PYTHON) bench/policy_study.py $(SMTLAB) $(POLICY_ARGS)

clean:
	rm -rf $(BUILD_DIR)

distclean: clean
	rm -rf $(VENV) out build-asan build-fuzz build-fuzz-ubsan
