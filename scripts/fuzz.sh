#!/usr/bin/env bash
# Builds the libFuzzer targets (CMake option SMTLAB_FUZZ, clang, in build-fuzz/) and runs each for SECONDS seconds
# (default 60) from its seed corpus in tests/fuzz/corpus/<target> plus the kept crash inputs. A crash, leak, timeout
# or out-of-memory fails the script, and the input that caused it is copied to tests/fuzz/regressions/<target>/,
# which the normal gtest build replays (test_hardening). docs/hardening.md has the details.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   targets: text_trace native_trace champsim_trace tracer_raw config config_set source_spec (build-fuzz/fuzz_targets.txt)
# Environment: FUZZ_SECONDS (default for SECONDS), FUZZ_RUNS (run each target for this many executions instead; then
# SECONDS, if not 0, is only a cap), FUZZ_SANITIZERS (address,undefined; or undefined, 3-6x faster, for long runs),
# FUZZ_BUILD_DIR (build-fuzz; build-fuzz-ubsan for FUZZ_SANITIZERS=undefined), JOBS (targets run in parallel, 2), FUZZ_ARGS (extra
# libFuzzer flags), CXX_FUZZ (clang++), FUZZ_BUILD_ONLY=1 (build, fuzz nothing: scripts/test.sh builds ahead). `make fuzz-long` is FUZZ_RUNS=10000000 JOBS=1 with no time cap.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
SECONDS_PER_TARGET=${1:-${FUZZ_SECONDS:-60}}
shift || true
SANITIZERS=${FUZZ_SANITIZERS:-address,undefined}
case "$SANITIZERS" in
  address,undefined) default_build=build-fuzz ;;
  undefined) default_build=build-fuzz-ubsan ;;
  *) echo "fuzz: ERROR: FUZZ_SANITIZERS must be 'address,undefined' or 'undefined', got '$SANITIZERS'" >&2; exit 1 ;;
esac
BUILD=${FUZZ_BUILD_DIR:-$default_build}
JOBS=${JOBS:-2}
CXX_FUZZ=${CXX_FUZZ:-clang++}

say() { echo "fuzz: $*"; }
fail() { echo "fuzz: ERROR: $*" >&2; exit 1; }

[[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ ]] || fail "SECONDS must be a whole number, got '$SECONDS_PER_TARGET'"
RUNS=${FUZZ_RUNS:-}
[[ -z "$RUNS" || "$RUNS" =~ ^[1-9][0-9]*$ ]] || fail "FUZZ_RUNS must be a positive whole number, got '$RUNS'"
((SECONDS_PER_TARGET > 0)) || [[ -n "$RUNS" ]] || fail "SECONDS 0 (no time limit) needs FUZZ_RUNS"
limit=(-max_total_time="$SECONDS_PER_TARGET")
[[ -n "$RUNS" ]] && limit+=(-runs="$RUNS")
what="${SECONDS_PER_TARGET} s"
# (Not a $( (( ... )) && echo ) inside the assignment: under set -e its false test ended the script silently, so
# `make fuzz-long`, which passes 0, stopped before fuzzing anything.)
if [[ -n "$RUNS" ]]; then
  what="$RUNS executions"
  ((SECONDS_PER_TARGET == 0)) || what+=" (at most ${SECONDS_PER_TARGET} s)"
fi
command -v "$CXX_FUZZ" >/dev/null 2>&1 \
  || fail "$CXX_FUZZ not found (Debian packages clang libclang-rt-14-dev, which scripts/bootstrap.sh installs)"

start=$SECONDS
if [[ ! -f "$BUILD/build.ninja" ]]; then
  # Warnings are not errors here: clang warns about things g++ (the compiler of record) does not.
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX_FUZZ" \
    -DCMAKE_PROJECT_INCLUDE="$PWD/cmake/hardening.cmake" -DSMTLAB_FUZZ=ON -DSMTLAB_FUZZ_SANITIZERS="$SANITIZERS" -DSMTLAB_BUILD_TESTS=OFF -DSMTLAB_BUILD_PYTHON=OFF \
    -DSMTLAB_WERROR=OFF >/dev/null
fi
cmake --build "$BUILD" --target fuzz_all -j"$JOBS"
say "build: $((SECONDS - start)) s"
[[ "${FUZZ_BUILD_ONLY:-0}" == 0 ]] || exit 0

# fuzz_targets.txt is a CMake list (a;b;c) without a final newline, hence the `|| true` after read.
if (($# > 0)); then targets=("$@"); else IFS=';' read -r -a targets < "$BUILD/fuzz_targets.txt" || true; fi
((${#targets[@]} > 0)) || fail "no fuzz targets listed in $BUILD/fuzz_targets.txt"

# One target: fuzz for the given time, then keep whatever it found. Runs in the background, JOBS at a time.
run_target() {
  local t=$1
  local exe="$BUILD/fuzz_$t" work="$BUILD/fuzz-work/$t" artifacts="$BUILD/fuzz-artifacts/$t/"
  local log="$BUILD/fuzz-logs/$t.log" seeds="tests/fuzz/corpus/$t" kept="tests/fuzz/regressions/$t"
  [[ -x "$exe" ]] || { echo "fuzz: $t: no such target ($exe)"; return 1; }
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  rm -f "$artifacts"*
  local dict=()
  [[ -f "tests/fuzz/$t.dict" ]] && dict=(-dict="tests/fuzz/$t.dict")
  local dirs=("$work" "$seeds")
  [[ -d "$kept" ]] && dirs+=("$kept")
  local rc=0 t0=$SECONDS
  # The work corpus (build-fuzz/fuzz-work) grows across runs; only the seeds are kept in the repository.
  # shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
  "$exe" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$artifacts" "${dict[@]}" ${FUZZ_ARGS:-} "${dirs[@]}" >"$log" 2>&1 || rc=$?
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  if ((rc == 0)); then
    echo "fuzz: $t: ok, $runs inputs in $((SECONDS - t0)) s (log: $log)"
    return 0
  fi
  mkdir -p "$kept"
  local found=0
  for f in "$artifacts"*; do
    [[ -f "$f" ]] || continue
    cp "$f" "$kept/$(basename "$f")"
    found=$((found + 1))
  done
  echo "fuzz: $t: FAILED (libFuzzer exit $rc), $found input(s) kept in $kept/; the report:"
  grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|terminate called|  what\(\)|#[0-9]+ 0x)' "$log" | head -30 \
    | sed 's/^/    /'
  echo "    (full log: $log)"
  return 1
}

say "running ${targets[*]} for $what each, $JOBS at a time"
failed=0
running=0
for t in "${targets[@]}"; do
  if ((running >= JOBS)); then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || failed=1
  running=$((running - 1))
done
((failed == 0)) || fail "at least one target found a problem (inputs kept in tests/fuzz/regressions/)"
say "all targets clean"
