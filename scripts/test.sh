#!/usr/bin/env bash
# `make test` after the bootstrap and the Release build: the C++ suites through ctest, the Python tests, then the
# hardening phases (ASan+UBSan suites, a short fuzz run per target; docs/hardening.md).
#
# The two hardening builds (build-asan/, build-fuzz/) start in the background before ctest: the Python tests mostly
# keep one core busy, so the builds use the other one instead of waiting for their turn (niced: the suites keep
# priority). On CI's two cores that saved 1.5 to 3 minutes. Their output goes to $BUILD_DIR/hardening-build.log,
# shown in full if they fail; the suites then run with their builds already done. A background build still
# running when this script ends (a suite failed) is stopped.
#
# Each phase runs with a private TMPDIR that must be empty afterwards: a test that leaves files or folders in the temp
# directory fails the run (unchecked, such leftovers pile up: a single run could leave 88 empty folders in /tmp).
# pytest keeps its tmp_path folders by design: they go to a private base folder removed afterwards.
# Environment (set by the Makefile): BUILD_DIR, JOBS, PYTHON, HARDENING (0 skips the hardening phases), FUZZ_SECONDS.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-2}
PYTHON=${PYTHON:-.venv/bin/python}
HARDENING=${HARDENING:-1}
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
export JOBS

ahead_pid=""
ahead_log="$BUILD_DIR/hardening-build.log"
ahead_rc="$BUILD_DIR/hardening-build.rc"
stop_ahead() {
  if [[ -n "$ahead_pid" ]] && kill -0 "$ahead_pid" 2>/dev/null; then
    echo "make test: stopping the hardening builds (a suite failed)"
    kill -- -"$ahead_pid" 2>/dev/null || kill "$ahead_pid" 2>/dev/null
    wait "$ahead_pid" 2>/dev/null
  fi
}
trap stop_ahead EXIT

# Checks a phase's private TMPDIR and removes it; fails if the phase left anything there.
check_tmp() {
  local tmp=$1 what=$2 left
  left=$(ls -A "$tmp")
  rm -rf "$tmp"
  if [[ -n "$left" ]]; then
    echo "$what left these in its TMPDIR (a test does not clean up):"
    echo "$left" | head -20
    return 1
  fi
}

if [[ "$HARDENING" != 0 ]]; then
  rm -f "$ahead_rc"
  echo "make test: building build-asan/ and build-fuzz/ in the background (log: $ahead_log)"
  # setsid: its own process group, so that stop_ahead stops ninja and the compilers with it. nice: the suites keep
  # priority (the wheel test compiles and the study test runs two workers themselves); the builds take what is left.
  setsid nice -n 10 bash -c 'SANITIZE_BUILD_ONLY=1 bash scripts/sanitize.sh && FUZZ_BUILD_ONLY=1 bash scripts/fuzz.sh 1;
                  echo $? > "$1"' _ "$ahead_rc" > "$ahead_log" 2>&1 &
  ahead_pid=$!
fi

tmp=$(mktemp -d)
echo "ctest with TMPDIR=$tmp"
start=$(date +%s)
TMPDIR=$tmp ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS"
rc=$?
echo "make test: ctest took $(($(date +%s) - start)) s"
check_tmp "$tmp" ctest || exit 1
((rc == 0)) || exit "$rc"

if find tests/python -name 'test_*.py' -o -name '*_test.py' 2>/dev/null | grep -q .; then
  tmp=$(mktemp -d)
  echo "pytest with TMPDIR=$tmp"
  start=$(date +%s)
  TMPDIR=$tmp PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH} "$PYTHON" -m pytest tests/python \
    --basetemp="$tmp/pytest" --durations=15
  rc=$?
  echo "make test: pytest took $(($(date +%s) - start)) s"
  rm -rf "$tmp/pytest"
  check_tmp "$tmp" pytest || exit 1
  if ((rc == 5)); then echo "pytest: no tests collected"; elif ((rc != 0)); then exit "$rc"; fi
else
  echo "tests/python: no test files, pytest not run"
fi

if [[ "$HARDENING" == 0 ]]; then
  echo "HARDENING=0: sanitizer suites and fuzzers not run"
  exit 0
fi
start=$(date +%s)
wait "$ahead_pid"
ahead_pid=""
echo "make test: waited $(($(date +%s) - start)) s for the hardening builds"
if [[ "$(cat "$ahead_rc" 2>/dev/null)" != 0 ]]; then
  echo "make test: the hardening builds failed; their log ($ahead_log):"
  cat "$ahead_log"
  exit 1
fi
grep -E '^(sanitize|fuzz): build:' "$ahead_log"
bash scripts/sanitize.sh || exit $?
bash scripts/fuzz.sh "$FUZZ_SECONDS" || exit $?
