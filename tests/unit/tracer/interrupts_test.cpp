// interruptRuns and removeInterrupts (src/tracer/interrupts.cpp) on hand-made regions: a kpath: region of a system
// call holds the call's user code, its kernel run (entered by the syscall instruction) and the user code after it;
// an interrupt shows as a run from its vector's entry to the interrupt return (iretq at native_irq_return_iret).
// Expected records are written out by hand.
#include <gtest/gtest.h>

#include "smtlab/tracer/interrupts.hpp"

namespace smtlab {
namespace {

constexpr Addr kTick = 0xffffffff81e00b00ull;     // asm_sysvec_apic_timer_interrupt (any kernel address)
constexpr Addr kResched = 0xffffffff81e00c00ull;  // asm_sysvec_reschedule_ipi
constexpr Addr kEntry = 0xffffffff81e00000ull;    // entry_SYSCALL_64: not an interrupt vector
constexpr Addr kSysret = 0xffffffff81e00200ull;   // the call's sysretq
constexpr Addr kStubs = 0xffffffff81e00300ull;    // irq_entries_start: a device vector's stub ...
constexpr Addr kStubsEnd = 0xffffffff81e00a00ull;  // ... up to spurious_entries_start
constexpr Addr kDisk = kStubs + 3 * 8;            // the stub of the disk's vector (35)
constexpr Addr kIret = 0xffffffff81e01220ull;     // native_irq_return_iret

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

InterruptVectors withoutReturn() { return InterruptVectors{{kTick, kResched}, 0, 0, 0}; }
InterruptVectors full() { return InterruptVectors{{kTick, kResched}, kStubs, kStubsEnd, kIret}; }

TEST(Interrupts, ATickInTheUserCodeIsTakenOutAndTheCallStays) {
  for (const InterruptVectors& v : {withoutReturn(), full()}) {
    Builder b;
    b.user(0x401000).user(0x401004)                             // the wrapper
        .kernel(kEntry).kernel(kEntry + 8).kernel(kSysret)      // the system call
        .user(0x401008)                                         // back in user code
        .kernel(kTick).kernel(kTick + 4).kernel(kIret)          // a tick hits it
        .user(0x40100c);                                        // the interrupted code goes on
    EXPECT_EQ(removeInterrupts(b.r, v), 1u);
    EXPECT_EQ(pcs(b.r), (std::vector<Addr>{0x401000, 0x401004, kEntry, kEntry + 8, kSysret, 0x401008, 0x40100c}));
    EXPECT_EQ(b.r.kernel, (std::vector<std::uint8_t>{0, 0, 1, 1, 1, 0, 0}));
    EXPECT_EQ(b.r.kernelInstructions(), 3u);
  }
}

TEST(Interrupts, AnInterruptNestedInTheKernelRunStaysAndNoVectorMeansNoChange) {
  // A reschedule IPI taken while the call runs in kernel mode returns into the call: kept (the path's own run).
  for (const InterruptVectors& v : {withoutReturn(), full()}) {
    Builder b;
    b.user(0x401000).kernel(kEntry).kernel(kResched).kernel(kResched + 4).kernel(kIret).kernel(kEntry + 8)
        .kernel(kSysret).user(0x401004);
    const auto before = pcs(b.r);
    EXPECT_EQ(removeInterrupts(b.r, v), 0u);
    EXPECT_EQ(pcs(b.r), before);
  }
  const auto runs = interruptRuns(Builder().user(1).kernel(kEntry).kernel(kResched).kernel(kIret).kernel(kSysret)
                                      .user(2).r, full());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].begin, 2u);
  EXPECT_EQ(runs[0].end, 4u);
  EXPECT_FALSE(runs[0].fromUser);
  EXPECT_FALSE(runs[0].device);
  Builder c;
  c.user(0x401000).kernel(kTick).kernel(kTick + 4).user(0x401004);
  EXPECT_EQ(removeInterrupts(c.r, InterruptVectors{}), 0u);
  EXPECT_EQ(c.r.instrs.size(), 4u);
}

