// libFuzzer target: source specs (gen:NAME,key=value,..., kernel:NAME, kpath:NAME and exec: command lines, split only).
// A rejection must be an smtlab::Error; anything else, a sanitizer report or a broken property is a crash.
#include <cstddef>
#include <cstdint>

#include "fuzz_inputs.hpp"
#include "smtlab/common/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    smtlab::fuzz::feedSourceSpec({data, size});
  } catch (const smtlab::Error&) {
    // A clean rejection: the program would print it and exit with status 1.
  }
  return 0;
}
