// libFuzzer target: the ChampSim trace reader.
// A rejection must be an smtlab::Error; anything else, a sanitizer report or a broken round trip is a crash.
#include <cstddef>
#include <cstdint>

#include "fuzz_inputs.hpp"
#include "smtlab/common/error.hpp"
#ifndef SMTLAB_FUZZ_HAVE_CHAMPSIM
// tests/fuzz/fuzz_targets.cmake builds this target only when include/smtlab/trace/champsim_format.hpp exists.
#error "include/smtlab/trace/champsim_format.hpp is missing"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    smtlab::fuzz::feedChampSimTrace({data, size});
  } catch (const smtlab::Error&) {
    // A clean rejection: the program would print it and exit with status 1.
  }
  return 0;
}
