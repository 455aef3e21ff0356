// Single-thread limits derived on paper: the narrowest of the widths and unit counts bounds independent work; a
// dependent chain runs at one instruction per latency; loads pay the AGU plus the latency of the level that serves
// them; random branches pay the mispredict loop (front-end depth + issue + execute + penalty) each.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

// Measured over 60k instructions after a 5k warm-up (cold I-cache lines, pipeline fill).
double singleIpc(const Config& c, const std::string& spec, std::uint64_t n = 60000, std::uint64_t warmup = 5000) {
  return ipcOf(runCounted(c, {spec}, n, warmup), 0);
}

// Wide machine where nothing but the parameter under test limits independent integer work.
Config wide() {
  Config c = baseConfig(1);
  c.core.fetch_width = 8;
  c.core.rename_width = 8;
  c.core.issue_width = 8;
  c.core.retire_width = 8;
  setUnitCount(c.core, UnitClass::IntAlu, 8);
  c.core.uop_queue.entries = 64;
  c.core.rob.entries = 256;
  c.core.iq.entries = 96;
  return c;
}

struct WidthCase {
  const char* name;
  void (*apply)(Config&);
  double expected;
};

TEST(PipelineLimits, IndependentOpsReachTheNarrowestWidthOrUnitCount) {
  const WidthCase cases[] = {
      {"fetch_width=2", [](Config& c) { c.core.fetch_width = 2; }, 2.0},
      {"rename_width=3", [](Config& c) { c.core.rename_width = 3; }, 3.0},
      {"issue_width=2", [](Config& c) { c.core.issue_width = 2; }, 2.0},
      {"retire_width=3", [](Config& c) { c.core.retire_width = 3; }, 3.0},
      {"int_alu.count=2", [](Config& c) { setUnitCount(c.core, UnitClass::IntAlu, 2); }, 2.0},
      {"int_alu.count=5", [](Config& c) { setUnitCount(c.core, UnitClass::IntAlu, 5); }, 5.0},
      {"all 8", [](Config&) {}, 8.0},
      {"defaults (4/4/6/4, 3 ALUs)",
       [](Config& c) {
         const Config d;
         c.core.fetch_width = d.core.fetch_width;
         c.core.rename_width = d.core.rename_width;
         c.core.issue_width = d.core.issue_width;
         c.core.retire_width = d.core.retire_width;
         c.core.fu.int_alu = d.core.fu.int_alu;
         c.core.ports = d.core.ports;  // the 3 ALUs are 3 ports now
       },
       3.0},
  };
  for (const auto& k : cases) {
    Config c = wide();
    k.apply(c);
    const double ipc = singleIpc(c, "gen:alu,count=0");
    EXPECT_NEAR(ipc, k.expected, 0.01 * k.expected) << k.name;
  }
}

TEST(PipelineLimits, DependentChainRunsAtOnePerLatency) {
  struct ChainCase {
    const char* op;
    FuConfig FuSetConfig::*unit;
    std::uint32_t latency;
    bool pipelined;
  };
  const ChainCase cases[] = {
      {"int", &FuSetConfig::int_alu, 1, true},   {"int", &FuSetConfig::int_alu, 2, true},
      {"imul", &FuSetConfig::int_mul, 4, true},  {"fadd", &FuSetConfig::fp_add, 3, true},
      {"fmul", &FuSetConfig::fp_mul, 6, true},   {"idiv", &FuSetConfig::int_div, 13, false},
      {"fdiv", &FuSetConfig::fp_div, 17, false},
  };
  for (const auto& k : cases) {
    Config c = baseConfig(1);
    FuConfig& fu = c.core.fu.*k.unit;
    fu.latency = k.latency;
    fu.pipelined = k.pipelined;
    const std::string spec = std::string("gen:chain,count=0,op=") + k.op;
    const double ipc = singleIpc(c, spec, 2000 + 20000 / k.latency, 500);
    EXPECT_NEAR(ipc, 1.0 / k.latency, 0.01 / k.latency) << spec << " latency " << k.latency;
  }
}

