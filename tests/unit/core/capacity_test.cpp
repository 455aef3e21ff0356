// SharedCapacity: the one class that implements replicated / partitioned / shared / capped sharing.
#include <gtest/gtest.h>

#include "smtlab/core/capacity.hpp"

namespace smtlab {
namespace {

QueueConfig queue(std::uint32_t entries, Sharing sharing, double cap = 1.0) { return QueueConfig{entries, sharing, cap}; }

TEST(Capacity, PartitionedSplitsEvenlyBetweenActiveThreads) {
  SharedCapacity q("rob", queue(126, Sharing::Partitioned), 2, true);
  EXPECT_EQ(q.limit(0), 63u);
  EXPECT_EQ(q.limit(1), 63u);
  for (int i = 0; i < 63; ++i) {
    ASSERT_EQ(q.check(0), CapacityVerdict::Ok);
    q.take(0);
  }
  EXPECT_EQ(q.check(0), CapacityVerdict::PartitionFull);  // own half used, structure still has room
  EXPECT_EQ(q.check(1), CapacityVerdict::Ok);
}

TEST(Capacity, PartitionedRecombinesWhenSiblingIdle) {
  SharedCapacity q("rob", queue(126, Sharing::Partitioned), 2, true);
  q.setActive(0b01);
  EXPECT_EQ(q.limit(0), 126u);
  q.setActive(0b11);
  EXPECT_EQ(q.limit(0), 63u);
}

TEST(Capacity, PartitionedStaysSplitWithoutRecombination) {
  SharedCapacity q("rob", queue(126, Sharing::Partitioned), 2, false);
  q.setActive(0b01);
  EXPECT_EQ(q.limit(0), 63u);
}

TEST(Capacity, SharedIsFirstComeFirstServed) {
  SharedCapacity q("iq", queue(10, Sharing::Shared), 2, true);
  q.take(0, 10);
  EXPECT_EQ(q.check(1), CapacityVerdict::StructureFull);
  EXPECT_EQ(q.check(0), CapacityVerdict::StructureFull);
  q.release(0, 1);
  EXPECT_EQ(q.check(1), CapacityVerdict::Ok);
}

TEST(Capacity, CappedLimitsOneThreadWhileTwoRun) {
  SharedCapacity q("iq", queue(48, Sharing::Capped, 0.75), 2, true);
  EXPECT_EQ(q.limit(0), 36u);
  q.take(0, 36);
  EXPECT_EQ(q.check(0), CapacityVerdict::PartitionFull);
  EXPECT_EQ(q.check(1), CapacityVerdict::Ok);
  q.setActive(0b01);
  EXPECT_EQ(q.limit(0), 48u);  // no cap when the thread runs alone
}

TEST(Capacity, ReplicatedGivesEachThreadItsOwn) {
  SharedCapacity q("ras", queue(16, Sharing::Replicated), 2, true);
  EXPECT_EQ(q.total(), 32u);
  q.take(0, 16);
  EXPECT_EQ(q.check(0), CapacityVerdict::PartitionFull);
  EXPECT_EQ(q.check(1, 16), CapacityVerdict::Ok);
}

TEST(Capacity, TakingPastTheShareIsCounted) {
  SharedCapacity q("rob", queue(4, Sharing::Partitioned), 2, true);
  q.take(0, 2);
  EXPECT_EQ(q.overTakes(), 0u);
  q.take(0);
  EXPECT_EQ(q.overTakes(), 1u);
}

}  // namespace
}  // namespace smtlab

namespace smtlab {
namespace {

// guaranteed(t): what thread t can always get while every other sharer holds its whole limit. Derived on paper:
// netburst's IQ (48 entries, capped at floor(48 x 0.75) = 36 per thread, 2 threads) leaves 48 - 36 = 12; a partitioned
// 48 gives each its half, 24; a shared 48 guarantees nothing beyond one entry (the sibling may hold all 48); with one
// active thread a recombining structure guarantees the whole of it.
TEST(Capacity, GuaranteedIsWhatRemainsWhenEveryOtherSharerHoldsItsLimit) {
  SharedCapacity capped("iq", queue(48, Sharing::Capped, 0.75), 2, true);
  EXPECT_EQ(capped.limit(0), 36u);
  EXPECT_EQ(capped.guaranteed(0), 12u);
  SharedCapacity partitioned("iq", queue(48, Sharing::Partitioned), 2, true);
  EXPECT_EQ(partitioned.guaranteed(1), 24u);
  SharedCapacity shared("iq", queue(48, Sharing::Shared), 2, true);
  EXPECT_EQ(shared.guaranteed(0), 1u);
  capped.setActive(0b01);
  EXPECT_EQ(capped.guaranteed(0), 48u);
  // And the guarantee holds: with the sibling at its limit, thread 0 can still take exactly its guaranteed entries.
  capped.setActive(0b11);
  capped.take(1, 36);
  EXPECT_EQ(capped.check(0, 12), CapacityVerdict::Ok);
  EXPECT_NE(capped.check(0, 13), CapacityVerdict::Ok);
}

}  // namespace
}  // namespace smtlab
