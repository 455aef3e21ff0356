// libFuzzer target: the native binary trace reader.
// A rejection must be an smtlab::Error; anything else, a sanitizer report or a broken round trip is a crash.
#include <cstddef>
#include <cstdint>

#include "fuzz_inputs.hpp"
#include "smtlab/common/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    smtlab::fuzz::feedNativeTrace({data, size});
  } catch (const smtlab::Error&) {
    // A clean rejection: the program would print it and exit with status 1.
  }
  return 0;
}
