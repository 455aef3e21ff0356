// Per-task kernel stacks of recorded kernel paths (kernel_stack.hpp): which accesses move, and where, worked out by
// hand from Linux's layout (16 KiB stacks in the vmalloc area).
#include "smtlab/tracer/kernel_stack.hpp"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "smtlab/common/error.hpp"
#include "smtlab/tracer/kpath.hpp"
#include "smtlab/tracer/kpath_instance.hpp"

namespace smtlab {
namespace {

constexpr Addr kStackTop = 0xffff'c900'0001'3ff8ULL;   // a task stack: block 0xffffc90000010000..13fff
constexpr Addr kSameStack = 0xffff'c900'0001'2000ULL;  // deeper in the same 16 KiB block
constexpr Addr kOtherVmalloc = 0xffff'c900'0002'0000ULL;  // the next block: vmalloc data, no call pushes there
constexpr Addr kDirectMap = 0xffff'8880'0000'1000ULL;     // a task_struct in the direct map
constexpr Addr kEntryStack = 0xffff'fe00'0000'1ff8ULL;    // cpu_entry_area: per-CPU, not per-task
constexpr Addr kUserStack = 0x0000'7ffd'0000'0ff8ULL;

Instr call(Addr pc, Addr pushedAt) {
  Instr in;
  in.pc = pc;
  in.op = OpClass::Call;
  in.branch = BranchKind::DirectCall;
  in.taken = true;
  in.target = pc + 0x100;
  in.stores[0] = MemRef{pushedAt, 8};
  return in;
}

Instr load(Addr pc, Addr addr) {
  Instr in;
  in.pc = pc;
  in.op = OpClass::Load;
  in.loads[0] = MemRef{addr, 8};
  return in;
}

std::vector<Instr> instance() {
  return {call(0xffff'ffff'8100'0000ULL, kStackTop),     // kernel call: its block is a stack
          load(0xffff'ffff'8100'0100ULL, kSameStack),    // moves with it
          load(0xffff'ffff'8100'0104ULL, kOtherVmalloc), // stays
          load(0xffff'ffff'8100'0108ULL, kDirectMap),    // stays
          call(0xffff'ffff'8100'0200ULL, kEntryStack),   // a call on the entry stack: not in vmalloc, stays
          call(0x0000'5555'5555'0000ULL, kUserStack)};   // a user call: the user stack is the asid's business
}

TEST(KernelStack, SlotZeroLeavesTheRecording) {
  auto r = instance();
  EXPECT_EQ(relocateKernelStacks(r, 0), 0u);
  EXPECT_EQ(r, instance());
}

TEST(KernelStack, MovesOnlyTheBlocksACallPushesInto) {
  auto r = instance();
  EXPECT_EQ(relocateKernelStacks(r, 3), 2u);  // the call's push and the load in the same block
  const Addr shift = 3 * (Addr{1} << 32) + kernelStackPosition(3) * kKernelStackBytes;
  EXPECT_EQ(r[0].stores[0].addr, kStackTop + shift);
  EXPECT_EQ(r[1].loads[0].addr, kSameStack + shift);
  EXPECT_EQ(r[2].loads[0].addr, kOtherVmalloc);
  EXPECT_EQ(r[3].loads[0].addr, kDirectMap);
  EXPECT_EQ(r[4].stores[0].addr, kEntryStack);
  EXPECT_EQ(r[5].stores[0].addr, kUserStack);
  EXPECT_EQ(r[0].pc, instance()[0].pc);  // code does not move
}

TEST(KernelStack, TwoTasksStacksAreDifferentLinesInsideTheVmallocArea) {
  auto a = instance();
  auto b = instance();
  relocateKernelStacks(a, 1);
  relocateKernelStacks(b, 2);
  EXPECT_NE(a[0].stores[0].addr >> 6, b[0].stores[0].addr >> 6);
  auto last = instance();
  relocateKernelStacks(last, kMaxKernelStackSlot);
  EXPECT_LT(last[0].stores[0].addr, kVmallocEnd);  // 0xffffc9.. + 4096 x 4 GiB = 0xffffd9..
  EXPECT_GE(last[0].stores[0].addr, kVmallocStart);
}

TEST(KernelStack, SourcesOverOneSharedInstanceEachReadTheirOwnStack) {
  auto shared = std::make_shared<const KpathInstanceRecords>(instance());
  ASSERT_EQ(shared->stackBlocks, std::vector<Addr>{0xffff'c900'0001'0000ULL});  // only the task stack's block
  EXPECT_TRUE(shared->pageCachePages.empty());  // no copy between user and kernel memory
  KpathInstanceSource one(shared, 1, std::nullopt, "one"), two(shared, 2, std::nullopt, "two"),
      asRecorded(shared, 0, std::nullopt, "as recorded");
  std::vector<Instr> a(8), b(8), c(8);
  ASSERT_EQ(one.read(a), 6u);
  ASSERT_EQ(two.read(b), 6u);
  ASSERT_EQ(asRecorded.read(c), 6u);
  EXPECT_EQ(a[0].stores[0].addr, kStackTop + kernelStackShift(1));
  EXPECT_EQ(b[0].stores[0].addr, kStackTop + kernelStackShift(2));
  EXPECT_EQ(b[1].loads[0].addr, kSameStack + kernelStackShift(2));
  EXPECT_EQ(b[3].loads[0].addr, kDirectMap);  // shared kernel data stays shared
  EXPECT_EQ(c[0].stores[0].addr, kStackTop);
  EXPECT_EQ(shared->records.all(), instance());  // reading never changes the shared copy
  one.rewind();
  ASSERT_EQ(one.read(a), 6u);
  EXPECT_EQ(a[1].loads[0].addr, kSameStack + kernelStackShift(1));
  EXPECT_EQ(one.length(), 6u);
  EXPECT_THROW(KpathInstanceSource(shared, kMaxKernelStackSlot + 1, std::nullopt, "too far"), TraceError);
}

TEST(KernelStack, SlotsSpreadOverEveryPlaceModulo64KiB) {
  // A slot's shift is k x 4 GiB (a multiple of 64 KiB) plus its place, a multiple of THREAD_SIZE below 64 KiB, so
  // (shift mod 64 KiB) / 16 KiB is the place: slot 0 keeps the recording's (0), the others take all 4 places. Over
  // slots 1..400 a hash gives each place 100 +- a few sd (binomial(400, 1/4): sd 8.7); 70..130 is 3.5 sd either way,
  // and a stride that left every slot at one place (the defect this guards against: 4 GiB alone) gives 400 and 0.
  EXPECT_EQ(kernelStackPosition(0), 0u);
  EXPECT_EQ(kernelStackShift(0), 0u);
  std::array<int, 4> count{};
  for (std::uint64_t k = 1; k <= 400; ++k) {
    const Addr shift = kernelStackShift(k);
    EXPECT_EQ(shift % kKernelStackBytes, 0u) << k;                       // stays THREAD_SIZE-aligned
    EXPECT_EQ(shift / (Addr{64} * 1024) * (Addr{64} * 1024), k << 32) << k;  // the 4 GiB slot, then the place
    ++count.at(static_cast<std::size_t>((shift % (Addr{64} * 1024)) / kKernelStackBytes));
  }
  for (int c : count) {
    EXPECT_GE(c, 70);
    EXPECT_LE(c, 130);
  }
}

TEST(KernelStack, SlotOutOfRangeIsATraceError) {
  auto r = instance();
  EXPECT_THROW(relocateKernelStacks(r, kMaxKernelStackSlot + 1), TraceError);
}

TEST(KernelStack, KpathSpecStackOptionIsChecked) {
  for (const std::string bad : {"kpath:getppid,stack=", "kpath:getppid,stack=x", "kpath:getppid,stack=-1",
                                "kpath:getppid,seed=1,stak=2"}) {
    try {
      openKpathTrace(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("bad option"), std::string::npos) << e.what();
    }
  }
  try {
    openKpathTrace("kpath:getppid,seed=1,stack=4097");
    ADD_FAILURE() << "stack=4097 was accepted";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("stack=4097 is out of range (0..4096)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace smtlab
