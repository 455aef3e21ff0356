// RetireUnit counts uops: retire_width is in fused-domain uops, and retirement is
// uop-granular (an instruction whose uops do not fit in what is left of the cycle retires over two cycles; it counts
// as retired when its last uop does). Expected values are counted on paper.
#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/core/rename_allocate.hpp"
#include "smtlab/core/retire_unit.hpp"

namespace smtlab::test {
namespace {

struct UopRetireBench {
  StageHarness h;
  StubLoadStore lsu{4};
  std::vector<CoreEvent> events;
  RenameAllocate rename;
  RetireUnit retire;
  explicit UopRetireBench(Config c)
      : h(wide(c)), rename(h.config, h.threads, h.queues), retire(h.config, h.threads, h.queues, lsu, events) {}
  static Config wide(Config c) {
    c.core.rename_width = 64;
    c.core.iq.entries = 64;
    return c;
  }
  // Renames all of thread 0's trace, every instruction done at cycle 1.
  void renameAll(std::vector<Instr> trace) {
    const auto n = static_cast<std::uint32_t>(trace.size());
    h.attach(0, std::move(trace));
    h.queueUops(0, n);
    while (rename.tick(Cycle{0}, false)) rename.clearDispatched();
    ASSERT_EQ(h.threads[0].robTail.value, n);
    for (std::uint32_t s = 0; s < n; ++s) {
      Uop& u = h.threads[0].rob[s];
      u.issued = true;
      u.doneAt = Cycle{1};
    }
  }
  std::uint64_t retired() const { return h.threads[0].stats.instructions; }
  std::uint32_t robUsed() const { return h.queues[QueueKind::Rob].used(0); }
};

TEST(UopRetire, TheWidthCountsUopsAndAStoreMayRetireOverTwoCycles) {
  // 4 stores of 2 uops (8 ROB entries), width 3. Cycle 1: store 0, 1 uop of store 1 (3 entries freed, 1 retired).
  // Cycle 2: store 1's last uop, store 2 (3 retired, 2 entries left). Cycle 3: store 3.
  Config c = stageConfig(1);
  c.core.retire_width = 3;
  UopRetireBench b(c);
  b.renameAll(stores(4));
  ASSERT_EQ(b.robUsed(), 8u);
  const std::vector<std::pair<std::uint64_t, std::uint32_t>> expected = {{1, 5}, {3, 2}, {4, 0}};
  for (std::uint64_t cycle = 1; cycle <= 3; ++cycle) {
    EXPECT_TRUE(b.retire.tick(Cycle{cycle}));
    EXPECT_EQ(b.retired(), expected[cycle - 1].first) << "cycle " << cycle;
    EXPECT_EQ(b.robUsed(), expected[cycle - 1].second) << "cycle " << cycle;
  }
  EXPECT_EQ(b.lsu.retired.size(), 4u) << "each store reaches the load/store unit once, when its last uop retires";
  EXPECT_FALSE(b.retire.tick(Cycle{4}));
}

TEST(UopRetire, AReadModifyWriteWiderThanTheWidthStillRetires) {
  // load + op + STA + STD = 4 uops > width 3: 3 uops in cycle 1 (not yet retired), the last in cycle 2.
  Config c = stageConfig(1);
  c.core.retire_width = 3;
  UopRetireBench b(c);
  Instr rmw = instr(OpClass::Int, {2}, {3});
  rmw.loads[0] = MemRef{0x5000, 8};
  rmw.stores[0] = MemRef{0x5000, 8};
  b.renameAll({rmw, rmw});
  ASSERT_EQ(b.robUsed(), 8u);
  EXPECT_TRUE(b.retire.tick(Cycle{1}));
  EXPECT_EQ(b.retired(), 0u);
  EXPECT_EQ(b.robUsed(), 5u);
  EXPECT_TRUE(b.retire.tick(Cycle{2}));  // 1 + 2 of the second
  EXPECT_EQ(b.retired(), 1u);
  EXPECT_EQ(b.robUsed(), 2u);
  EXPECT_TRUE(b.retire.tick(Cycle{3}));
  EXPECT_EQ(b.retired(), 2u);
  EXPECT_EQ(b.robUsed(), 0u);
}

TEST(UopRetire, WithMicroFusionAStoreIsOneSlotOfTheWidth) {
  // Fused STA + STD: 3 stores per cycle at width 3.
  Config c = stageConfig(1);
  c.core.retire_width = 3;
  c.core.micro_fusion = true;
  UopRetireBench b(c);
  b.renameAll(stores(7));
  ASSERT_EQ(b.robUsed(), 7u);
  const std::vector<std::uint64_t> expected = {3, 6, 7};
  for (std::uint64_t cycle = 1; cycle <= 3; ++cycle) {
    EXPECT_TRUE(b.retire.tick(Cycle{cycle}));
    EXPECT_EQ(b.retired(), expected[cycle - 1]) << "cycle " << cycle;
  }
  EXPECT_EQ(b.robUsed(), 0u);
}

}  // namespace
}  // namespace smtlab::test
