#!/usr/bin/env bash
# Builds the library, the smtlab program and the gtest suites with AddressSanitizer + UndefinedBehaviorSanitizer
# (CMake option SMTLAB_SANITIZE, in build-asan/) and runs the suites through ctest; any sanitizer report fails a test.
# docs/hardening.md says what is run. Usage: scripts/sanitize.sh [extra ctest arguments, e.g. -R trace]
# Environment: ASAN_BUILD_DIR (build-asan), JOBS (2), SANITIZE_CTEST_ARGS (default: the exclusions listed below),
# SANITIZE_BUILD_ONLY=1 (build, run nothing: scripts/test.sh builds ahead while the other suites run).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${ASAN_BUILD_DIR:-build-asan}
JOBS=${JOBS:-2}
# Suites left out of the sanitizer run because they only measure speed and take minutes under ASan; everything
# else runs. Keep in step with docs/hardening.md.
SANITIZE_CTEST_ARGS=${SANITIZE_CTEST_ARGS:-}

say() { echo "sanitize: $*"; }

start=$SECONDS
# -O1 -g1: half the compile time of -O2 -g under ASan (the build dominates this script), fast enough tests, and line
# numbers in the reports. Configured every time (a few seconds) so that a change here reaches an old build-asan/.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DSMTLAB_SANITIZE=ON -DSMTLAB_BUILD_PYTHON=OFF -DCMAKE_PROJECT_INCLUDE="$PWD/cmake/hardening.cmake" >/dev/null
cmake --build "$BUILD" -j"$JOBS"
say "build: $((SECONDS - start)) s"
[[ "${SANITIZE_BUILD_ONLY:-0}" == 0 ]] || exit 0

# halt_on_error / abort: the first report fails the test; detect_leaks: leaks are findings too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
start=$SECONDS
# shellcheck disable=SC2086  # SANITIZE_CTEST_ARGS is a list of arguments
ctest --test-dir "$BUILD" --output-on-failure -j"$JOBS" $SANITIZE_CTEST_ARGS "$@"
say "tests: $((SECONDS - start)) s"
