// The window counts uops in whole runs: ROB entries per fused-domain uop, rename and retire
// widths in uops, micro-fusion, and conservation of every entry across squashes. Each expected value is derived on
// paper in its comment.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

constexpr Addr kPc = 0x400000;  // one code line for every instruction: one I-cache miss, then fetch runs freely

// load + op (2 uops unfused, 1 fused); with a store to the same address, read-modify-write (4 unfused, 2 fused).
Instr loadOp(Addr addr, int dst) {
  Instr in = op(OpClass::Int, kPc, {dst}, {});
  in.loads[0] = MemRef{addr, 8};
  return in;
}
Instr rmw(Addr addr) {
  Instr in = loadOp(addr, 2);
  in.stores[0] = MemRef{addr, 8};
  return in;
}

// Wide everywhere but what a test narrows, big queues: only the mechanism under test limits.
Config roomy() {
  Config c = baseConfig(1);
  c.core.fetch_width = 8;
  c.core.rename_width = 8;
  c.core.issue_width = 8;
  c.core.retire_width = 8;
  c.core.uop_queue.entries = 64;
  c.core.iq = {256, Sharing::Shared, 1.0};
  c.core.lq.entries = 128;
  c.core.sq.entries = 128;
  setUnitCount(c.core, UnitClass::IntAlu, 4);
  setUnitCount(c.core, UnitClass::Load, 4);
  return c;
}

// IPC of thread 0 over `cycles` after `warmup` cycles, on a trace long enough never to end.
double ipcOver(const Config& c, std::vector<Instr> trace, std::uint64_t warmup, std::uint64_t cycles) {
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor(std::move(trace)), Asid{1});
  while (m.now().value < warmup) m.run(Cycle{warmup});
  m.resetStats();
  while (m.now().value < warmup + cycles) {
    for (const Event& e : m.run(Cycle{warmup + cycles})) {
      if (e.kind == EventKind::SourceEnded) ADD_FAILURE() << "trace too short";
    }
  }
  return ipcOf(m.statsJson(), 0);
}

std::vector<Instr> loadOps(int n) {
  // The same 8 bytes every time: L1D hits after the first, no register dependences.
  return std::vector<Instr>(static_cast<std::size_t>(n), loadOp(0x100000, 2));
}

TEST(UopWindow, ARobOfNEntriesHoldsNOverFourReadModifyWritesWhileALoadBlocksRetire) {
  // A load missing to DRAM heads the trace; read-modify-writes (load + op + STA + STD) follow. Until the load
  // retires, the ROB (64 entries) fills: 1 entry for the load, then floor(63 / 4) = 15 RMWs (60 entries): 16
  // instructions, 61 entries. With micro-fusion an RMW is 2 fused uops: floor(63 / 2) = 31 RMWs, 32 instructions,
  // 63 entries. Counting instructions instead of uops it would hold 64.
  for (const bool fusion : {false, true}) {
    Config c = roomy();
    c.core.rob.entries = 64;
    c.core.micro_fusion = fusion;
    std::vector<Instr> trace = {load(kPc, 1, {}, 0x8000000)};
    for (int i = 0; i < 200; ++i) trace.push_back(rmw(0x100000 + 64 * static_cast<Addr>(i)));
    Machine m(c);
    m.setChecking(true);
    m.attach(LogicalCpu{0}, cursorFor(trace), Asid{1});
    const Core& core = m.core(CoreId{0});
    std::uint32_t maxInstructions = 0, maxEntries = 0;
    for (std::uint64_t t = 1; t < 5000; ++t) {
      m.run(Cycle{t});
      if (m.threadStats(LogicalCpu{0}).instructions != 0) break;  // the load retired: the window moves on
      maxInstructions = std::max(maxInstructions, core.thread(0).robCount());
      maxEntries = std::max(maxEntries, core.queue(QueueKind::Rob).used(0));
    }
    EXPECT_EQ(maxInstructions, fusion ? 32u : 16u) << "fusion " << fusion;
    EXPECT_EQ(maxEntries, fusion ? 63u : 61u) << "fusion " << fusion;
  }
}