TEST(PipelineLimits, UnpipelinedDividersBoundIndependentDivides) {
  // Independent divides, all in one code line: 2 unpipelined dividers of latency 12 finish 2 per 12 cycles; the same
  // units pipelined accept 2 per cycle.
  std::vector<Instr> divides;
  for (int i = 0; i < 1200; ++i) divides.push_back(op(OpClass::IDiv, 0x400000 + 4 * (i % 16), {1 + i % 8}, {60}));
  Config c = baseConfig(1);
  c.core.fu.int_div = {12, false};
  setUnitCount(c.core, UnitClass::IntDiv, 2);
  // Fetched 4 per cycle from cycle 270, the first pair is renamed at 275 and issues at 276; pair k completes at
  // 276 + 12 (k + 1); the 600th pair at 276 + 7200.
  EXPECT_EQ(endCycleAlone(c, divides), 276u + 12 * 600);
  c.core.fu.int_div.pipelined = true;
  // Pipelined: 2 per cycle from 276, limited by nothing else (fetch and rename give 4 per cycle); the last pair
  // issues at 276 + 599 and completes 12 later.
  EXPECT_EQ(endCycleAlone(c, divides), 276u + 599 + 12);
}

TEST(PipelineLimits, L1ResidentLoadChainPaysAguPlusL1Latency) {
  struct LoadCase {
    std::uint32_t agu, l1;
  };
  for (const LoadCase k : {LoadCase{0, 4}, LoadCase{1, 4}, LoadCase{2, 5}}) {
    Config c = baseConfig(1);
    c.core.fu.load.latency = k.agu;
    c.mem.l1d.latency = k.l1;
    const double perLoad = k.agu + k.l1;
    const auto stats = runCounted(c, {"gen:chain,op=load,footprint=4k,count=0"}, 20000, 1000);
    EXPECT_NEAR(1.0 / ipcOf(stats, 0), perLoad, 0.01 * perLoad) << "agu " << k.agu << " l1d " << k.l1;
    EXPECT_EQ(u64(cpuStats(stats, 0).at("loads_by_level").at("l1")), 20000u);
  }
}

TEST(PipelineLimits, PointerChaseBeyondTheLlcPaysTheWholeMemoryPath) {
  Config c = baseConfig(1);
  c.core.fu.load.latency = 1;
  c.mem.llc.latency = 50;
  c.mem.dram.latency = 300;
  c.mem.dtlb.miss_latency = 20;
  // 64 MiB = 1 Mi lines, 16 Ki pages: each of the first 1 Mi loads touches a new line (cold in every level), and the
  // page of a random line is in the 64-entry DTLB with probability about 64 / 16384. Loads depend on each other, so
  // nothing overlaps: AGU + DTLB walk + LLC + DRAM per load.
  const double pTlbHit = 64.0 / 16384.0;
  const double perLoad = 1 + 20 * (1 - pTlbHit) + 50 + 300;
  const auto stats = runCounted(c, {"gen:chase,footprint=64m,count=0"}, 3000, 200);
  const auto& cpu = cpuStats(stats, 0);
  EXPECT_NEAR(1.0 / ipcOf(stats, 0), perLoad, 0.005 * perLoad);
  EXPECT_EQ(u64(cpu.at("loads_by_level").at("dram")), 3000u);
}

TEST(PipelineLimits, ChaseWithIndependentWorkHidesTheWorkUnderTheMiss) {
  // 100 independent ints per chase load fit in the 128-entry ROB with the next load, which issues as soon as the
  // previous one returns: one group of 101 instructions per memory latency.
  Config c = baseConfig(1);
  c.core.fu.load.latency = 1;
  const double perLoad = 1 + 30 * (1 - 64.0 / 16384.0) + 40 + 200;
  const auto stats = runCounted(c, {"gen:chase,footprint=64m,work=100,count=0"}, 101 * 400, 101 * 20);
  EXPECT_NEAR(ipcOf(stats, 0), 101 / perLoad, 0.01 * 101 / perLoad);
}

TEST(PipelineLimits, LoadPortsBoundIndependentL1Loads) {
  // gen:stream over 16 KiB: independent 8-byte loads, all L1 hits after the first pass.
  for (std::uint32_t ports : {1u, 2u, 3u}) {
    Config c = wide();
    c.core.fu.load = {1, true};
  setUnitCount(c.core, UnitClass::Load, ports);
    c.core.lq.entries = 96;
    const double ipc = singleIpc(c, "gen:stream,footprint=16k,count=0", 60000, 6000);
    EXPECT_NEAR(ipc, ports, 0.01 * ports) << ports << " load ports";
  }
}

