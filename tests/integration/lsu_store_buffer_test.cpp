// The post-retire store buffer (core.lsu.store_buffer): a retired store keeps its store-queue entry until
// it has written the L1D, draining core.lsu.stores_per_cycle stores per cycle, so a store-bound loop runs at the drain
// rate. Expected values are derived on paper in each test from the configured widths and rates.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

// n independent 8-byte stores cycling over `lines` cache lines of one page (all L1D hits once touched).
std::vector<Instr> storeLoop(std::uint32_t n, std::uint32_t lines = 4) {
  std::vector<Instr> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    Instr in = op(OpClass::Store, 0x400000 + 4 * (i % 16), {}, {});
    in.stores[0] = MemRef{0x10000 + 64 * (i % lines) + 8 * ((i / lines) % 8), 8};
    out.push_back(in);
  }
  return out;
}

// Wide enough that only the store path limits: 4-wide fetch/rename/retire, two store units, SQ of 16 entries.
Config storeConfig(bool buffer, std::uint32_t perCycle) {
  Config c = baseConfig(1);
  c.core.fu.store = {1, true};
  setUnitCount(c.core, UnitClass::StoreAddress, 2);  // was core.fu.store.count = 2: two stores per cycle, so
  setUnitCount(c.core, UnitClass::StoreData, 2);     // two address and two data ports
  c.core.sq.entries = 16;
  c.core.lsu.store_buffer = buffer;
  c.core.lsu.stores_per_cycle = perCycle;
  return c;
}

// Cycles per store in the steady state: the end cycles of 2n and n stores differ by n stores' worth of steady state
// (the start-up, the cold misses of the first lines and the last drain cancel out).
double cyclesPerStore(const Config& c, std::uint32_t n) {
  const std::uint64_t once = endCycleAlone(c, storeLoop(n));
  const std::uint64_t twice = endCycleAlone(c, storeLoop(2 * n));
  return double(twice - once) / n;
}

TEST(StoreBuffer, AStoreBoundLoopRunsAtTheDrainRate) {
  // With the buffer, every store holds an SQ entry until it has written the L1D, and the L1D takes
  // stores_per_cycle of them per cycle: rename can allocate no faster, so a store takes 1 / stores_per_cycle cycles.
  // Without it the store retires at the issue rate of the two store units: 1/2 cycle per store.
  constexpr std::uint32_t n = 3000;
  EXPECT_NEAR(cyclesPerStore(storeConfig(true, 1), n), 1.0, 0.01);
  EXPECT_NEAR(cyclesPerStore(storeConfig(false, 1), n), 0.5, 0.01);
  EXPECT_NEAR(cyclesPerStore(storeConfig(true, 2), n), 0.5, 0.01);
}

TEST(StoreBuffer, RetiredStoresFillTheStoreQueueAndDrainAfterTheTraceEnds) {
  // The loop is drain-bound, so the SQ runs full (16 entries) with retired stores; after the trace's end event the
  // core still has work until the last of them is written: then every store has reached the L1D (n accesses) and
  // the SQ is empty. Invariant checking (setChecking) counts buffered stores as SQ entries every cycle.
  constexpr std::uint32_t n = 500;
  Machine m(storeConfig(true, 1));
  m.setChecking(true);
  m.attach(LogicalCpu{0}, cursorFor(storeLoop(n)), Asid{1});
  runToEnd(m);
  const SharedCapacity& sq = m.core(CoreId{0}).queue(QueueKind::Sq);
  EXPECT_GT(sq.usedTotal(), 0u) << "stores should still be draining when the last one retires";
  EXPECT_TRUE(m.core(CoreId{0}).hasWork());
  std::uint64_t guard = 0;
  while (m.core(CoreId{0}).hasWork() && ++guard < 100) m.run(Cycle{m.now().value + 10});
  EXPECT_EQ(sq.usedTotal(), 0u);
  const auto stats = m.statsJson();
  EXPECT_EQ(u64(stats.at("cores").as_array()[0].as_object().at("l1d").as_object().at("accesses")), n);
  EXPECT_EQ(u64(cpuStats(stats, 0).at("occupancy").as_object().at("sq").as_object().at("max")), 16u);
}

TEST(StoreBuffer, StoresMissingTheL1HoldTheirEntriesUntilTheirLinesAreOwned) {
  // 40 stores to 40 cold pages: each one's line comes from DRAM (DTLB walk 30 + LLC 40 + DRAM 200 = 270 cycles,
  // requested at retire). A buffered store keeps its SQ entry until its line is owned, and the SQ has 4 entries, so
  // at most 4 such misses are in flight: the 40 stores take about 40 / 4 x 270 = 2700 cycles. Lower bound: the
  // last 4 need not have drained when the trace ends, (40 - 4) / 4 x 240; upper: 10 x 270 plus the code's 3 cold
  // instruction-fetch misses (3 x 270). Without the buffer, stores write at retire and free their entries at once:
  // the trace takes its issue time plus those instruction-fetch misses.
  std::vector<Instr> cold;
  for (std::uint32_t i = 0; i < 40; ++i) {
    Instr in = op(OpClass::Store, 0x400000 + 4 * i, {}, {});
    in.stores[0] = MemRef{0x100000 + 4096 * Addr{i}, 8};
    cold.push_back(in);
  }
  Config c = storeConfig(true, 1);
  c.core.sq.entries = 4;
  const std::uint64_t buffered = endCycleAlone(c, cold);
  EXPECT_GE(buffered, 9u * 240u);
  EXPECT_LE(buffered, 10u * 270u + 3u * 270u);
  EXPECT_LT(endCycleAlone(storeConfig(false, 1), cold), 1000u);
}

}  // namespace
}  // namespace smtlab::test
