// Multiprogram metrics (`smtlab run --baselines`, RunOptions::baselines, docs/metrics.md): each trace is run alone on
// its own logical CPU, and the run reports each thread's speedup with STP, ANTT, hmean and fairness. Expected values
// are derived from the machine's bounds on paper.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

// Two threads on one core with 3 single-cycle ALUs, 4-wide fetch and rename, queues partitioned: an ALU-only thread
// alone is bound by the 3 ALUs (IPC 3); two of them share the ALUs, 1.5 each.
Config threeAluCore() {
  Config c = baseConfig(2);
  c.core.fetch_width = 4;
  c.core.rename_width = 4;
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 3);
  return c;
}

json::object runWithBaselines(const Config& c, const std::vector<std::string>& specs, std::uint64_t n) {
  RunOptions options;
  options.maxInstructions = n;
  options.warmup = 2000;
  options.baselines = true;
  return runTraces(c, specs, options).stats;
}

TEST(Multiprogram, TwoAluThreadsSharingThreeAlusEachRunAtHalfTheirAloneSpeed) {
  // Alone: IPC 3 (the ALUs). Together: 3 per cycle between the two, 1.5 each. So each speedup is 0.5 and
  // STP = 0.5 + 0.5 = 1.0 (no gain over running them one after the other), ANTT = mean(1 / 0.5) = 2.0,
  // hmean = 2 / (2 + 2) = 0.5, fairness = 0.5 / 0.5 = 1. Bands: 5 % for the turns of fetch and rename.
  const auto stats = runWithBaselines(threeAluCore(), {"gen:alu,count=0", "gen:alu,count=0"}, 60000);
  const auto& mp = stats.at("multiprogram").as_object();
  const auto& threads = mp.at("threads").as_array();
  ASSERT_EQ(threads.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& t = threads[i].as_object();
    EXPECT_EQ(u64(t.at("cpu")), i);
    EXPECT_NEAR(num(t.at("ipc_alone")), 3.0, 0.05 * 3.0) << i;
    EXPECT_NEAR(num(t.at("ipc")), 1.5, 0.05 * 1.5) << i;
    EXPECT_DOUBLE_EQ(num(t.at("ipc")), ipcOf(stats, i)) << "the shared IPC is the run's own";
    EXPECT_NEAR(num(t.at("speedup")), 0.5, 0.05 * 0.5) << i;
    EXPECT_EQ(u64(t.at("instructions_alone")), 60000u);
  }
  EXPECT_NEAR(num(mp.at("stp")), 1.0, 0.05);
  EXPECT_NEAR(num(mp.at("antt")), 2.0, 0.1);
  EXPECT_NEAR(num(mp.at("hmean")), 0.5, 0.025);
  EXPECT_NEAR(num(mp.at("fairness")), 1.0, 0.05);
  EXPECT_LE(num(mp.at("fairness")), 1.0);
}

TEST(Multiprogram, TheMetricsFollowTheirDefinitionsFromTheSpeedups) {
  // A pair far from symmetric (a DRAM chase beside an ALU thread): whatever the speedups s_i, STP = s_0 + s_1,
  // ANTT = (1/s_0 + 1/s_1) / 2, hmean = 2 / (1/s_0 + 1/s_1), fairness = min / max, and s_i = IPC shared / alone.
  const auto stats = runWithBaselines(threeAluCore(), {"gen:chase,footprint=16m,count=0", "gen:alu,count=0"}, 3000);
  const auto& mp = stats.at("multiprogram").as_object();
  const auto& t = mp.at("threads").as_array();
  const double s0 = num(t[0].as_object().at("speedup"));
  const double s1 = num(t[1].as_object().at("speedup"));
  EXPECT_DOUBLE_EQ(s0, num(t[0].as_object().at("ipc")) / num(t[0].as_object().at("ipc_alone")));
  EXPECT_DOUBLE_EQ(num(mp.at("stp")), s0 + s1);
  EXPECT_DOUBLE_EQ(num(mp.at("antt")), (1 / s0 + 1 / s1) / 2);
  EXPECT_DOUBLE_EQ(num(mp.at("hmean")), 2 / (1 / s0 + 1 / s1));
  EXPECT_DOUBLE_EQ(num(mp.at("fairness")), std::min(s0, s1) / std::max(s0, s1));
  // The chase alone is bound by its memory path; beside the ALU thread it loses at most a little (partitioned
  // queues): its speedup is in (0.5, 1.05]. The ALU thread keeps its 3 ALUs nearly to itself.
  EXPECT_GT(s0, 0.5);
  EXPECT_LE(s0, 1.05);
  EXPECT_GT(s1, 0.5);
  EXPECT_LE(s1, 1.05);
}

TEST(Multiprogram, BaselinesAreRefusedForOneTraceAndBesideSnapshots) {
  RunOptions options;
  options.maxInstructions = 1000;
  options.baselines = true;
  try {
    runTraces(threeAluCore(), {"gen:alu,count=0"}, options);
    ADD_FAILURE() << "one trace accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("two or more traces"), std::string::npos) << e.what();
  }
  options.sample = SampleOptions{};
  options.snapshotDir = "never-written";
  try {
    runTraces(threeAluCore(), {"gen:alu,count=0", "gen:alu,count=0"}, options);
    ADD_FAILURE() << "a sampled run with snapshots accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--snapshots"), std::string::npos) << e.what();
  }
}

