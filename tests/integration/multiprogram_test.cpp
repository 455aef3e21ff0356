// Multiprogram metrics (`smtlab run --baselines`, RunOptions::baselines, docs/metrics.md): each trace is run alone on
// its own logical CPU, and the run reports each thread's speedup with STP, ANTT, hmean and fairness. Expected values
// are derived from the machine's bounds on paper.
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

TEST(Multiprogram, BaselinesAreRefusedForOneTraceAndForASampledRun) {
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
  try {
    runTraces(threeAluCore(), {"gen:alu,count=0", "gen:alu,count=0"}, options);
    ADD_FAILURE() << "a sampled run accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--sample"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace smtlab::test
