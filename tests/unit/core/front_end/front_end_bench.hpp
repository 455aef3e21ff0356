// A front end with a real memory system and stub neighbours (StageHarness): the bench of the front end's unit tests.
#pragma once

#include <cstdint>

#include "../stage_test_util.hpp"
#include "smtlab/core/front_end.hpp"
#include "smtlab/mem/memory_system.hpp"

namespace smtlab::test {

struct FrontEndBench {
  StageHarness h;
  MemorySystem memory;
  FrontEnd front;
  explicit FrontEndBench(Config c)
      : h(c), memory(c.mem, 1, c.core.threads), front(CoreId{0}, h.config, memory, h.threads, h.queues) {}
  // Brings the code line of every thread into the I-cache and ITLB long before fetch starts.
  void warmCode() {
    for (std::uint32_t t = 0; t < h.config.core.threads; ++t) {
      memory.fetch(CoreId{0}, ThreadId{t}, Asid{t + 1}, 0x400000, Cycle{0});
    }
  }
  // Fetches until thread t's code line has arrived (the first fetch misses the cold I-cache); returns that cycle.
  std::uint64_t warm(std::uint32_t t) {
    std::uint64_t cycle = 0;
    while (h.threads[t].cursor->fetchSeq().value == 0 && cycle < 10000) front.fetch(Cycle{++cycle});
    return cycle;
  }
};

}  // namespace smtlab::test