TEST(PipelineLimits, DramBandwidthBoundsAStreamingThread) {
  // Independent loads over 64 MiB, 8 per 64-byte line: each line is one DRAM transfer of 64 / bytes_per_cycle cycles.
  // Latency-bound, the 48-entry load queue would allow 48 loads per ~270 cycles (0.18 IPC); with 1 or 0.5 bytes per
  // cycle the channel allows 8 loads per 64 or 128 cycles: 0.125 or 0.0625 IPC.
  for (double bytesPerCycle : {1.0, 0.5}) {
    Config c = baseConfig(1);
    c.mem.dram.bytes_per_cycle = bytesPerCycle;
    const double expected = 8 * bytesPerCycle / 64;
    const auto stats = runCounted(c, {"gen:stream,footprint=64m,count=0"}, 24000, 2400);
    EXPECT_NEAR(ipcOf(stats, 0), expected, 0.02 * expected) << bytesPerCycle << " bytes per cycle";
  }
}

Config branchConfig() {
  // Groups of 3 ints + 1 branch; every group needs 4 ALU ops and 4 fetch slots, so the core runs one group per cycle
  // when branches are predicted.
  Config c = baseConfig(1);
  c.core.fetch_width = 4;
  c.core.rename_width = 4;
  c.core.retire_width = 4;
  c.core.issue_width = 6;
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 4);
  c.core.frontend_depth = 5;
  c.core.branch.mispredict_penalty = 10;
  return c;
}

TEST(PipelineLimits, RandomBranchesPayTheMispredictLoopEach) {
  const Config c = branchConfig();
  const std::uint64_t n = 80000;
  const auto predictable = runCounted(c, {"gen:branchy,work=3,predictability=1.0,count=0"}, n, 8000);
  const auto random = runCounted(c, {"gen:branchy,work=3,predictability=0.5,count=0"}, n, 8000);
  const auto& p = cpuStats(predictable, 0);
  const auto& r = cpuStats(random, 0);
  // Always taken and learnt: one group of 4 per cycle.
  EXPECT_EQ(u64(p.at("mispredicts")), 0u);
  EXPECT_NEAR(ipcOf(predictable, 0), 4.0, 0.04);
  // Random outcomes: about half the branches (one per 4 instructions) mispredict.
  const double mispredicts = num(r.at("mispredicts"));
  EXPECT_NEAR(mispredicts / (n / 4.0), 0.5, 0.05);
  // A mispredicted branch fetched at f is renamed at f + depth, issues at f + depth + 1, resolves at f + depth + 2 and
  // fetch resumes at f + depth + 2 + penalty instead of f + 1: it costs depth + 1 + penalty = 16 cycles.
  const double perMispredict = (num(r.at("cycles")) - num(p.at("cycles"))) / mispredicts;
  EXPECT_NEAR(perMispredict, 5 + 1 + 10, 0.5);
  // The CPI stack charges those cycles to branch mispredicts, except the two in which the branch's group waits at the
  // ROB head for its issue and execution (charged to execution): 16 - 2 = 14 per mispredict.
  const double stacked = num(r.at("cpi_stack_cycles").at("branch_mispredict"));
  EXPECT_NEAR(stacked / mispredicts, 5 + 1 + 10 - 2, 0.5);
  EXPECT_NEAR(num(r.at("cpi_stack_cycles").at("execute")) / mispredicts, 2, 0.2);
}

TEST(PipelineLimits, MispredictCostFollowsPenaltyAndDepth) {
  Config c = branchConfig();
  c.core.branch.mispredict_penalty = 25;
  c.core.frontend_depth = 8;
  const std::uint64_t n = 40000;
  const auto predictable = runCounted(c, {"gen:branchy,work=3,predictability=1.0,count=0"}, n, 4000);
  const auto random = runCounted(c, {"gen:branchy,work=3,predictability=0.5,count=0"}, n, 4000);
  const double perMispredict = (num(cpuStats(random, 0).at("cycles")) - num(cpuStats(predictable, 0).at("cycles"))) /
                               num(cpuStats(random, 0).at("mispredicts"));
  EXPECT_NEAR(perMispredict, 8 + 1 + 25, 0.5);
}

}  // namespace
}  // namespace smtlab::test
