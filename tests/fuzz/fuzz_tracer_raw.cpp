// libFuzzer target: the tracer raw stream (block table + raw stream of one thread).
// A rejection must be an smtlab::Error; anything else, a sanitizer report or a broken round trip is a crash.
#include <cstddef>
#include <cstdint>

#include "fuzz_inputs.hpp"
#include "smtlab/common/error.hpp"
#ifndef SMTLAB_FUZZ_HAVE_TRACER
// tests/fuzz/fuzz_targets.cmake builds this target only when include/smtlab/tracer/raw_trace.hpp exists.
#error "include/smtlab/tracer/raw_trace.hpp is missing"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    smtlab::fuzz::feedTracerRaw({data, size});
  } catch (const smtlab::Error&) {
    // A clean rejection: the program would print it and exit with status 1.
  }
  return 0;
}
