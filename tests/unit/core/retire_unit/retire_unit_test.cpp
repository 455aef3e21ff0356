// RetireUnit with a stub load/store unit: program order, retire width, alternation between threads, marks and retire
// limits as events, memory instructions handed to the load/store unit.
#include "smtlab/core/retire_unit.hpp"

#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/core/rename_allocate.hpp"

namespace smtlab::test {
namespace {

struct RetireBench {
  StageHarness h;
  StubLoadStore lsu{4};
  std::vector<CoreEvent> events;
  RenameAllocate rename;
  RetireUnit retire;
  explicit RetireBench(Config c) : h(wide(c)), rename(h.config, h.threads, h.queues), retire(h.config, h.threads, h.queues, lsu, events) {}
  static Config wide(Config c) {
    c.core.rename_width = 32;
    return c;
  }
  // Renames all of thread t's trace and marks instruction s done at doneAt[s].
  void renameAll(std::uint32_t t, std::vector<Instr> trace, const std::vector<std::uint64_t>& doneAt) {
    const auto n = static_cast<std::uint32_t>(trace.size());
    h.attach(t, std::move(trace));
    h.queueUops(t, n);
    while (rename.tick(Cycle{0}, false)) rename.clearDispatched();
    for (std::uint32_t s = 0; s < n; ++s) {
      Uop& u = h.threads[t].rob[s];
      u.issued = true;
      u.doneAt = Cycle{doneAt[s]};
    }
  }
  std::uint64_t retired(std::uint32_t t) { return h.threads[t].stats.instructions; }
};

std::vector<Instr> ints(int n) { return std::vector<Instr>(static_cast<std::size_t>(n), instr(OpClass::Int, {1})); }

TEST(RetireUnit, RetiresInOrderUpToItsWidth) {
  // retire_width 4; instruction 2 finishes late (cycle 9): cycle 5 retires 0-1 and stops at 2, cycle 9 retires 2-5
  // (width 4), cycle 10 retires 6.
  Config c = stageConfig(1);
  c.core.retire_width = 4;
  RetireBench b(c);
  b.renameAll(0, ints(7), {5, 5, 9, 5, 5, 5, 5});
  EXPECT_TRUE(b.retire.tick(Cycle{5}));
  EXPECT_EQ(b.retired(0), 2u);
  EXPECT_FALSE(b.retire.tick(Cycle{6}));
  EXPECT_TRUE(b.retire.tick(Cycle{9}));
  EXPECT_EQ(b.retired(0), 6u);
  EXPECT_TRUE(b.retire.tick(Cycle{10}));
  EXPECT_EQ(b.retired(0), 7u);
  EXPECT_EQ(b.h.queues[QueueKind::Rob].used(0), 0u);
}

TEST(RetireUnit, ThreadsAlternateAndAThreadWithNothingDoneYields) {
  // Both threads have 8 done instructions, width 4: thread 1 (first turn), then 0, 1, 0. Then thread 0 has nothing,
  // thread 1 retires its next (done later) in consecutive cycles.
  Config c = stageConfig(2);
  c.core.retire_width = 4;
  RetireBench b(c);
  b.renameAll(0, ints(8), std::vector<std::uint64_t>(8, 1));
  b.renameAll(1, ints(12), {1, 1, 1, 1, 1, 1, 1, 1, 20, 20, 20, 20});
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected = {{0, 4}, {4, 4}, {4, 8}, {8, 8}};
  for (std::uint64_t cycle = 1; cycle <= 4; ++cycle) {
    b.retire.tick(Cycle{cycle});
    EXPECT_EQ(b.retired(0), expected[cycle - 1].first) << cycle;
    EXPECT_EQ(b.retired(1), expected[cycle - 1].second) << cycle;
  }
  EXPECT_FALSE(b.retire.tick(Cycle{19}));
  EXPECT_TRUE(b.retire.tick(Cycle{20}));
  EXPECT_EQ(b.retired(1), 12u);
}

TEST(RetireUnit, AMarkStopsItsThreadsRetirementForTheCycleAndIsReported) {
  Config c = stageConfig(1);
  RetireBench b(c);
  Instr mark = instr(OpClass::Mark);
  mark.markId = 42;
  b.renameAll(0, {instr(OpClass::Int, {1}), mark, instr(OpClass::Int, {2})}, {3, 3, 3});
  b.retire.tick(Cycle{3});
  EXPECT_EQ(b.retired(0), 2u);  // the int and the mark; the int after it waits for the next cycle
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.events[0].kind, CoreEventKind::Mark);
  EXPECT_EQ(b.events[0].markId, 42u);
  EXPECT_EQ(b.events[0].cycle, Cycle{3});
}

TEST(RetireUnit, RetirementStopsAtTheRetireLimitWithOneEvent) {
  Config c = stageConfig(1);
  RetireBench b(c);
  b.renameAll(0, ints(6), std::vector<std::uint64_t>(6, 1));
  b.h.threads[0].retireLimit = 3;
  b.retire.tick(Cycle{1});
  b.retire.tick(Cycle{2});
  EXPECT_EQ(b.retired(0), 3u);
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.events[0].kind, CoreEventKind::RetireLimit);
}

TEST(RetireUnit, MemoryInstructionsGoToTheLoadStoreUnitAndAreCounted) {
  Config c = stageConfig(1);
  RetireBench b(c);
  b.renameAll(0, {loadOf(0x1000, 1), instr(OpClass::Int, {2}), storeTo(0x2000, 2)}, {1, 1, 1});
  b.retire.tick(Cycle{1});
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> expected = {{0, 0}, {0, 2}};
  EXPECT_EQ(b.lsu.retired, expected);
  EXPECT_EQ(b.h.threads[0].stats.loads, 1u);
  EXPECT_EQ(b.h.threads[0].stats.stores, 1u);
}

}  // namespace
}  // namespace smtlab::test
