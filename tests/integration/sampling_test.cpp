// Sampled simulation (docs/sampling.md): functional warming keeps the state a detailed window uses, lanes advance at
// their rates, and a sampled run finds an IPC worked out on paper within its confidence interval.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../scratch_dir.hpp"
#include "helpers.hpp"
#include "smtlab/sim/sampling.hpp"
#include "smtlab/trace/native_format.hpp"

namespace smtlab::test {
namespace {

// A sampled run's options: a window every `period` instructions per thread, `window` measured after `warmup`.
RunOptions sampled(std::uint64_t period, std::uint64_t window, std::uint64_t warmup, double target = 0) {
  RunOptions options;
  SampleOptions s;
  s.period = period;
  s.window = window;
  s.warmup = warmup;
  s.target = target;
  options.sample = s;
  return options;
}

// `lines` loads, one per 64-byte line from 0x10000, each an independent int op's neighbour (no dependences).
std::vector<Instr> lineWalk(int lines, int rounds) {
  std::vector<Instr> v;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < lines; ++i) v.push_back(load(0x1000 + 4 * Addr(i % 16), 1 + i % 8, {}, 0x10000 + 64 * Addr(i)));
  }
  return v;
}

TEST(FunctionalWarming, LeavesTheDataLinesInTheCacheForADetailedRun) {
  // 32 lines (2 KiB) fit every L1D the presets have: cold, a detailed pass misses each line once; warmed first by
  // functional warming over the same lines, it misses none.
  const Config config = widthOneConfig();
  for (const bool warmFirst : {false, true}) {
    Machine m(config);
    if (warmFirst) {
      auto warmCursor = cursorFor(lineWalk(32, 1));
      WarmLane lane;
      lane.cpu = LogicalCpu{0};
      lane.cursor = warmCursor.get();
      lane.asid = Asid{1};
      std::vector<WarmLane> lanes{lane};
      m.warm(lanes, 1000);
      EXPECT_EQ(lanes[0].done, 32u);
      EXPECT_TRUE(lanes[0].ended);
      m.resetStats();
    }
    m.attach(LogicalCpu{0}, cursorFor(lineWalk(32, 1)), Asid{1});
    runToEnd(m);
    const json::object s = m.statsJson();
    const auto misses = u64(s.at("cores").as_array().at(0).at("l1d").at("misses"));
    EXPECT_EQ(misses, warmFirst ? 0u : 32u) << (warmFirst ? "warmed" : "cold");
  }
}

TEST(FunctionalWarming, TrainsTheBranchPredictor) {
  // One conditional branch at one pc, taken twice, then not twice, over and over: a history predictor sees four
  // contexts, each a 2-bit counter that starts weakly taken, so cold it mispredicts at least the first not-taken of
  // the two not-taken contexts; after functional warming over the same 200 branches every counter is saturated the
  // right way and none is mispredicted.
  std::vector<Instr> branches;
  for (int i = 0; i < 200; ++i) {
    Instr b = opAt(0x4000, OpClass::Branch, -1, -1);
    b.taken = (i / 2) % 2 == 0;  // taken, taken, not, not, ...
    b.target = 0x4000;
    branches.push_back(b);
  }
  const Config config = widthOneConfig();
  for (const bool warmFirst : {false, true}) {
    Machine m(config);
    if (warmFirst) {
      auto warmCursor = cursorFor(branches);
      std::vector<WarmLane> lanes(1);
      lanes[0].cpu = LogicalCpu{0};
      lanes[0].cursor = warmCursor.get();
      lanes[0].asid = Asid{1};
      m.warm(lanes, 200);
      EXPECT_EQ(lanes[0].done, 200u);
    }
    m.attach(LogicalCpu{0}, cursorFor(branches), Asid{1});
    runToEnd(m);
    const auto mispredicts = u64(cpuStats(m.statsJson(), 0).at("mispredicts"));
    if (warmFirst) {
      EXPECT_EQ(mispredicts, 0u);
    } else {
      EXPECT_GE(mispredicts, 2u);
    }
  }
}

TEST(FunctionalWarming, LanesAdvanceAtTheirRatesInSharedTime) {
  // 1000 cycles at 1 and at 0.25 instructions per cycle: 1000 and 250 instructions; simulated time moves by 1000.
  const Config config = baseConfig(2);
  Machine m(config);
  auto a = cursorFor("gen:alu,count=0");
  auto b = cursorFor("gen:alu,count=0");
  std::vector<WarmLane> lanes(2);
  lanes[0].cpu = LogicalCpu{0};
  lanes[0].cursor = a.get();
  lanes[0].ipc = 1.0;
  lanes[1].cpu = LogicalCpu{1};
  lanes[1].cursor = b.get();
  lanes[1].ipc = 0.25;
  const Cycle before = m.now();
  m.warm(lanes, 1000);
  EXPECT_EQ(lanes[0].done, 1000u);
  EXPECT_EQ(lanes[1].done, 250u);
  EXPECT_EQ(m.now().value - before.value, 1000u);
  EXPECT_EQ(a->retired(), 1000u);
}

