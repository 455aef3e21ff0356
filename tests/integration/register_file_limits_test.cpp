// Physical register files and the stack engine in whole runs (core.int_prf, core.fp_prf, core.stack_engine). Every
// expected value is derived on paper in its comment: a register is held from rename until the next writer of its
// architectural register retires, so by Little's law in-flight writers <= renaming entries and IPC <= entries / (cycles
// each is held).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"
#include "smtlab/core/register_file.hpp"

namespace smtlab::test {
namespace {

// 8 wide everywhere, 8 pipelined integer ALUs of latency 20: independent writers (gen:alu) are limited by the widths
// to 8 per cycle, unless the register file is smaller than 8 x 21.
Config slowWriters(std::uint32_t threads) {
  Config c = baseConfig(threads);
  c.core.fetch_width = 8;
  c.core.rename_width = 8;
  c.core.issue_width = 8;
  c.core.retire_width = 8;
  c.core.fu.int_alu = {20, true};
  setUnitCount(c.core, UnitClass::IntAlu, 8);  // was core.fu.int_alu.count = 8
  c.core.uop_queue.entries = 64;
  c.core.rob.entries = 512;
  c.core.iq.entries = 192;
  return c;
}

double cpiShare(const json::object& stats, std::size_t cpu, const char* cause) {
  const auto& o = cpuStats(stats, cpu);
  return num(o.at("cpi_stack_cycles").as_object().at(cause)) / num(o.at("cycles"));
}

TEST(RegisterFileLimits, RenamingEntriesCapInFlightWritersAndTheIpcFollows) {
  // Unlimited: 8 per cycle (the widths; the ROB's 512 / 21 = 24 is no limit).
  Config c = slowWriters(1);
  const double unlimited = ipcOf(runCycles(c, {"gen:alu,count=0"}, 2000, 20000), 0);
  EXPECT_NEAR(unlimited, 8.0, 0.08);
  // 17 architectural + 40 renaming entries. A writer renamed in cycle r issues at r+1, is done at r+21 and retires
  // then, freeing an entry that rename (later in the same cycle) can use: each holds a register 21 cycles, so
  // 40 / 21 = 1.905 per cycle. Of each 21 cycles, 5 retire (40 / 8) and 16 wait with rename blocked by the file:
  // the CPI stack charges 16 / 21 = 0.762 of the cycles to "regs".
  c.core.int_prf = {57, Sharing::Shared, 1.0, 17};
  const auto stats = runCycles(c, {"gen:alu,count=0"}, 2000, 21000);
  EXPECT_NEAR(ipcOf(stats, 0), 40.0 / 21.0, 0.02 * 40.0 / 21.0);
  EXPECT_NEAR(cpiShare(stats, 0, "regs"), 16.0 / 21.0, 0.02);
}

TEST(RegisterFileLimits, TwoThreadsTakeWhatTheSharingPolicyGives) {
  // Both threads run the slow writers; 2 x 17 architectural + 40 renaming entries. Retirement alternates between the
  // threads, so a done writer may wait one cycle for its thread's turn: each register is held 21 or 22 cycles.
  //   partitioned: 20 each          -> each thread in [20/22, 20/21]
  //   capped 0.25: floor(40/4) = 10 -> each thread in [10/22, 10/21]
  //   shared: 40 together           -> the sum in [40/22, 40/21]
  struct Case {
    Sharing sharing;
    double cap;
    double perThread;  // renaming entries each thread can hold, 0 = shared
  };
  for (const Case& k : {Case{Sharing::Partitioned, 1.0, 20}, Case{Sharing::Capped, 0.25, 10},
                        Case{Sharing::Shared, 1.0, 0}}) {
    Config c = slowWriters(2);
    c.core.int_prf = {74, k.sharing, k.cap, 17};
    const auto stats = runCycles(c, {"gen:alu,count=0", "gen:alu,count=0,seed=2"}, 2000, 22 * 1000);
    const double a = ipcOf(stats, 0), b = ipcOf(stats, 1);
    if (k.perThread > 0) {
      for (double ipc : {a, b}) {
        EXPECT_GE(ipc, 0.99 * k.perThread / 22.0) << sharingName(k.sharing);
        EXPECT_LE(ipc, 1.01 * k.perThread / 21.0) << sharingName(k.sharing);
      }
    } else {
      EXPECT_GE(a + b, 0.99 * 40.0 / 22.0);
      EXPECT_LE(a + b, 1.01 * 40.0 / 21.0);
    }
  }
}

TEST(RegisterFileLimits, ASquashReturnsEveryRegisterOfTheSquashedWriters) {
  // A thread filling its 40 renaming entries is detached (its in-flight writers squashed): the file must be empty,
  // with the invariant checker confirming the count every cycle; attached again, it runs at 40 / 21 once more, so no
  // entry leaked.
  Config c = slowWriters(1);
  c.core.int_prf = {57, Sharing::Shared, 1.0, 17};
  Machine m(c);
  m.setChecking(true);
  m.attach(LogicalCpu{0}, cursorFor("gen:alu,count=0"), Asid{1});
  m.run(Cycle{5000});
  const RegisterFiles& regs = m.core(CoreId{0}).registers();
  EXPECT_GE(regs.intFile().used(0), 32u);  // at most one retire group (8) short of full between refills
  EXPECT_LE(regs.intFile().used(0), 40u);
  auto cursor = m.detach(LogicalCpu{0});
  EXPECT_EQ(regs.intFile().used(0), 0u);
  EXPECT_EQ(regs.intFile().usedTotal(), 0u);
  m.attach(LogicalCpu{0}, cursor, Asid{1});
  m.run(Cycle{7000});
  m.resetStats();
  m.run(Cycle{7000 + 21000});
  EXPECT_NEAR(ipcOf(m.statsJson(), 0), 40.0 / 21.0, 0.02 * 40.0 / 21.0);
}

// n pops (each loads a stack slot of one warm line into r1..r3 and moves r4) run alone to their end.
std::uint64_t popsEndCycle(const Config& c, int n) {
  std::vector<Instr> v;
  for (int i = 0; i < n; ++i) {
    Instr in = op(OpClass::Load, 0x400000 + 4 * static_cast<Addr>(i % 256), {1 + i % 3, kStackPointerReg},
                  {kStackPointerReg});
    in.loads[0] = MemRef{0x7fff0000 + 8 * static_cast<Addr>(i % 8), 8};
    v.push_back(in);
  }
  return endCycleAlone(c, v);
}

TEST(StackEngine, PopsNoLongerChainThroughTheStackPointer) {
  // The cycles of 20000 pops minus those of 10000: 10000 pops in steady state (cold misses and pipeline fill
  // cancel). Without the stack engine each pop's stack-pointer result comes with its load, so the pops form a chain
  // of one L1 hit each (load AGU 0 + L1D 4 cycles): 4 cycles per pop, IPC 0.25. With it the pops are independent:
  // two load units make it 2 per cycle (widths 4, LQ 48 / 4-cycle lifetime = 12 are no limit), IPC 2.
  for (bool engine : {false, true}) {
    Config c = baseConfig(1);
    c.core.fu.load = {0, true};
    setUnitCount(c.core, UnitClass::Load, 2);  // was core.fu.load.count = 2
    c.core.stack_engine = engine;
    const double steady = static_cast<double>(popsEndCycle(c, 20000) - popsEndCycle(c, 10000));
    const double ipc = 10000.0 / steady;
    EXPECT_NEAR(ipc, engine ? 2.0 : 0.25, engine ? 0.04 : 0.005) << "stack_engine " << engine;
  }
}

}  // namespace
}  // namespace smtlab::test
