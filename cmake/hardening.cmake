# Hardening builds: SMTLAB_SANITIZE (ASan + UBSan on the library, the program and the gtest suites, build-asan/) and
# SMTLAB_FUZZ (libFuzzer targets of tests/fuzz, clang only, build-fuzz/). docs/hardening.md says how to run them.
# Included by the top-level CMakeLists.txt right after project(), or through -DCMAKE_PROJECT_INCLUDE=<this file>
# (what scripts/sanitize.sh and scripts/fuzz.sh pass); the guard makes both at once harmless.
include_guard(GLOBAL)

option(SMTLAB_SANITIZE "Build everything with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(SMTLAB_FUZZ "Build the libFuzzer targets in tests/fuzz (needs clang; implies the sanitizers)" OFF)

# The sanitizers of a fuzz build. `make test`'s short runs keep both; the long runs (`make fuzz-long`) use UBSan
# alone, which runs the readers 3-6x faster (ASan's shadow memory and checks on every access are most of the cost),
# so that 10 M executions per target fit in a session. libFuzzer's own -rss_limit_mb and -malloc_limit_mb still
# catch unbounded memory without ASan; what is lost is the detection of out-of-bounds accesses that do not crash,
# which the ASan runs of `make test` and the ASan gtest suites keep.
set(SMTLAB_FUZZ_SANITIZERS "address,undefined" CACHE STRING "Sanitizers of the fuzz targets: address,undefined or undefined")
set_property(CACHE SMTLAB_FUZZ_SANITIZERS PROPERTY STRINGS "address,undefined" "undefined")

if(SMTLAB_SANITIZE OR SMTLAB_FUZZ)
  # UB is fatal (not just a report) so that a test or fuzz run that hits it fails; frame pointers give usable stacks.
  # C++ only: the C code is the QEMU tracer plugin, which QEMU (not sanitized) loads, so it must stay plain.
  set(smtlab_sanitizers address,undefined)
  if(SMTLAB_FUZZ AND NOT SMTLAB_SANITIZE)
    if(NOT SMTLAB_FUZZ_SANITIZERS MATCHES "^(address,undefined|undefined)$")
      message(FATAL_ERROR "SMTLAB_FUZZ_SANITIZERS must be 'address,undefined' or 'undefined', "
                          "got '${SMTLAB_FUZZ_SANITIZERS}'")
    endif()
    set(smtlab_sanitizers ${SMTLAB_FUZZ_SANITIZERS})
  endif()
  set(smtlab_sanitize_flags -fsanitize=${smtlab_sanitizers} -fno-sanitize-recover=undefined)
  # _GLIBCXX_ASSERTIONS: the standard library checks its preconditions too (front() of an empty deque, bounds).
  # No -g here: the scripts choose the debug level with the build type's flags (scripts/sanitize.sh: -g1, line tables
  # for the reports' stacks at a fifth less compile time than -g; scripts/fuzz.sh: RelWithDebInfo's -g). A -g here
  # came after those on the command line and won, so the ASan build compiled with full debug information.
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${smtlab_sanitize_flags};-fno-omit-frame-pointer;-D_GLIBCXX_ASSERTIONS>")
  add_link_options("$<$<LINK_LANGUAGE:CXX>:${smtlab_sanitize_flags}>")
endif()

if(SMTLAB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "SMTLAB_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++ "
                        "(Debian packages clang and libclang-rt-14-dev); scripts/fuzz.sh does this")
  endif()
  # Coverage instrumentation everywhere; the fuzzer's main() is linked only into the fuzz targets.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
  # The fuzz targets link the layer object libraries, which exist only once the top-level file has run to its end.
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL include ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_targets.cmake)
endif()