TEST(FunctionalWarming, RefusesAnAttachedCpuAndABadRate) {
  Machine m(baseConfig(1));
  auto c = cursorFor("gen:alu,count=0");
  m.attach(LogicalCpu{0}, c, Asid{1});
  std::vector<WarmLane> lanes(1);
  lanes[0].cpu = LogicalCpu{0};
  lanes[0].cursor = c.get();
  EXPECT_THROW(m.warm(lanes, 10), UsageError);
  m.detach(LogicalCpu{0});
  lanes[0].ipc = std::nan("");
  EXPECT_THROW(m.warm(lanes, 10), UsageError);
  lanes[0].ipc = 1;
  lanes[0].cpu = LogicalCpu{7};
  EXPECT_THROW(m.warm(lanes, 10), UsageError);
}

// Phases of `block` independent integer ops (IPC 1 on the scalar machine) and `block` dependent 3-cycle multiplies
// (IPC 1/3), `pairs` times: 2 x block instructions take block + 3 x block cycles, so the whole trace's IPC is 1/2.
std::string writePhaseTrace(const ScratchDir& dir, int block, int pairs) {
  const std::string path = (dir / "phases.trace").string();
  NativeTraceWriter w(path);
  for (int p = 0; p < pairs; ++p) {
    for (int i = 0; i < block; ++i) w.write(opAt(0x1000 + 4 * Addr(i % 64), OpClass::Int, 1 + i % 16, -1));
    for (int i = 0; i < block; ++i) w.write(opAt(0x2000 + 4 * Addr(i % 64), OpClass::IMul, 20, 20));
  }
  w.close();
  return path;
}