// A sampled run with baselines: the shared run sampled, then each trace alone sampled with the same options on the
// CPU (and address space) it had.
RunOptions sampledBaselines(std::uint64_t n) {
  RunOptions options;
  options.maxInstructions = n;
  options.baselines = true;
  SampleOptions s;
  s.period = 20000;
  s.window = 2000;
  s.warmup = 2000;
  options.sample = s;
  return options;
}

TEST(Multiprogram, SampledBaselinesAreEachTraceSampledAloneOnItsOwnCpu) {
  // Trace i's alone run is the sampled run of that trace by itself from CPU i: the same windows, so the same IPC
  // and interval to the last bit, and the shared IPCs are the shared run's own.
  const Config c = threeAluCore();
  const std::vector<std::string> specs{"gen:mix,count=0", "gen:chase,footprint=1m,count=0"};
  const RunOptions options = sampledBaselines(200000);
  const json::object stats = runTraces(c, specs, options).stats;
  const auto& threads = stats.at("multiprogram").at("threads").as_array();
  ASSERT_EQ(threads.size(), 2u);
  for (std::uint32_t i = 0; i < 2; ++i) {
    RunOptions alone = options;
    alone.baselines = false;
    alone.firstCpu = i;
    const json::object a = runSampled(c, {specs[i]}, alone).stats;
    const auto& aloneCpu = a.at("logical_cpus").as_array().at(0).as_object();
    EXPECT_EQ(u64(aloneCpu.at("id")), i);
    const auto& t = threads[i].as_object();
    EXPECT_DOUBLE_EQ(num(t.at("ipc_alone")), num(aloneCpu.at("ipc"))) << i;
    EXPECT_DOUBLE_EQ(num(t.at("ipc_alone_ci95")), num(aloneCpu.at("ipc_ci95"))) << i;
    EXPECT_DOUBLE_EQ(num(t.at("ipc")), ipcOf(stats, i)) << i;
    EXPECT_DOUBLE_EQ(num(t.at("ipc_ci95")), num(cpuStats(stats, i).at("ipc_ci95"))) << i;
  }
}

TEST(Multiprogram, SampledMetricsCarryTheirPropagatedIntervals) {
  // First-order propagation, the estimates independent: a speedup s = a / b has relative half-width
  // sqrt((ha/a)^2 + (hb/b)^2); STP's half-width is the root of the speedups' squared half-widths; 1/s has half-width
  // h/s^2, so ANTT's is the root of the sum of (h_i/s_i^2)^2 over n; hmean = 1/ANTT has h_ANTT / ANTT^2; fairness =
  // min/max has the relative half-widths of the two combined as for a ratio.
  const json::object stats =
      runTraces(threeAluCore(), {"gen:mix,count=0", "gen:chase,footprint=1m,count=0"}, sampledBaselines(200000)).stats;
  const auto& mp = stats.at("multiprogram").as_object();
  const auto& t = mp.at("threads").as_array();
  double s[2], h[2];
  for (int i = 0; i < 2; ++i) {
    const auto& o = t[i].as_object();
    const double a = num(o.at("ipc")), ha = num(o.at("ipc_ci95"));
    const double b = num(o.at("ipc_alone")), hb = num(o.at("ipc_alone_ci95"));
    s[i] = a / b;
    h[i] = s[i] * std::sqrt((ha / a) * (ha / a) + (hb / b) * (hb / b));
    EXPECT_DOUBLE_EQ(num(o.at("speedup")), s[i]);
    EXPECT_NEAR(num(o.at("speedup_ci95")), h[i], 1e-12 * s[i]);
    EXPECT_GT(h[i], 0.0) << "a sampled estimate has an interval";
  }
  EXPECT_NEAR(num(mp.at("stp_ci95")), std::sqrt(h[0] * h[0] + h[1] * h[1]), 1e-12);
  const double antt = (1 / s[0] + 1 / s[1]) / 2;
  const double anttCi = std::sqrt(std::pow(h[0] / (s[0] * s[0]), 2) + std::pow(h[1] / (s[1] * s[1]), 2)) / 2;
  EXPECT_NEAR(num(mp.at("antt")), antt, 1e-12 * antt);
  EXPECT_NEAR(num(mp.at("antt_ci95")), anttCi, 1e-12 * antt);
  EXPECT_NEAR(num(mp.at("hmean_ci95")), anttCi / (antt * antt), 1e-12);
  const int lo = s[0] <= s[1] ? 0 : 1, hi = 1 - lo;
  EXPECT_NEAR(num(mp.at("fairness_ci95")),
              s[lo] / s[hi] * std::sqrt(std::pow(h[lo] / s[lo], 2) + std::pow(h[hi] / s[hi], 2)), 1e-12);
}

TEST(Multiprogram, DetailedMetricsHaveNoIntervals) {
  const auto stats = runWithBaselines(threeAluCore(), {"gen:alu,count=0", "gen:alu,count=0"}, 3000);
  const auto& mp = stats.at("multiprogram").as_object();
  for (const char* key : {"stp_ci95", "antt_ci95", "hmean_ci95", "fairness_ci95"}) EXPECT_FALSE(mp.contains(key));
  EXPECT_FALSE(mp.at("threads").as_array()[0].as_object().contains("speedup_ci95"));
}

}  // namespace
}  // namespace smtlab::test
