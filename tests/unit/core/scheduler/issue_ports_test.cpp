// Uops through issue ports (core.ports): port rates (NetBurst's double-speed ALUs), one FP execute port, a load-op's
// op uop taking its port when the load's data returns, a store's address and data uops on their own ports, and the
// issue-queue entries a multi-uop instruction holds. Expected values are derived on paper in each test's comment.
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/core/rename_allocate.hpp"
#include "smtlab/core/scheduler.hpp"
#include "smtlab/core/uop_decode.hpp"

namespace smtlab::test {
namespace {

std::vector<PortConfig> portsOf(std::initializer_list<const char*> texts) {
  std::vector<PortConfig> out;
  for (const char* text : texts) {
    PortConfig p;
    EXPECT_EQ(parsePort(text, p), "") << text;
    out.push_back(p);
  }
  return out;
}

// The netburst preset's port map (configs/netburst.toml), with the stage harness's small queues.
Config netburstPorts(std::uint32_t threads) {
  Config c = stageConfig(threads);
  c.core.ports = loadConfig("netburst").core.ports;
  c.core.issue_width = 6;
  for (QueueConfig* q : {&c.core.uop_queue, &c.core.rob, &c.core.iq, &c.core.lq, &c.core.sq}) q->entries = 128;
  return c;
}

// Renames every thread's trace at cycle 0 (one thread per rename tick, as Core does), then issues cycle by cycle.
struct PortsPipe {
  StageHarness h;
  StubLoadStore lsu;
  StubBranches branches;
  RenameAllocate rename;
  Scheduler scheduler;
  PortsPipe(Config c, std::vector<std::vector<Instr>> traces, std::uint32_t loadLatency = 4)
      : h(wide(c)), lsu(loadLatency), rename(h.config, h.threads, h.queues),
        scheduler(h.config, h.threads, h.queues, lsu, branches) {
    for (std::uint32_t t = 0; t < traces.size(); ++t) {
      const auto n = static_cast<std::uint32_t>(traces[t].size());
      h.attach(t, std::move(traces[t]));
      h.queueUops(t, n);
    }
    for (std::size_t t = 0; t < traces.size(); ++t) rename.tick(Cycle{0}, false);
    scheduler.accept(rename.dispatched());
    rename.clearDispatched();
  }
  static Config wide(Config c) {
    c.core.rename_width = 64;
    return c;
  }
  const Uop& uop(std::uint32_t t, std::uint64_t seq) { return h.threads[t].rob[seq]; }
  // Issues cycles 1.. until every instruction of every thread has issued; returns, per thread, the cycle each
  // instruction's last uop issued.
  std::vector<std::vector<std::uint64_t>> run(std::vector<std::size_t> counts, std::uint64_t maxCycle = 2000) {
    std::vector<std::vector<std::uint64_t>> at;
    for (std::size_t n : counts) at.emplace_back(n, 0);
    for (std::uint64_t cycle = 1; cycle <= maxCycle; ++cycle) {
      scheduler.issue(Cycle{cycle});
      bool all = true;
      for (std::uint32_t t = 0; t < counts.size(); ++t) {
        for (std::size_t s = 0; s < counts[t]; ++s) {
          if (uop(t, s).issued && at[t][s] == 0) at[t][s] = cycle;
          all &= uop(t, s).issued;
        }
      }
      if (all) break;
    }
    return at;
  }
};

// Instructions issued per cycle over all threads.
std::map<std::uint64_t, int> perCycle(const std::vector<std::vector<std::uint64_t>>& at) {
  std::map<std::uint64_t, int> out;
  for (const auto& thread : at) {
    for (std::uint64_t c : thread) ++out[c];
  }
  return out;
}

TEST(IssuePorts, TwoFpBoundThreadsOnNetburstNeverExceedOneFpExecuteUopPerCycle) {
  // NetBurst has one FP execute unit, on port 1 [hinton]; fp_add is single-speed there (the whole port cycle).
  // 2 threads x 20 independent fadds = 40 FP uops through one port at 1 per cycle: cycles 1..40, one each. A model
  // with a second FP port, or fp_add at the ALU's double rate, would finish by cycle 20.
  std::vector<Instr> a, b;
  for (int i = 0; i < 20; ++i) {
    a.push_back(instr(OpClass::FAdd, {fpReg(i)}));
    b.push_back(instr(OpClass::FAdd, {fpReg(i)}));
  }
  PortsPipe p(netburstPorts(2), {a, b});
  const auto at = p.run({20, 20});
  const auto counts = perCycle(at);
  for (const auto& [cycle, n] : counts) EXPECT_EQ(n, 1) << "cycle " << cycle;
  EXPECT_EQ(counts.size(), 40u);
  EXPECT_EQ(counts.rbegin()->first, 40u);
}

TEST(IssuePorts, TwoIntStreamsOnNetburstReachFourAluUopsPerCycleOnTwoDoubleSpeedPorts) {
  // Two double-speed ALU ports (rate 2 each) = 4 simple integer uops per cycle, issue_width 6 permitting:
  // 2 threads x 40 independent ints = 80 uops in exactly 20 cycles, 4 in every one.
  auto stream = [] {
    std::vector<Instr> t;
    for (int i = 0; i < 40; ++i) t.push_back(instr(OpClass::Int, {1 + i % 60}));
    return t;
  };
  {
    PortsPipe p(netburstPorts(2), {stream(), stream()});
    const auto counts = perCycle(p.run({40, 40}));
    EXPECT_EQ(counts.size(), 20u);
    for (const auto& [cycle, n] : counts) EXPECT_EQ(n, 4) << "cycle " << cycle;
  }
  {
    // The same ALU ports at single speed: 2 per cycle, 40 cycles.
    Config c = netburstPorts(2);
    c.core.ports = portsOf({"int_alu branch store_data", "int_alu int_mul fp_add fp_mul fp_div int_div", "load",
                            "store_address"});
    PortsPipe p(c, {stream(), stream()});
    const auto counts = perCycle(p.run({40, 40}));
    EXPECT_EQ(counts.size(), 40u);
    for (const auto& [cycle, n] : counts) EXPECT_EQ(n, 2) << "cycle " << cycle;
  }
  {
    // Double-speed ports but issue_width 3: the width binds, ceil(80 / 3) = 27 cycles, never more than 3.
    Config c = netburstPorts(2);
    c.core.issue_width = 3;
    PortsPipe p(c, {stream(), stream()});
    const auto counts = perCycle(p.run({40, 40}));
    EXPECT_EQ(counts.size(), 27u);
    for (const auto& [cycle, n] : counts) EXPECT_LE(n, 3) << "cycle " << cycle;
  }
}

// One port per class except a single ALU port, so one stream can saturate it.
Config onePortEach() {
  Config c = stageConfig(1);
  c.core.ports = portsOf({"int_alu branch", "int_mul int_div fp_add fp_mul fp_div", "load", "store_address",
                          "store_data"});
  c.core.issue_width = 8;
  c.core.fu.int_alu.latency = 1;
  return c;
}

TEST(IssuePorts, ALoadOpsOpUopTakesItsPortWhenTheLoadDataReturns) {
  // 8 independent ints (seq 0..7), then a load-op `add r20 <- [mem]` (seq 8), one ALU port, loads take 4 cycles.
  // The load uop needs only the load port: it issues at cycle 1, data at 5. Its op uop then needs the ALU port, which
  // the older ints hold at cycles 1..8, so it issues at 9 and the result is ready at 9 + 1 = 10.
  // (Taking the ALU port with the load, as one instruction, would give 9 + 4 + 1 = 14; no port for the op, 5 + 1 = 6.)
  std::vector<Instr> t;
  for (int i = 0; i < 8; ++i) t.push_back(instr(OpClass::Int, {1 + i}));
  Instr loadOp = instr(OpClass::Int, {20});
  loadOp.loads[0] = MemRef{0x1000, 8};
  t.push_back(loadOp);
  PortsPipe p(onePortEach(), {t});
  const auto at = p.run({9});
  ASSERT_EQ(p.lsu.loads.size(), 1u);
  EXPECT_EQ(at[0][8], 9u);
  EXPECT_EQ(p.uop(0, 8).doneAt, Cycle{10});
  EXPECT_EQ(p.uop(0, 8).loadDataAt, Cycle{5});  // the load uop issued at 1, not after the ints
}

TEST(IssuePorts, AStoreUsesBothTheStoreAddressAndTheStoreDataPort) {
  // 6 independent stores, each a store-address and a store-data uop. With STA and STD on ports of their own (one uop
  // each per cycle) one store completes its issue per cycle: cycles 1..6, 6 uops on each port. With both classes on
  // one port, a store needs two port cycles: the 6th store's second uop issues at cycle 12.
  std::vector<Instr> t;
  for (int i = 0; i < 6; ++i) t.push_back(storeTo(0x2000 + 64 * i, 1 + i));
  {
    PortsPipe p(onePortEach(), {t});
    const auto at = p.run({6});
    EXPECT_EQ(at[0], (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(p.scheduler.ports().issuedOn(3), 6u);  // store_address
    EXPECT_EQ(p.scheduler.ports().issuedOn(4), 6u);  // store_data
  }
  {
    Config c = onePortEach();
    c.core.ports = portsOf({"int_alu branch", "int_mul int_div fp_add fp_mul fp_div", "load",
                            "store_address store_data"});
    PortsPipe p(c, {t});
    const auto at = p.run({6});
    EXPECT_EQ(at[0].back(), 12u);
    EXPECT_EQ(p.scheduler.ports().issuedOn(3), 12u);
  }
}

TEST(IssuePorts, AnUnpipelinedDividerKeepsItsPortsUnitBusyForItsInterval) {
  // Two independent divides, one divider (latency 10, unpipelined) on a port that also feeds fp_add: the second
  // divide waits for the unit (cycle 11), while an fadd issues on the same port at cycle 2 (the port is free; only
  // its divider is busy).
  Config c = onePortEach();
  c.core.fu.int_div.latency = 10;
  c.core.fu.int_div.pipelined = false;
  PortsPipe p(c, {{instr(OpClass::IDiv, {1}), instr(OpClass::IDiv, {2}), instr(OpClass::FAdd, {fpReg(1)})}});
  const auto at = p.run({3});
  EXPECT_EQ(at[0], (std::vector<std::uint64_t>{1, 11, 2}));
}

TEST(IssuePorts, AMicrocodedInstructionHoldsOneIssueQueueEntryPerUop) {
  // int_div.uops = 6: one divide holds 6 issue-queue entries after rename, a following int 1 (7 in all). Its 5
  // microcode helper uops go to the single ALU port one per cycle (1..5), its divider uop to the divider port at 1;
  // the younger int gets the ALU port after the helpers, at 6. Each issued uop frees its entry.
  Config c = onePortEach();
  c.core.fu.int_div.uops = 6;
  c.core.fu.int_div.latency = 3;
  PortsPipe p(c, {{instr(OpClass::IDiv, {1}), instr(OpClass::Int, {2})}});
  EXPECT_EQ(p.h.queues[QueueKind::Iq].used(0), 7u);
  p.scheduler.issue(Cycle{1});
  EXPECT_EQ(p.h.queues[QueueKind::Iq].used(0), 5u);  // the divider uop and one helper left
  const auto at = p.run({2});
  EXPECT_EQ(at[0], (std::vector<std::uint64_t>{5, 6}));
  EXPECT_EQ(p.h.queues[QueueKind::Iq].used(0), 0u);
  EXPECT_EQ(p.uop(0, 0).doneAt, Cycle{6});  // last helper at 5 + latency 1; the divider's result at 1 + 3 = 4
}

}  // namespace
}  // namespace smtlab::test
