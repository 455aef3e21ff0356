// LoadStoreUnit over the real memory system (its neighbour below) with latencies set here: load timing by level,
// the STALL/FLUSH gate on a load that misses to memory, and queue entries freed at retire.
#include "smtlab/core/load_store_unit.hpp"

#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/core/rename_allocate.hpp"

namespace smtlab::test {
namespace {

Config memoryConfig() {
  Config c = stageConfig(1);
  c.mem.l1d.latency = 4;
  c.mem.l2.latency = 12;
  c.mem.llc.latency = 40;
  c.mem.dram.latency = 200;
  c.mem.dtlb.miss_latency = 30;
  c.mem.next_line_prefetch = false;
  c.core.fu.load.latency = 1;  // AGU
  return c;
}

struct LsuBench {
  StageHarness h;
  MemorySystem memory;
  RenameAllocate rename;
  LoadStoreUnit lsu;
  LsuBench(Config c, LongLatencyAction action)
      : h(c),
        memory(c.mem, 1, c.core.threads),
        rename(h.config, h.threads, h.queues),
        lsu(CoreId{0}, h.config, memory, h.threads, h.queues, action) {}
  void renameAll(std::vector<Instr> trace) {
    const auto n = static_cast<std::uint32_t>(trace.size());
    h.attach(0, std::move(trace));
    h.queueUops(0, n);
    while (rename.tick(Cycle{0}, false)) rename.clearDispatched();
  }
  Uop& uop(std::uint64_t seq) { return h.threads[0].rob[seq]; }
};

TEST(LoadStoreUnit, AColdLoadGoesToMemoryAndTheSameLineThenHitsTheL1) {
  // Cold: DTLB walk 30 + DRAM path (200 cycles from the LLC miss, latencies cumulative per docs/memory.md) after the
  // AGU cycle: at least 1 + 30 + 200 cycles. Once the line is back, a load of it takes AGU 1 + L1 4 = 5.
  LsuBench b(memoryConfig(), LongLatencyAction::None);
  b.renameAll({loadOf(0x10000, 1), loadOf(0x10008, 2)});
  const Cycle first = b.lsu.executeLoad(0, b.uop(0), Cycle{10});
  EXPECT_EQ(b.uop(0).level, MemLevel::Dram);
  EXPECT_GE(first.value, 10u + 1 + 30 + 200);
  EXPECT_TRUE(b.h.threads[0].missDone.empty());  // kept only for MISSCOUNT (the next test)
  const Cycle later{first.value + 100};
  EXPECT_EQ(b.lsu.executeLoad(0, b.uop(1), later), later + 5);
  EXPECT_EQ(b.uop(1).level, MemLevel::L1);
}

TEST(LoadStoreUnit, UnderMissCountAMissIsRememberedUntilItReturns) {
  // MISSCOUNT orders fetch by each thread's L1D misses in flight: the miss's completion cycle is kept, and dropped by
  // the next miss's bookkeeping once it has passed (a hit adds nothing).
  Config c = memoryConfig();
  c.core.fetch_policy = FetchPolicy::MissCount;
  LsuBench b(c, LongLatencyAction::None);
  b.renameAll({loadOf(0x10000, 1), loadOf(0x10008, 2), loadOf(0x90000, 3)});
  const Cycle first = b.lsu.executeLoad(0, b.uop(0), Cycle{10});
  ASSERT_EQ(b.h.threads[0].missDone.size(), 1u);
  EXPECT_EQ(b.h.threads[0].missDone[0], first);
  const Cycle later{first.value + 100};
  b.lsu.executeLoad(0, b.uop(1), later);  // an L1 hit
  EXPECT_EQ(b.h.threads[0].missDone.size(), 1u);
  b.lsu.executeLoad(0, b.uop(2), later);  // a cold line: the first miss has returned and goes, this one stays
  ASSERT_EQ(b.h.threads[0].missDone.size(), 1u);
  EXPECT_GT(b.h.threads[0].missDone[0], later);
}

TEST(LoadStoreUnit, StallGatesTheThreadUntilAMemoryMissReturns) {
  LsuBench b(memoryConfig(), LongLatencyAction::Gate);
  b.renameAll({loadOf(0x20000, 1)});
  const Cycle ready = b.lsu.executeLoad(0, b.uop(0), Cycle{5});
  EXPECT_EQ(b.h.threads[0].gatedUntil, ready);
  EXPECT_TRUE(b.lsu.pendingFlushes().empty());
}

TEST(LoadStoreUnit, FlushAlsoAsksToSquashEverythingYoungerThanTheMissingLoad) {
  LsuBench b(memoryConfig(), LongLatencyAction::Flush);
  b.renameAll({instr(OpClass::Int, {3}), loadOf(0x30000, 1)});
  b.lsu.executeLoad(0, b.uop(1), Cycle{5});
  ASSERT_EQ(b.lsu.pendingFlushes().size(), 1u);
  EXPECT_EQ(b.lsu.pendingFlushes()[0], (std::pair<std::uint32_t, SeqNum>{0, SeqNum{1}}));
}

TEST(LoadStoreUnit, WithoutAGatingPolicyAMissGatesNothing) {
  LsuBench b(memoryConfig(), LongLatencyAction::None);
  b.renameAll({loadOf(0x40000, 1)});
  b.lsu.executeLoad(0, b.uop(0), Cycle{5});
  EXPECT_EQ(b.h.threads[0].gatedUntil, Cycle{0});
}

TEST(LoadStoreUnit, RetiringFreesTheLoadAndStoreQueueEntries) {
  LsuBench b(memoryConfig(), LongLatencyAction::None);
  b.renameAll({loadOf(0x1000, 1), storeTo(0x2000, 1)});
  EXPECT_EQ(b.h.queues[QueueKind::Lq].used(0), 1u);
  EXPECT_EQ(b.h.queues[QueueKind::Sq].used(0), 1u);
  b.lsu.retireMemory(0, b.uop(0), Cycle{50});
  b.lsu.retireMemory(0, b.uop(1), Cycle{50});
  EXPECT_EQ(b.h.queues[QueueKind::Lq].used(0), 0u);
  EXPECT_EQ(b.h.queues[QueueKind::Sq].used(0), 0u);
}

TEST(LongLatencyHook, TheConfiguredCachesMissIsTheTrigger) {
  // long_latency_miss = l1: a load served by the L2 (an L1 miss) gates; = l2: only LLC-served and beyond; = llc: only
  // DRAM-served. Gating lasts until the data returns; FLUSH also asks to squash after the load.
  ThreadContext th;
  std::vector<std::pair<std::uint32_t, SeqNum>> flushes;
  const LongLatencyHook l1(LongLatencyAction::Gate, LongLatencyMiss::L1);
  l1.onLoad(th, 0, SeqNum{3}, 0x400000, MemLevel::L1, Cycle{10}, Cycle{50}, flushes);
  EXPECT_EQ(th.gatedUntil, Cycle{0});
  l1.onLoad(th, 0, SeqNum{3}, 0x400000, MemLevel::L2, Cycle{10}, Cycle{50}, flushes);
  EXPECT_EQ(th.gatedUntil, Cycle{50});
  const LongLatencyHook llc(LongLatencyAction::Flush, LongLatencyMiss::Llc);
  llc.onLoad(th, 1, SeqNum{7}, 0x400000, MemLevel::LLC, Cycle{10}, Cycle{90}, flushes);
  EXPECT_EQ(th.gatedUntil, Cycle{50});
  EXPECT_TRUE(flushes.empty());
  llc.onLoad(th, 1, SeqNum{7}, 0x400000, MemLevel::Dram, Cycle{10}, Cycle{300}, flushes);
  EXPECT_EQ(th.gatedUntil, Cycle{300});
  ASSERT_EQ(flushes.size(), 1u);
  EXPECT_EQ(flushes[0], (std::pair<std::uint32_t, SeqNum>{1, SeqNum{7}}));
  // An earlier-returning miss never shortens a gate.
  l1.onLoad(th, 1, SeqNum{8}, 0x400000, MemLevel::L2, Cycle{10}, Cycle{120}, flushes);
  EXPECT_EQ(th.gatedUntil, Cycle{300});
}

TEST(LongLatencyHook, MlpFetchGatesAndFlushesFromThePredictedDistanceOn) {
  // The predictor learned distance 5 for the load at 0x400000 (window 8: misses at 0 and 5), none for 0x400004.
  MlpPredictor mlp(64, {8});
  for (std::uint64_t s = 0; s < 9; ++s) mlp.retired(0, SeqNum{s}, s == 0 ? 0x400000 : 0x500000 + s, s == 0 || s == 5);
  ASSERT_EQ(mlp.predict(0x400000), 5u);
  const LongLatencyHook hook(LongLatencyAction::MlpFlush, LongLatencyMiss::Llc, &mlp);
  ThreadContext th;
  std::vector<std::pair<std::uint32_t, SeqNum>> flushes;
  // A miss of the trained load at seq 20 at cycle 10: fetch may go on to 25, what lies beyond is squashed.
  hook.onLoad(th, 0, SeqNum{20}, 0x400000, MemLevel::Dram, Cycle{10}, Cycle{300}, flushes);
  EXPECT_EQ(th.gatedUntil, Cycle{300});
  EXPECT_EQ(th.gateAfter, SeqNum{25});
  ASSERT_EQ(flushes.size(), 1u);
  EXPECT_EQ(flushes[0], (std::pair<std::uint32_t, SeqNum>{0, SeqNum{25}}));
  // A second miss while the gate is open, of an untrained load at 22: the further limit (25) stays.
  hook.onLoad(th, 0, SeqNum{22}, 0x400004, MemLevel::Dram, Cycle{12}, Cycle{310}, flushes);
  EXPECT_EQ(th.gateAfter, SeqNum{25});
  EXPECT_EQ(th.gatedUntil, Cycle{310});
  // After the gate has closed a new miss sets its own limit, even a nearer one.
  hook.onLoad(th, 0, SeqNum{40}, 0x400004, MemLevel::Dram, Cycle{400}, Cycle{650}, flushes);
  EXPECT_EQ(th.gateAfter, SeqNum{40});
  EXPECT_EQ(flushes.back(), (std::pair<std::uint32_t, SeqNum>{0, SeqNum{40}}));
  // A load that hits does nothing.
  hook.onLoad(th, 0, SeqNum{41}, 0x400000, MemLevel::LLC, Cycle{401}, Cycle{441}, flushes);
  EXPECT_EQ(th.gateAfter, SeqNum{40});
  EXPECT_EQ(flushes.size(), 3u);
}

}  // namespace
}  // namespace smtlab::test