TEST(Interrupts, TwoInterruptsAndOneAtTheEndOfTheRegion) {
  Builder b;
  b.user(1).kernel(kResched).user(2).kernel(kEntry).kernel(kSysret).user(3).kernel(kTick).kernel(kTick + 4);
  EXPECT_EQ(removeInterrupts(b.r, withoutReturn()), 2u);
  EXPECT_EQ(pcs(b.r), (std::vector<Addr>{1, 2, kEntry, kSysret, 3}));
}

TEST(Interrupts, InterruptsRightAfterTheSysretOrBeforeTheEndMarkerAreFoundByTheirReturn) {
  // The disk's completion delivered at the first user instruction after the call's sysretq (no user record between
  // them), a tick pending at its return, and another at the very end of the region (its iretq the last record, the
  // end marker's user code next). Without the return they look like the call's own kernel code.
  Builder b;
  b.user(1).kernel(kEntry).kernel(kSysret)                                  // the call
      .kernel(kDisk).kernel(kDisk + 2).kernel(0xffffffffc0001000).kernel(kIret)  // the disk, from user mode
      .kernel(kTick).kernel(kTick + 4).kernel(kIret)                         // a tick at its return
      .user(2).user(3)
      .kernel(kTick).kernel(kTick + 4).kernel(kIret);                        // a tick before the end marker
  const auto runs = interruptRuns(b.r, full());
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_TRUE(runs[0].device);
  EXPECT_FALSE(runs[1].device);
  for (const auto& run : runs) EXPECT_TRUE(run.fromUser) << run.begin;
  Builder copy = b;
  EXPECT_EQ(removeInterrupts(b.r, full()), 3u);
  EXPECT_EQ(pcs(b.r), (std::vector<Addr>{1, kEntry, kSysret, 2, 3}));
  EXPECT_EQ(removeInterrupts(copy.r, withoutReturn()), 1u);  // only the tick after a user record
  EXPECT_EQ(copy.r.instrs.size(), 12u);
}

TEST(Interrupts, BackToBackInterruptsFromUserCodeAllGo) {
  // A tick after a user record, a reschedule IPI pending at its return, then the disk's: all three interrupted the
  // same user code (a KpathBoot recording hung here once: the first run of such a chain already from user code).
  Builder b;
  b.user(1).kernel(kTick).kernel(kIret).kernel(kResched).kernel(kIret).kernel(kDisk).kernel(kIret).user(2);
  const auto runs = interruptRuns(b.r, full());
  ASSERT_EQ(runs.size(), 3u);
  for (const auto& run : runs) EXPECT_TRUE(run.fromUser) << run.begin;
  EXPECT_EQ(removeInterrupts(b.r, full()), 3u);
  EXPECT_EQ(pcs(b.r), (std::vector<Addr>{1, 2}));
}

TEST(Interrupts, DeviceInterruptsAreCutWhereverTheyLandWhenAsked) {
  // The completion lands inside the call (kernel mode) with a tick nested in it (softirq), then a tick hits the
  // user code after the call: with `devices` the completion is cut out whole, nested tick included, and handed
  // over; the user-mode tick goes; without, only the user-mode tick goes.
  auto make = [] {
    Builder b;
    b.user(1).kernel(kEntry)
        .kernel(kDisk).kernel(0xffffffffc0001000).kernel(kTick).kernel(kIret).kernel(0xffffffffc0001004)
        .kernel(kIret)
        .kernel(kEntry + 8).kernel(kSysret).user(2).kernel(kTick).kernel(kIret).user(3);
    return b;
  };
  Builder b = make();
  std::vector<SystemRegion> devices;
  EXPECT_EQ(removeInterrupts(b.r, full(), &devices), 2u);
  EXPECT_EQ(pcs(b.r), (std::vector<Addr>{1, kEntry, kEntry + 8, kSysret, 2, 3}));
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(pcs(devices[0]), (std::vector<Addr>{kDisk, 0xffffffffc0001000, kTick, kIret, 0xffffffffc0001004, kIret}));
  EXPECT_EQ(devices[0].kernelInstructions(), 6u);
  Builder c = make();
  EXPECT_EQ(removeInterrupts(c.r, full()), 1u);
  EXPECT_EQ(c.r.instrs.size(), 12u);
}

