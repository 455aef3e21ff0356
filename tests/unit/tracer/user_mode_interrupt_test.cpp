// removeUserModeInterrupts (src/tracer/system_trace.cpp) on hand-made regions: a kpath: region of a system call
// holds the call's user code, its kernel run (entered by the syscall instruction) and the user code after it; a
// timer tick or an IPI that hits the user code shows as another kernel run beginning at the interrupt's vector.
// Expected records are written out by hand.
#include <gtest/gtest.h>

#include "smtlab/tracer/system_trace.hpp"

namespace smtlab {
namespace {

constexpr Addr kTick = 0xffffffff81e00b00ull;     // asm_sysvec_apic_timer_interrupt (any kernel address)
constexpr Addr kResched = 0xffffffff81e00c00ull;  // asm_sysvec_reschedule_ipi
constexpr Addr kEntry = 0xffffffff81e00000ull;    // entry_SYSCALL_64: not an interrupt vector

struct Builder {
  SystemRegion r;
  Builder& user(Addr pc) { return add(pc, false); }
  Builder& kernel(Addr pc) { return add(pc, true); }
  Builder& add(Addr pc, bool k) {
    Instr i;
    i.pc = pc;
    r.instrs.push_back(i);
    r.kernel.push_back(k ? 1 : 0);
    return *this;
  }
};

std::vector<Addr> pcs(const SystemRegion& r) {
  std::vector<Addr> v;
  for (const Instr& i : r.instrs) v.push_back(i.pc);
  return v;
}

TEST(UserModeInterrupt, ATickInTheUserCodeIsTakenOutAndTheCallStays) {
  Builder b;
  b.user(0x401000).user(0x401004)                      // the wrapper
      .kernel(kEntry).kernel(kEntry + 8).kernel(kEntry + 16)  // the system call
      .user(0x401008)                                    // back in user code
      .kernel(kTick).kernel(kTick + 4).kernel(kTick + 8)  // a tick hits it
      .user(0x40100c);                                   // the interrupted code goes on
  const auto removed = removeUserModeInterrupts(b.r, {kTick, kResched});
  EXPECT_EQ(removed, 1u);
  EXPECT_EQ(pcs(b.r), (std::vector<Addr>{0x401000, 0x401004, kEntry, kEntry + 8, kEntry + 16, 0x401008, 0x40100c}));
  EXPECT_EQ(b.r.kernel, (std::vector<std::uint8_t>{0, 0, 1, 1, 1, 0, 0}));
  EXPECT_EQ(b.r.kernelInstructions(), 3u);
}

TEST(UserModeInterrupt, AnInterruptNestedInTheKernelRunStaysAndNoVectorMeansNoChange) {
  // A reschedule IPI taken while the call runs in kernel mode is inside the call's own kernel run: kept (it cannot
  // be told from the call's code without the return point). The first user record is never an interrupt.
  Builder b;
  b.user(0x401000).kernel(kEntry).kernel(kResched).kernel(kResched + 4).kernel(kEntry + 8).user(0x401004);
  const auto before = pcs(b.r);
  EXPECT_EQ(removeUserModeInterrupts(b.r, {kTick, kResched}), 0u);
  EXPECT_EQ(pcs(b.r), before);
  Builder c;
  c.user(0x401000).kernel(kTick).kernel(kTick + 4).user(0x401004);
  EXPECT_EQ(removeUserModeInterrupts(c.r, {}), 0u);
  EXPECT_EQ(c.r.instrs.size(), 4u);
}

TEST(UserModeInterrupt, TwoInterruptsAndOneAtTheEndOfTheRegion) {
  Builder b;
  b.user(1).kernel(kResched).user(2).kernel(kEntry).user(3).kernel(kTick).kernel(kTick + 4);
  EXPECT_EQ(removeUserModeInterrupts(b.r, {kTick, kResched}), 2u);
  EXPECT_EQ(pcs(b.r), (std::vector<Addr>{1, 2, kEntry, 3}));
}

}  // namespace
}  // namespace smtlab
