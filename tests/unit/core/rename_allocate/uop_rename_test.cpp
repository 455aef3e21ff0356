// RenameAllocate counts uops: rename_width is in fused-domain uops, an instruction takes one
// ROB entry per fused-domain uop, micro-fusion halves the entries of load-op and store code, and a microcode sequence
// longer than the thread's share claims only what the thread is guaranteed. Expected values are counted on paper.
#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/core/rename_allocate.hpp"

namespace smtlab::test {
namespace {

// Unfused: store = STA + STD (2 uops); load-op = load + op (2); read-modify-write = load + op + STA + STD (4).
Instr loadOp(Addr addr) {
  Instr in = instr(OpClass::Int, {2}, {3});
  in.loads[0] = MemRef{addr, 8};
  return in;
}
Instr rmw(Addr addr) {
  Instr in = loadOp(addr);
  in.stores[0] = MemRef{addr, 8};
  return in;
}

TEST(UopRename, TheWidthCountsUopsAndAnInstructionMayStraddleTwoCycles) {
  // rename_width 3, 2-uop stores. Cycle 1: store 0 (2 uops), store 1 starts (1 of 2). Cycle 2: store 1's last uop,
  // store 2 (2). Cycle 3: store 3, store 4 starts. Cycle 4: its last uop, store 5. 6 stores in 4 cycles = 1.5 per
  // cycle = 3 uops / 2 uops each. The ROB holds 2 entries per store.
  Config c = stageConfig(1);
  c.core.rename_width = 3;
  StageHarness h(c);
  h.attach(0, stores(10));
  h.queueUops(0, 10);
  RenameAllocate rename(c, h.threads, h.queues);
  const std::vector<std::uint64_t> tail = {2, 3, 5, 6};
  for (std::uint64_t cycle = 1; cycle <= 4; ++cycle) {
    EXPECT_TRUE(rename.tick(Cycle{cycle}, false));
    EXPECT_EQ(h.threads[0].robTail.value, tail[cycle - 1]) << "cycle " << cycle;
    rename.clearDispatched();
  }
  EXPECT_EQ(h.queues[QueueKind::Rob].used(0), 12u);
  EXPECT_EQ(h.queues[QueueKind::Iq].used(0), 12u);
}

TEST(UopRename, WithMicroFusionAStoreIsOneSlotOfTheWidthAndOfTheRob) {
  // Fused STA + STD: 3 stores per cycle at width 3, one ROB entry each; the scheduler still gets 2 uops each.
  Config c = stageConfig(1);
  c.core.rename_width = 3;
  c.core.micro_fusion = true;
  StageHarness h(c);
  h.attach(0, stores(10));
  h.queueUops(0, 10);
  RenameAllocate rename(c, h.threads, h.queues);
  const std::vector<std::uint64_t> tail = {3, 6, 9, 10};
  for (std::uint64_t cycle = 1; cycle <= 4; ++cycle) {
    EXPECT_TRUE(rename.tick(Cycle{cycle}, false));
    EXPECT_EQ(h.threads[0].robTail.value, tail[cycle - 1]) << "cycle " << cycle;
    rename.clearDispatched();
  }
  EXPECT_EQ(h.queues[QueueKind::Rob].used(0), 10u);
  EXPECT_EQ(h.queues[QueueKind::Iq].used(0), 20u);
}

TEST(UopRename, MicroFusionHalvesTheRobEntriesOfLoadOpCode) {
  for (const bool fusion : {false, true}) {
    Config c = stageConfig(1);
    c.core.rename_width = 32;
    c.core.micro_fusion = fusion;
    StageHarness h(c);
    std::vector<Instr> trace;
    for (int i = 0; i < 8; ++i) trace.push_back(loadOp(0x2000 + 64 * static_cast<Addr>(i)));
    h.attach(0, trace);
    h.queueUops(0, 8);
    RenameAllocate rename(c, h.threads, h.queues);
    EXPECT_TRUE(rename.tick(Cycle{1}, false));
    EXPECT_EQ(h.threads[0].robTail.value, 8u) << fusion;
    EXPECT_EQ(h.queues[QueueKind::Rob].used(0), fusion ? 8u : 16u) << "load + op: 2 entries, fused 1";
    EXPECT_EQ(h.queues[QueueKind::Iq].used(0), 16u) << "issue is unfused either way";
  }
}

TEST(UopRename, ARobPartitionOfNEntriesHoldsNOverFourReadModifyWrites) {
  // A partitioned ROB of 32 gives each of two threads 16 entries: 16 / 4 = 4 read-modify-writes, then RobPartition.
  // Fused (2 entries each): 8.
  for (const bool fusion : {false, true}) {
    Config c = stageConfig(2);
    c.core.rename_width = 64;
    c.core.micro_fusion = fusion;
    c.core.rob = {32, Sharing::Partitioned, 1.0};
    c.core.iq.entries = 128;
    StageHarness h(c);
    std::vector<Instr> trace;
    for (int i = 0; i < 12; ++i) trace.push_back(rmw(0x3000 + 64 * static_cast<Addr>(i)));
    h.attach(0, trace);
    h.queueUops(0, 12);
    RenameAllocate rename(c, h.threads, h.queues);
    EXPECT_TRUE(rename.tick(Cycle{1}, false));
    EXPECT_EQ(h.threads[0].robTail.value, fusion ? 8u : 4u) << fusion;
    EXPECT_EQ(h.queues[QueueKind::Rob].used(0), 16u) << fusion;
    EXPECT_EQ(rename.blockCause(0), CpiCause::RobPartition) << fusion;
  }
}

TEST(UopRename, AMicrocodeSequenceLongerThanTheShareClaimsWhatTheThreadIsGuaranteed) {
  // A 20-uop microcoded instruction, ROB partition 8: it takes the 8 entries (the sequence streams through; a claim
  // of 20 could never be met and would stall the thread for ever), and its 20 uops take rename for 7 turns at width
  // 3 (ceil(20 / 3)); in the 7th the slot left over would take the next instruction, but the partition is full.
  Config c = stageConfig(1);
  c.core.rename_width = 3;
  c.core.rob = {8, Sharing::Partitioned, 1.0};
  c.core.iq.entries = 64;
  StageHarness h(c);
  Instr div = instr(OpClass::Int, {2}, {3});
  div.uops = 20;
  div.microcoded = true;
  h.attach(0, {div, instr(OpClass::Int, {4}, {})});
  h.queueUops(0, 2);
  RenameAllocate rename(c, h.threads, h.queues);
  EXPECT_TRUE(rename.tick(Cycle{1}, false));
  EXPECT_EQ(h.threads[0].robTail.value, 1u);
  EXPECT_EQ(h.queues[QueueKind::Rob].used(0), 8u);
  EXPECT_EQ(h.threads[0].rob[0].robHeld, 8u);
  rename.clearDispatched();
  for (std::uint64_t cycle = 2; cycle <= 6; ++cycle) {
    EXPECT_TRUE(rename.tick(Cycle{cycle}, false)) << "the sequence's uops still pass rename, cycle " << cycle;
    EXPECT_EQ(h.threads[0].robTail.value, 1u) << cycle;
    rename.clearDispatched();
  }
  // Cycle 7: the sequence's last 2 uops and then the next instruction, which finds the partition full (8 of 8).
  EXPECT_TRUE(rename.tick(Cycle{7}, false));
  EXPECT_EQ(h.threads[0].robTail.value, 1u);
  // A lone thread's partition is the whole ROB, so the verdict is a full structure.
  EXPECT_EQ(rename.blockCause(0), CpiCause::RobFull);
  EXPECT_FALSE(rename.tick(Cycle{8}, false));
}

}  // namespace
}  // namespace smtlab::test
