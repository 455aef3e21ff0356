// Physical register files and the stack engine at rename, with the uop queue filled by hand: how many
// writers a file lets in, how the sharing policy divides it between threads, which class a register takes, and what
// the stack engine does to the stack-pointer dependency. Expected values are counted on paper from the config.
#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/core/register_file.hpp"
#include "smtlab/core/rename_allocate.hpp"

namespace smtlab::test {
namespace {

constexpr int kSp = kStackPointerReg;

std::vector<Instr> intWriters(int n) {
  std::vector<Instr> v;
  for (int i = 0; i < n; ++i) v.push_back(instr(OpClass::Int, {1 + i % 3}, {}));
  return v;
}
Instr push(Addr addr) {
  Instr in = instr(OpClass::Store, {kSp}, {kSp, 1});
  in.stores[0] = MemRef{addr, 8};
  return in;
}
Instr pop(Addr addr, int dst) {
  Instr in = instr(OpClass::Load, {dst, kSp}, {kSp});
  in.loads[0] = MemRef{addr, 8};
  return in;
}

// Wide enough that only the register file limits rename.
Config wideStage(std::uint32_t threads) {
  Config c = stageConfig(threads);
  c.core.rename_width = 16;
  return c;
}

TEST(RegisterFile, RenamingEntriesAreTheFileMinusTheArchitecturalOnes) {
  // One thread, int_prf 17 + 5 = 22 entries with 17 architectural: 5 writers can be in flight. 10 queued writers:
  // rename takes 5 and then waits for a register (cause "regs"); nothing else is full.
  Config c = wideStage(1);
  c.core.int_prf = {22, Sharing::Shared, 1.0, 17};
  StageHarness h(c);
  h.attach(0, intWriters(10));
  h.queueUops(0, 10);
  RenameAllocate rename(c, h.threads, h.queues);
  EXPECT_TRUE(rename.tick(Cycle{1}, false));
  EXPECT_EQ(h.threads[0].robTail.value, 5u);
  EXPECT_EQ(h.queues.registers.intFile().used(0), 5u);
  EXPECT_EQ(h.queues.registers.intFile().total(), 5u);
  EXPECT_EQ(rename.blockCause(0), CpiCause::Regs);
  EXPECT_FALSE(rename.tick(Cycle{2}, false));
  // Retiring a writer frees one entry (its register's previous mapping): exactly one more writer renames.
  h.queues.registers.release(0, RegNeed{1, 0});
  EXPECT_TRUE(rename.tick(Cycle{3}, false));
  EXPECT_EQ(h.threads[0].robTail.value, 6u);
  EXPECT_EQ(rename.blockCause(0), CpiCause::Regs);
}

TEST(RegisterFile, InstructionsWithoutADestinationNeedNoRegister) {
  // The file is full after 2 writers; a store (no destination) behind them is not held by it, but it renames only in
  // order, so it waits behind the blocked writer: 2 renamed. With the store first, it renames and then 2 writers.
  Config c = wideStage(1);
  c.core.int_prf = {19, Sharing::Shared, 1.0, 17};
  {
    StageHarness h(c);
    std::vector<Instr> v = intWriters(3);
    v.push_back(storeTo(0x1000, 1));
    h.attach(0, v);
    h.queueUops(0, 4);
    RenameAllocate rename(c, h.threads, h.queues);
    rename.tick(Cycle{1}, false);
    EXPECT_EQ(h.threads[0].robTail.value, 2u);
  }
  {
    StageHarness h(c);
    std::vector<Instr> v{storeTo(0x1000, 1)};
    for (const Instr& in : intWriters(3)) v.push_back(in);
    h.attach(0, v);
    h.queueUops(0, 4);
    RenameAllocate rename(c, h.threads, h.queues);
    rename.tick(Cycle{1}, false);
    EXPECT_EQ(h.threads[0].robTail.value, 3u);
  }
}

TEST(RegisterFile, EachDestinationTakesAnEntryOfItsOwnClass) {
  // int file: 1 renaming entry; fp file: 3. An FP writer (f2) and an instruction writing r1 and f3 (both classes)
  // take fp entries; once the int file is used up, an int writer waits, and the cause is "regs".
  Config c = wideStage(1);
  c.core.int_prf = {18, Sharing::Shared, 1.0, 17};
  c.core.fp_prf = {27, Sharing::Shared, 1.0, 24};
  StageHarness h(c);
  h.attach(0, {instr(OpClass::FAdd, {fpReg(2)}, {}), instr(OpClass::FMul, {1, fpReg(3)}, {}),
               instr(OpClass::FAdd, {fpReg(4)}, {}), instr(OpClass::Int, {2}, {}),
               instr(OpClass::FAdd, {fpReg(5)}, {})});
  h.queueUops(0, 5);
  RenameAllocate rename(c, h.threads, h.queues);
  rename.tick(Cycle{1}, false);
  EXPECT_EQ(h.threads[0].robTail.value, 3u);
  EXPECT_EQ(h.queues.registers.intFile().used(0), 1u);
  EXPECT_EQ(h.queues.registers.fpFile().used(0), 3u);
  EXPECT_EQ(rename.blockCause(0), CpiCause::Regs);
}

TEST(RegisterFile, SharedFileGoesToWhoeverAsksFirstPartitionedHalvesIt) {
  // Two threads, 2 x 17 architectural + 8 renaming entries, 10 writers queued on each; round-robin gives thread 1 the
  // first turn (stage_test_util). Shared: thread 1 takes all 8, thread 0 none. Partitioned: 4 each.
  // Capped at 0.25: 2 each (floor(8 x 0.25)).
  struct Case {
    Sharing sharing;
    double cap;
    std::uint32_t thread0, thread1;
  };
  for (const Case& k : {Case{Sharing::Shared, 1.0, 0, 8}, Case{Sharing::Partitioned, 1.0, 4, 4},
                        Case{Sharing::Capped, 0.25, 2, 2}}) {
    Config c = wideStage(2);
    c.core.int_prf = {42, k.sharing, k.cap, 17};
    StageHarness h(c);
    h.attach(0, intWriters(10));
    h.attach(1, intWriters(10));
    h.queueUops(0, 10);
    h.queueUops(1, 10);
    RenameAllocate rename(c, h.threads, h.queues);
    for (std::uint64_t cycle = 1; cycle <= 4; ++cycle) {
      rename.tick(Cycle{cycle}, false);
      rename.clearDispatched();
    }
    EXPECT_EQ(h.threads[0].robTail.value, k.thread0) << sharingName(k.sharing);
    EXPECT_EQ(h.threads[1].robTail.value, k.thread1) << sharingName(k.sharing);
    EXPECT_EQ(rename.blockCause(0), CpiCause::Regs) << sharingName(k.sharing);
  }
}

TEST(RegisterFile, AFileSmallerThanTheArchitecturalStateIsRefused) {
  Config c = wideStage(2);
  c.core.int_prf = {34, Sharing::Shared, 1.0, 17};  // 2 x 17 = 34: nothing left to rename with
  EXPECT_THROW(RegisterFiles{c}, ConfigError);
}

TEST(StackEngine, StackUpdatesDoNotChainThroughTheStackPointer) {
  // Three pushes and a pop. Without the stack engine each reads the stack pointer the one before wrote: the second,
  // third and fourth wait for a producer (pendingSrcs 1 from it) and the map points at the pop. With it, none waits
  // (the decoder's offset gives the address), the stack pointer is never remapped and takes no register: the int
  // file holds only the pop's r2.
  for (bool engine : {false, true}) {
    Config c = wideStage(1);
    c.core.stack_engine = engine;
    c.core.int_prf = {17 + 8, Sharing::Shared, 1.0, 17};
    StageHarness h(c);
    h.attach(0, {push(0x7000), push(0x6ff8), push(0x6ff0), pop(0x6ff0, 2)});
    h.queueUops(0, 4);
    RenameAllocate rename(c, h.threads, h.queues);
    rename.tick(Cycle{1}, false);
    const ThreadContext& th = h.threads[0];
    ASSERT_EQ(th.robTail.value, 4u);
    for (std::uint64_t seq = 1; seq < 4; ++seq) {
      EXPECT_EQ(th.rob[seq].pendingSrcs, engine ? 0 : 1) << "engine " << engine << " #" << seq;
    }
    EXPECT_EQ(th.renameMap[kSp], engine ? kNoProducer : SeqNum{3});  // the pop, #3
    EXPECT_EQ(h.queues.registers.intFile().used(0), engine ? 1u : 5u);
    EXPECT_EQ(th.stackDelta, engine);
  }
}

TEST(StackEngine, AnExplicitStackPointerReadAfterStackUpdatesWaitsOneCycleForTheSync) {
  // push; mov r0, [rsp+8] (a load reading r4); mov r3, [rsp+16]. With the engine the first explicit read after the
  // push gets a sync uop: operands ready at rename + 1 + 1 = cycle 3 instead of 2. The sync zeroes the offset, so the
  // second read needs none (ready at 2). Without the engine the first read waits for the push (a producer in flight).
  for (bool engine : {false, true}) {
    Config c = wideStage(1);
    c.core.stack_engine = engine;
    StageHarness h(c);
    Instr read1 = instr(OpClass::Load, {0}, {kSp});
    read1.loads[0] = MemRef{0x7008, 8};
    Instr read2 = instr(OpClass::Load, {3}, {kSp});
    read2.loads[0] = MemRef{0x7010, 8};
    h.attach(0, {push(0x7000), read1, read2});
    h.queueUops(0, 3);
    RenameAllocate rename(c, h.threads, h.queues);
    rename.tick(Cycle{1}, false);
    const ThreadContext& th = h.threads[0];
    if (engine) {
      EXPECT_EQ(th.rob[1].pendingSrcs, 0);
      EXPECT_EQ(th.rob[1].readyAt, Cycle{3});
      EXPECT_EQ(th.rob[2].readyAt, Cycle{2});
      EXPECT_FALSE(th.stackDelta);
    } else {
      EXPECT_EQ(th.rob[1].pendingSrcs, 1);
      EXPECT_EQ(th.rob[2].pendingSrcs, 1);
    }
  }
}

TEST(StackEngine, OnlyStackAccessesThatMoveTheStackPointerAreStackUpdates) {
  EXPECT_TRUE(isStackUpdate(push(0x7000)));
  EXPECT_TRUE(isStackUpdate(pop(0x7000, 1)));
  EXPECT_TRUE(isStackUpdate(instr(OpClass::Call, {kSp}, {kSp})));
  EXPECT_TRUE(isStackUpdate(instr(OpClass::Return, {kSp}, {kSp})));
  EXPECT_FALSE(isStackUpdate(instr(OpClass::Int, {kSp}, {kSp})));  // add rsp, 8: explicit, no memory access
  Instr frameLoad = instr(OpClass::Load, {1}, {kSp});                 // mov rax, [rsp+8]
  frameLoad.loads[0] = MemRef{0x7008, 8};
  EXPECT_FALSE(isStackUpdate(frameLoad));
  EXPECT_FALSE(isStackUpdate(instr(OpClass::Call, {}, {})));  // a call the trace gives no stack pointer
}

}  // namespace
}  // namespace smtlab::test
