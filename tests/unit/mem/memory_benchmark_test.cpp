// A micro-benchmark, not a timed test: prints how many L1-hit-heavy accesses the memory system serves per second.
// It asserts only on the hit counts, so it never fails on a slow or busy host.
#include <chrono>
#include <cstdio>

#include <gtest/gtest.h>

#include "smtlab/mem/memory_system.hpp"

namespace smtlab {
namespace {

TEST(MemoryBenchmark, L1HitHeavyAccessesPerSecond) {
  MemorySystem mem(MemConfig{}, 2, 2);
  constexpr std::uint64_t kAccesses = 10'000'000;
  // 16 KiB of data (fits the 32 KiB L1D) walked with a stride of 8 bytes, plus one fetch per 8 loads.
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t sink = 0;
  for (std::uint64_t i = 0; i < kAccesses; ++i) {
    const Cycle now{i};
    const Addr a = 0x10000 + ((i * 8) & 0x3fff);
    sink += mem.load(CoreId{0}, Asid{3}, a, 8, now).ready.value;
    if ((i & 7) == 0) {
      const ThreadId thread{static_cast<std::uint32_t>((i >> 3) & 1)};
      sink += mem.fetch(CoreId{0}, thread, Asid{3}, 0x400000 + (i & 0xfff), now).ready.value;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double total = static_cast<double>(kAccesses + kAccesses / 8);
  std::printf("[ bench    ] %.1f M accesses/s (%.2f ns each), checksum %llu\n", total / seconds / 1e6,
              seconds * 1e9 / total, static_cast<unsigned long long>(sink));
  RecordProperty("accesses_per_second", static_cast<int>(total / seconds));
  EXPECT_EQ(mem.l1dStats(CoreId{0}).accesses, kAccesses);
  // Primary misses: the first touch of each line only (accesses one cycle apart merge with it while it is in flight).
  const CacheStats& l1d = mem.l1dStats(CoreId{0});
  EXPECT_EQ(l1d.misses - l1d.mshrMerges, 16384u / 64u);
}

}  // namespace
}  // namespace smtlab
