// The small memory hierarchy of the memory-system unit tests, with round numbers (all 64 B lines, 4 KiB pages):
//   L1D/L1I 1 KiB 2-way = 8 sets, 16 lines, latency 4 / 1, 4 MSHRs
//   L2      4 KiB 4-way = 16 sets, 64 lines, latency 12, 8 MSHRs
//   LLC    16 KiB 8-way = 32 sets, 256 lines, latency 40, 16 MSHRs
//   DRAM latency 200, 8 B/cycle = 8 cycles per line; TLBs 8 entries 2-way, walk 30 cycles.
#pragma once

#include <cstdint>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"

namespace smtlab::test {

inline MemConfig smallConfig() {
  MemConfig c;
  c.line_bytes = 64;
  c.page_bytes = 4096;
  c.l1i = CacheConfig{1, 2, 1, 4};
  c.l1d = CacheConfig{1, 2, 4, 4};
  c.l2 = CacheConfig{4, 4, 12, 8};
  c.llc = CacheConfig{16, 8, 40, 16};
  c.dram = DramConfig{200, 8.0};
  c.itlb = TlbConfig{8, 2, 30};
  c.dtlb = TlbConfig{8, 2, 30};
  c.next_line_prefetch = false;
  return c;
}

inline constexpr CoreId kCore0{0};
// Latencies of smallConfig() (total load-to-use per level, docs/memory.md), and the fixed TLB walk.
inline constexpr std::uint64_t kL1d = 4, kL1i = 1, kL2 = 12, kLlc = 40, kDram = 200, kWalk = 30;

}  // namespace smtlab::test
