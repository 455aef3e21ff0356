// RenameAllocate with the uop queue filled by hand and no scheduler: which thread renames, how many, what blocks it,
// and which renamed instructions are dispatched with known operands.
#include "smtlab/core/rename_allocate.hpp"

#include <gtest/gtest.h>

#include "../stage_test_util.hpp"

namespace smtlab::test {
namespace {

std::vector<Instr> independentInts(int n) {
  std::vector<Instr> v;
  for (int i = 0; i < n; ++i) v.push_back(instr(OpClass::Int, {1 + i % 8}, {}));
  return v;
}

TEST(RenameAllocate, RenamesUpToItsWidthFromOneThreadPerCycleAndAlternates) {
  // rename_width 3, both threads have 10 in the uop queue. The turn starts after thread 0, so thread 1 goes first;
  // then they alternate: 1, 0, 1, 0 with 3 each.
  Config c = stageConfig(2);
  c.core.rename_width = 3;
  StageHarness h(c);
  h.attach(0, independentInts(10));
  h.attach(1, independentInts(10));
  h.queueUops(0, 10);
  h.queueUops(1, 10);
  RenameAllocate rename(c, h.threads, h.queues);
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected = {{0, 3}, {3, 3}, {3, 6}, {6, 6}};
  for (std::uint64_t cycle = 1; cycle <= 4; ++cycle) {
    EXPECT_TRUE(rename.tick(Cycle{cycle}, false));
    EXPECT_EQ(h.threads[0].robTail.value, expected[cycle - 1].first) << "cycle " << cycle;
    EXPECT_EQ(h.threads[1].robTail.value, expected[cycle - 1].second) << "cycle " << cycle;
    rename.clearDispatched();
  }
  EXPECT_EQ(rename.renamed(), 12u);
  EXPECT_EQ(h.queues[QueueKind::Rob].used(0), 6u);
  EXPECT_EQ(h.queues[QueueKind::UopQueue].used(1), 4u);  // 10 queued, 6 renamed
}

TEST(RenameAllocate, AFullPartitionBlocksItsThreadAndTheSiblingRenames) {
  // A partitioned ROB of 8 gives each of two threads 4. Thread 1 (first turn) takes 4 of its 6 and is then blocked
  // by its partition; thread 0 still renames.
  Config c = stageConfig(2);
  c.core.rename_width = 8;
  c.core.rob = {8, Sharing::Partitioned, 1.0};
  StageHarness h(c);
  h.attach(0, independentInts(6));
  h.attach(1, independentInts(6));
  h.queueUops(0, 6);
  h.queueUops(1, 6);
  RenameAllocate rename(c, h.threads, h.queues);
  EXPECT_TRUE(rename.tick(Cycle{1}, false));
  EXPECT_EQ(h.threads[1].robTail.value, 4u);
  EXPECT_EQ(rename.blockCause(1), CpiCause::RobPartition);
  EXPECT_TRUE(rename.tick(Cycle{2}, false));
  EXPECT_EQ(h.threads[0].robTail.value, 4u);
  EXPECT_FALSE(rename.tick(Cycle{3}, false));  // both partitions full
  EXPECT_EQ(rename.blockCause(0), CpiCause::RobPartition);
}

TEST(RenameAllocate, ASharedQueueFullIsTheStructureAndLoadsNeedALoadQueueEntry) {
  // A shared load queue of 2: the third load waits with LqFull; an int behind it waits too (in order).
  Config c = stageConfig(1);
  c.core.lq = {2, Sharing::Shared, 1.0};
  StageHarness h(c);
  h.attach(0, {loadOf(0x1000, 1), loadOf(0x2000, 2), loadOf(0x3000, 3), instr(OpClass::Int, {4})});
  h.queueUops(0, 4);
  RenameAllocate rename(c, h.threads, h.queues);
  rename.tick(Cycle{1}, false);
  EXPECT_EQ(h.threads[0].robTail.value, 2u);
  EXPECT_EQ(rename.blockCause(0), CpiCause::LqFull);
  EXPECT_EQ(h.queues[QueueKind::Lq].used(0), 2u);
}

TEST(RenameAllocate, OnlyInstructionsWithKnownOperandsAreDispatched) {
  // A writes r1; B reads r1 (waits for A, not dispatched); C reads r2 (no producer in flight: ready next cycle).
  Config c = stageConfig(1);
  StageHarness h(c);
  h.attach(0, {instr(OpClass::IMul, {1}, {5}), instr(OpClass::Int, {3}, {1}), instr(OpClass::Int, {4}, {2})});
  h.queueUops(0, 3);
  RenameAllocate rename(c, h.threads, h.queues);
  rename.tick(Cycle{7}, false);
  ASSERT_EQ(rename.dispatched().size(), 2u);
  EXPECT_EQ(rename.dispatched()[0].uop, UopRef::real(SeqNum{0}));
  EXPECT_EQ(rename.dispatched()[1].uop, UopRef::real(SeqNum{2}));
  EXPECT_EQ(rename.dispatched()[1].readyAt, Cycle{8});
  EXPECT_EQ(h.threads[0].rob[1].pendingSrcs, 1);
  EXPECT_EQ(h.threads[0].rob[0].depHead / kMaxSrcRegs, 1u);  // A's consumer list holds B
}

TEST(RenameAllocate, NothingIsRenamedWhileTheCoreDrains) {
  Config c = stageConfig(1);
  StageHarness h(c);
  h.attach(0, independentInts(4));
  h.queueUops(0, 4);
  RenameAllocate rename(c, h.threads, h.queues);
  EXPECT_FALSE(rename.tick(Cycle{1}, true));
  EXPECT_EQ(h.threads[0].robTail.value, 0u);
  EXPECT_TRUE(rename.tick(Cycle{2}, false));
  EXPECT_EQ(h.threads[0].robTail.value, 4u);
}

}  // namespace
}  // namespace smtlab::test
