// The write-through L1D and its shared write-combining buffers (mem.l1d_write_through, NetBurst): every store reaches
// the L2 through a few line buffers that the core's hardware threads share, so two threads that each fit the buffers
// alone can thrash them together. Expected rates are derived on paper in each test.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

// n independent 8-byte stores cycling over `lines` cache lines from `base` (L2 hits once touched).
std::vector<Instr> wcStoreLoop(std::uint32_t n, std::uint32_t lines, Addr base) {
  std::vector<Instr> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    Instr in = op(OpClass::Store, 0x400000 + 4 * (i % 16), {}, {});
    in.stores[0] = MemRef{base + 64 * (i % lines) + 8 * ((i / lines) % 8), 8};
    out.push_back(in);
  }
  return out;
}

// Only the store path limits: 4-wide, two store ports, an SQ of 32 entries (16 per thread), the buffer drained one
// store per cycle; six write-combining buffers, a line written into the L2 in 2 cycles, L2 latency 12.
Config writeThroughConfig(std::uint32_t threads, bool writeThrough) {
  Config c = baseConfig(threads);
  c.core.fu.store = {1, true};
  setUnitCount(c.core, UnitClass::StoreAddress, 2);
  setUnitCount(c.core, UnitClass::StoreData, 2);
  c.core.sq.entries = 32;
  c.core.lsu.store_buffer = true;
  c.core.lsu.stores_per_cycle = 1;
  c.mem.l1d_write_through = writeThrough;
  c.mem.wc_buffers = 6;
  c.mem.wc_write_cycles = 2;
  return c;
}

// Cycles per store of the whole core: every logical CPU runs n (then 2n) stores over `lines` lines of its own; the
// end cycles differ by n stores per CPU of steady state.
double wcCyclesPerStore(const Config& c, std::uint32_t lines, std::uint32_t n) {
  auto endCycle = [&](std::uint32_t count) {
    Machine m(c);
    m.setChecking(true);
    for (std::uint32_t t = 0; t < c.core.threads; ++t) {
      m.attach(LogicalCpu{t}, cursorFor(wcStoreLoop(count, lines, 0x10000 + 0x1000 * Addr{t})), Asid{t + 1});
    }
    const Completion done = runToEnd(m);
    std::uint64_t last = 0;
    for (const std::uint64_t e : done.endCycle) last = std::max(last, e);
    return last;
  };
  return double(endCycle(2 * n) - endCycle(n)) / (double(n) * c.core.threads);
}

std::uint64_t wcStatOf(const Config& c, std::uint32_t lines, std::uint32_t n, const char* key) {
  Machine m(c);
  for (std::uint32_t t = 0; t < c.core.threads; ++t) {
    m.attach(LogicalCpu{t}, cursorFor(wcStoreLoop(n, lines, 0x10000 + 0x1000 * Addr{t})), Asid{t + 1});
  }
  runToEnd(m);
  return u64(m.statsJson().at("cores").as_array()[0].as_object().at("write_combining").as_object().at(key));
}

TEST(WriteCombiningCore, OneThreadsFourLinesMergeAndRunAtTheDrainRate) {
  // Four lines fit six buffers: after the first store to each, every store merges, and the loop runs at the store
  // buffer's drain rate, one store per cycle, as with a write-back L1D.
  constexpr std::uint32_t n = 3000;
  EXPECT_NEAR(wcCyclesPerStore(writeThroughConfig(1, true), 4, n), 1.0, 0.02);
  EXPECT_NEAR(wcCyclesPerStore(writeThroughConfig(1, false), 4, n), 1.0, 0.02);
  EXPECT_EQ(wcStatOf(writeThroughConfig(1, true), 4, n, "merges"), n - 4);
  EXPECT_EQ(wcStatOf(writeThroughConfig(1, true), 4, n, "flushes"), 0u);
}

TEST(WriteCombiningCore, TwoThreadsOfFourLinesEachThrashTheSharedBuffersAndCutTheCoresStoreRate) {
  // Together the threads write 8 lines into 6 buffers. Between two stores of a thread to one line it writes its 3
  // other lines and its sibling, retiring in the cycles between, about as many of its own: 6 or more other lines,
  // so least-recently-written replacement has flushed the line and every store takes a buffer. Each buffer then
  // goes round: its line is written into the L2 (2 cycles), the next store gets in and asks for its line, owned 12
  // cycles later (L2 latency), before the buffer can be written again; 6 buffers each take a store per 14 cycles,
  // 14 / 6 = 2.33 cycles per store (the L2's one-line-at-a-time path alone would allow 2). With a write-back L1D
  // both threads share the drain's one store per cycle.
  constexpr std::uint32_t n = 3000;
  EXPECT_NEAR(wcCyclesPerStore(writeThroughConfig(2, true), 4, n), 14.0 / 6.0, 0.05);
  EXPECT_NEAR(wcCyclesPerStore(writeThroughConfig(2, false), 4, n), 1.0, 0.02);
  const std::uint64_t writes = wcStatOf(writeThroughConfig(2, true), 4, n, "writes");
  EXPECT_EQ(writes, 2u * n);
  EXPECT_LT(wcStatOf(writeThroughConfig(2, true), 4, n, "merges"), writes / 20);
}

TEST(WriteCombiningCore, TwoThreadsOfThreeLinesEachShareTheBuffersWithoutThrashing) {
  // 3 + 3 lines fit the 6 buffers: every store after the first six merges, and the core runs at the drain rate.
  constexpr std::uint32_t n = 3000;
  EXPECT_NEAR(wcCyclesPerStore(writeThroughConfig(2, true), 3, n), 1.0, 0.02);
  EXPECT_EQ(wcStatOf(writeThroughConfig(2, true), 3, n, "flushes"), 0u);
}

}  // namespace
}  // namespace smtlab::test