TEST(Interrupts, ADeviceInterruptNestedInAKernelModeTickIsCutAndTheTickStays) {
  // The shape of a writeback region recorded under load: a tick lands in the call's kernel run, its softirq enables
  // interrupts, and the disk's completion is taken inside the tick. With `devices` the completion alone goes (from
  // its stub to the return that balances it) and is handed over; the tick, nested in the path's own run, stays with
  // its two records before and one after the completion. Without, nothing goes.
  constexpr Addr kSoftirq = 0xffffffff810a8e00ull, kHandler = 0xffffffffc0001000ull;
  auto make = [&] {
    Builder b;
    b.user(1).kernel(kEntry)
        .kernel(kTick).kernel(kSoftirq)                              // tick, its softirq
        .kernel(kDisk).kernel(kDisk + 2).kernel(kHandler).kernel(kIret)  // the disk's completion inside it
        .kernel(kSoftirq + 4).kernel(kIret)                          // the softirq ends, the tick returns
        .kernel(kEntry + 8).kernel(kSysret).user(2);
    return b;
  };
  Builder b = make();
  std::vector<SystemRegion> devices;
  EXPECT_EQ(removeInterrupts(b.r, full(), &devices), 1u);
  EXPECT_EQ(pcs(b.r), (std::vector<Addr>{1, kEntry, kTick, kSoftirq, kSoftirq + 4, kIret, kEntry + 8, kSysret, 2}));
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(pcs(devices[0]), (std::vector<Addr>{kDisk, kDisk + 2, kHandler, kIret}));
  Builder c = make();
  EXPECT_EQ(removeInterrupts(c.r, full()), 0u);
  EXPECT_EQ(c.r.instrs.size(), 13u);
}

TEST(Interrupts, ARunThatDoesNotReturnInsideTheRegion) {
  // From user code it ends at the next user record; nested in kernel code it is the path's own and
  // an interrupt inside it is still found.
  Builder b;
  b.user(1).kernel(kTick).kernel(kTick + 4).user(2);
  EXPECT_EQ(removeInterrupts(b.r, full()), 1u);
  EXPECT_EQ(pcs(b.r), (std::vector<Addr>{1, 2}));
  Builder c;
  c.user(1).kernel(kEntry).kernel(kResched).kernel(kDisk).kernel(kIret).kernel(kEntry + 8).user(2);
  std::vector<SystemRegion> devices;
  EXPECT_EQ(removeInterrupts(c.r, full(), &devices), 1u);
  EXPECT_EQ(pcs(c.r), (std::vector<Addr>{1, kEntry, kResched, kEntry + 8, 2}));
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(pcs(devices[0]), (std::vector<Addr>{kDisk, kIret}));
}

TEST(Interrupts, AnInterruptInsideAnIpiInstanceIsTakenOutFromItsEntryToItsReturn) {
  // A reschedule IPI's instance (its vector first): the handler, then at its exit, where interrupts are enabled
  // again, a tick that was pending (its entry to the iretq that balances it, with a device interrupt nested in its
  // softirq), then the exit path up to the cut. Only the IPI's own records stay; the IPI's own entry at record 0 is
  // not a nested one. Written out: 3 records of the 10 stay.
  Builder b;
  b.kernel(kResched).kernel(kResched + 4)                   // the IPI's handler, interrupts off
      .kernel(kTick).kernel(kTick + 4)                      // a pending tick taken at the exit
      .kernel(kDisk).kernel(kDisk + 8).kernel(kIret)        // the disk's completion inside the tick's softirq
      .kernel(kTick + 8).kernel(kIret)                      // the tick returns into the IPI's exit
      .kernel(kResched + 8);                                // the exit goes on (up to __schedule)
  EXPECT_EQ(removeNestedInterrupts(b.r, full()), 1u);       // one run: the tick, with what it held
  EXPECT_EQ(pcs(b.r), (std::vector<Addr>{kResched, kResched + 4, kResched + 8}));
  EXPECT_EQ(b.r.kernel, (std::vector<std::uint8_t>{1, 1, 1}));
  // Without the return's address no run closes: nothing is taken (an unbalanced entry stays).
  Builder c;
  c.kernel(kResched).kernel(kTick).kernel(kTick + 4).kernel(kResched + 8);
  EXPECT_EQ(removeNestedInterrupts(c.r, withoutReturn()), 0u);
  EXPECT_EQ(c.r.instrs.size(), 4u);
}

}  // namespace
}  // namespace smtlab