TEST(UopWindow, RenameOfTwoUopInstructionsAtWidthThreeSustainsOneAndAHalfPerCycle) {
  // Rename takes 3 uops per cycle; a load-op is 2 uops: 1.5 instructions per cycle (everything else is wider: fetch
  // 8 instructions, issue 8, 4 load ports and 4 ALUs for 1.5 loads + 1.5 ops, retire 8 uops). With micro-fusion
  // a load-op is 1 fused uop: 3 per cycle (4 load ports, 4 ALUs, issue 6 of 8 uops).
  Config c = roomy();
  c.core.rename_width = 3;
  EXPECT_NEAR(ipcOver(c, loadOps(60000), 2000, 10000), 1.5, 0.015);
  c.core.micro_fusion = true;
  EXPECT_NEAR(ipcOver(c, loadOps(60000), 2000, 10000), 3.0, 0.03);
}

TEST(UopWindow, RetireOfTwoUopInstructionsAtWidthThreeSustainsOneAndAHalfPerCycle) {
  // Rename is 8 uops wide; retire takes 3 uops per cycle, uop by uop: 1.5 load-ops per cycle.
  Config c = roomy();
  c.core.retire_width = 3;
  EXPECT_NEAR(ipcOver(c, loadOps(60000), 2000, 10000), 1.5, 0.015);
}

TEST(UopWindow, EveryEntryComesBackAfterASquashInTheMiddleOfMultiUopInstructions) {
  // Read-modify-writes, stores, load-ops and 20-uop microcoded instructions (longer than the 16-entry uop queue
  // share and straddling rename and retire cycles at width 3), on both threads of a core. Thread 0 is detached at
  // many cycles: every uop-queue, ROB, IQ and LQ entry it held must be free at once (the invariant check runs every
  // cycle), and reattached, its trace must retire every instruction exactly once.
  Config c = roomy();
  c.core.threads = 2;
  c.core.fetch_width = 3;
  c.core.rename_width = 3;
  c.core.retire_width = 3;
  c.core.uop_queue = {32, Sharing::Partitioned, 1.0};
  c.core.rob = {64, Sharing::Partitioned, 1.0};
  c.core.recombine_cycles = 0;
  std::vector<Instr> trace;
  for (int i = 0; i < 300; ++i) {
    const Addr a = 0x200000 + 64 * static_cast<Addr>(i % 40);
    switch (i % 5) {
      case 0: trace.push_back(rmw(a)); break;
      case 1: {
        Instr st = op(OpClass::Store, kPc, {}, {3});
        st.stores[0] = MemRef{a + 8, 8};
        trace.push_back(st);
        break;
      }
      case 2: trace.push_back(loadOp(a + 16, 4)); break;
      case 3: {
        Instr div = op(OpClass::Int, kPc, {5}, {4});
        div.uops = 20;
        div.microcoded = true;
        trace.push_back(div);
        break;
      }
      default: trace.push_back(op(OpClass::Int, kPc, {6}, {2})); break;
    }
  }
  for (std::uint64_t at : {3u, 17u, 40u, 263u, 270u, 281u, 300u, 333u, 420u, 555u}) {
    Machine m(c);
    m.setChecking(true);
    m.attach(LogicalCpu{0}, cursorFor(trace), Asid{1});
    m.attach(LogicalCpu{1}, cursorFor(trace), Asid{2});
    while (m.now().value < at) m.run(Cycle{at});
    auto cursor = m.detach(LogicalCpu{0});
    const Core& core = m.core(CoreId{0});
    for (QueueKind q : {QueueKind::UopQueue, QueueKind::Rob, QueueKind::Iq, QueueKind::Lq}) {
      EXPECT_EQ(core.queue(q).used(0), 0u) << core.queue(q).name() << " after a detach at cycle " << at;
    }
    m.attach(LogicalCpu{0}, cursor, Asid{1});
    runToEnd(m);
    EXPECT_EQ(m.threadStats(LogicalCpu{0}).instructions, trace.size()) << "detach at cycle " << at;
    EXPECT_EQ(m.threadStats(LogicalCpu{1}).instructions, trace.size()) << "detach at cycle " << at;
    for (QueueKind q : {QueueKind::UopQueue, QueueKind::Rob, QueueKind::Iq, QueueKind::Lq}) {
      EXPECT_EQ(core.queue(q).usedTotal(), 0u) << core.queue(q).name() << " at the end";
    }
  }
}

}  // namespace
}  // namespace smtlab::test