TEST(SampledRun, ThePhaseTraceRunsAtOneHalfInDetail) {
  // The paper figure the sampled runs below are held to, checked on the detailed run (up to the pipeline's fill and
  // the few cycles each phase change costs).
  ScratchDir dir("sampling");
  const std::string trace = writePhaseTrace(dir, 20'000, 10);
  EXPECT_NEAR(ipcOf(runCounted(widthOneConfig(), {trace}, 0), 0), 0.5, 0.001);
}

TEST(SampledRun, FindsThePhaseTracesIpcOfOneHalfWithinItsInterval) {
  ScratchDir dir("sampling");
  const std::string trace = writePhaseTrace(dir, 20'000, 40);  // 1.6 M instructions
  const Config config = widthOneConfig();
  const json::object stats = runTraces(config, {trace}, sampled(30'000, 2'000, 2'000)).stats;
  const json::object& cpu = cpuStats(stats, 0);
  const double ipc = num(cpu.at("ipc"));
  const double ci = num(cpu.at("ipc_ci95"));
  EXPECT_EQ(u64(cpu.at("instructions")), 1'600'000u);
  EXPECT_GE(u64(cpu.at("windows")), 30u);
  EXPECT_LE(std::abs(ipc - 0.5), ci) << "ipc " << ipc << " +- " << ci;
  // Two phases with IPC 1 and 1/3 make the windows vary: the interval is not empty, and a reasonable sample bounds
  // it well under the phases' difference.
  EXPECT_GT(ci, 0.0);
  EXPECT_LT(ci, 0.1);
  const json::object& sampling = stats.at("sampling").as_object();
  EXPECT_GT(u64(sampling.at("functional_instructions")), u64(sampling.at("detailed_instructions")));
  EXPECT_EQ(u64(sampling.at("functional_instructions")) + u64(sampling.at("detailed_instructions")), 1'600'000u);
}

TEST(SampledRun, ATargetHalfWidthTakesMoreWindowsAndAPeriodInStepWithThePhasesDoesNotAlias) {
  // 200 k instructions is five repetitions of the trace's two phases: windows at a fixed point of each period would
  // all fall in one phase (IPC 1 or 1/3, with an interval of almost nothing); at a random point of each they find
  // 1/2 within their interval.
  ScratchDir dir("sampling");
  const std::string trace = writePhaseTrace(dir, 20'000, 40);
  const json::object stats = runTraces(widthOneConfig(), {trace}, sampled(200'000, 2'000, 2'000, 0.05)).stats;
  const json::object& sampling = stats.at("sampling").as_object();
  EXPECT_GT(u64(sampling.at("passes")), 1u);
  EXPECT_LT(u64(sampling.at("period_instructions")), 200'000u);
  ASSERT_TRUE(sampling.at("target_met").is_bool());
  const double rel = num(sampling.at("max_relative_half_width"));
  EXPECT_EQ(sampling.at("target_met").as_bool(), rel <= 0.05);
  const json::object& cpu = cpuStats(stats, 0);
  EXPECT_LE(std::abs(num(cpu.at("ipc")) - 0.5), num(cpu.at("ipc_ci95")));
}

TEST(SampledRun, RefusesOptionsThatCannotWork) {
  RunOptions options;
  SampleOptions s;
  s.period = 10'000;  // shorter than warm-up + window
  options.sample = s;
  EXPECT_THROW(runTraces(baseConfig(1), {"gen:alu"}, options), UsageError);
  s.period = 0;
  s.target = 1.5;
  options.sample = s;
  EXPECT_THROW(runTraces(baseConfig(1), {"gen:alu"}, options), UsageError);
  s.target = 0;
  options.sample = s;
  options.warmup = 1000;
  EXPECT_THROW(runTraces(baseConfig(1), {"gen:alu"}, options), UsageError);
}

TEST(SampledRun, AWarmUpTooShortIsDetected) {
  // 2 k-instruction windows of gen:alu on netburst: with a warm-up of one instruction each window starts with an
  // empty pipeline, which its first half pays (a fill of tens of cycles against about 350 cycles of half a window),
  // so the IPC reads low and the check must say the windows start cold; after 20 k instructions of warm-up the
  // pipeline is full, the halves run alike and the IPC is the detailed run's.
  const Config config = loadConfig("netburst");
  const double detailed = ipcOf(runCounted(config, {"gen:alu"}, 2'000'000), 0);
  for (const std::uint64_t warmup : {std::uint64_t{1}, std::uint64_t{20'000}}) {
    RunOptions options = sampled(50'000, 2'000, warmup);
    options.maxInstructions = 2'000'000;
    const json::object stats = runTraces(config, {"gen:alu"}, options).stats;
    const json::object& cpu = cpuStats(stats, 0);
    const bool cold = cpu.at("warmup_check").at("cold").as_bool();
    EXPECT_EQ(stats.at("sampling").at("warmup_suspect").as_bool(), cold);
    if (warmup == 1) {
      EXPECT_TRUE(cold) << json::serialize(cpu.at("warmup_check"));
      EXPECT_LT(num(cpu.at("ipc")), 0.995 * detailed);
    } else {
      EXPECT_FALSE(cold) << json::serialize(cpu.at("warmup_check"));
      EXPECT_NEAR(num(cpu.at("ipc")), detailed, 0.005 * detailed);
    }
  }
}

TEST(SampledRun, ThreadsAdvanceByTimeSoTheCoPhaseIsTheDetailedRunsOne) {
  // gen:alu (3 M) beside gen:fp (1.2 M) on one netburst core. Alone alu retires about 2.8 per cycle; beside fp, which
  // keeps its own 1 per cycle, about 1.5. In time fp ends first, after about 1.2 M cycles, when alu has done about
  // 1.8 M: alu runs alone for its last 1.2 M, about 1.84 in all. Were both advanced by equal instruction counts, fp
  // would end when alu is at 1.2 M, leaving alu 1.8 M alone: about 2.07. The sampled run must find the detailed
  // run's figure within its interval; the equal-count run must miss it by more than 5 % and by far more.
  const Config config = loadConfig("netburst");
  const std::vector<std::string> pair{"gen:alu,count=3000000", "gen:fp,count=1200000"};
  const double detailed = ipcOf(runCounted(config, pair, 0), 0);
  EXPECT_NEAR(detailed, 1.84, 0.1);
  RunOptions options = sampled(200'000, 10'000, 10'000);
  const json::object coPhase = runTraces(config, pair, options).stats;
  const double ipc = num(cpuStats(coPhase, 0).at("ipc"));
  const double ci = num(cpuStats(coPhase, 0).at("ipc_ci95"));
  EXPECT_LE(std::abs(ipc - detailed), std::max(ci, 0.01 * detailed)) << ipc << " +- " << ci << " vs " << detailed;
  options.sample->coPhase = false;
  const json::object lockStep = runTraces(config, pair, options).stats;
  const double wrong = num(cpuStats(lockStep, 0).at("ipc"));
  EXPECT_GT(std::abs(wrong - detailed), 0.05 * detailed) << wrong;
  EXPECT_GT(std::abs(wrong - detailed), 3 * std::abs(ipc - detailed)) << wrong << " against " << ipc;
}

}  // namespace
}  // namespace smtlab::test
