// Window snapshots (docs/sampling.md "Window snapshots"): a sampled run writes the machine's state at every window's
// start; simulating the windows again from those files gives the run's statistics bit for bit (the invariant: a
// snapshot holds everything a window depends on), and a damaged, foreign or newer snapshot is refused by name.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../scratch_dir.hpp"
#include "helpers.hpp"
#include "smtlab/sim/snapshot.hpp"

namespace smtlab::test {
namespace {

// Two threads on one netburst core, about ten windows: quick, and both threads share the caches, the predictor
// tables, the store buffer and the fetch policy's turn, so a part left out of the snapshot shows.
const std::vector<std::string> kSnapshotTraces{"gen:mix", "gen:branchy"};

RunOptions snapshotRunOptions(const std::filesystem::path& dir) {
  RunOptions options;
  options.maxInstructions = 600'000;
  SampleOptions s;
  s.period = 60'000;
  s.window = 5'000;
  s.warmup = 5'000;
  options.sample = s;
  options.snapshotDir = dir.string();
  return options;
}

// The statistics without the host's timings and the replay's own note.
json::object withoutHostFigures(json::object stats) {
  stats.erase("host_seconds");
  stats.erase("instructions_per_host_second");
  stats.erase("snapshots");
  return stats;
}

// Message of the error runFromSnapshots throws, or "" if it does not.
std::string replayError(const std::filesystem::path& dir, const Config& config) {
  try {
    runFromSnapshots(dir.string(), config, {});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void patchByte(const std::filesystem::path& file, std::streamoff at, char value) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(at);
  f.put(value);
}

TEST(WindowSnapshots, ReplayingEveryWindowGivesTheSampledRunsStatisticsBitForBit) {
  ScratchDir dir("snapshots");
  const Config config = loadConfig("netburst");
  const RunResult serial = runTraces(config, kSnapshotTraces, snapshotRunOptions(dir.path()));
  const json::object& sampling = serial.stats.at("sampling").as_object();
  const std::uint64_t windows = u64(sampling.at("windows"));
  ASSERT_GE(windows, 8u);
  ASSERT_GT(u64(sampling.at("functional_instructions")), 0u);  // the windows are apart: warming in between
  for (std::uint64_t k = 0; k < windows; ++k) {
    EXPECT_TRUE(std::filesystem::exists(dir / fmt::format("window-{:06}.snap", k))) << k;
  }

  const RunResult replayed = runFromSnapshots(dir.path().string(), snapshotConfig(dir.path().string()), {});
  // The windows' IPCs one by one, then everything: intervals, CPI stacks, counters, the sampling object.
  for (std::size_t cpu = 0; cpu < kSnapshotTraces.size(); ++cpu) {
    const json::array& was = cpuStats(serial.stats, cpu).at("window_ipc").as_array();
    const json::array& is = cpuStats(replayed.stats, cpu).at("window_ipc").as_array();
    ASSERT_EQ(was.size(), is.size()) << "cpu " << cpu;
    EXPECT_GE(was.size(), 4u) << "cpu " << cpu;  // a thread past its N is not measured, but keeps its sibling company
    for (std::size_t k = 0; k < was.size(); ++k) EXPECT_EQ(was[k], is[k]) << "cpu " << cpu << " window " << k;
    EXPECT_EQ(cpuStats(serial.stats, cpu).at("ipc"), cpuStats(replayed.stats, cpu).at("ipc"));
    EXPECT_EQ(cpuStats(serial.stats, cpu).at("ipc_ci95"), cpuStats(replayed.stats, cpu).at("ipc_ci95"));
  }
  EXPECT_EQ(serial.stats.at("sampling"), replayed.stats.at("sampling"));
  EXPECT_EQ(withoutHostFigures(serial.stats), withoutHostFigures(replayed.stats));

  // One window alone, from its own snapshot (the traces are read forward to its position): the same IPC.
  const std::uint64_t k = 2;
  SnapshotRunOptions one;
  one.firstWindow = one.lastWindow = k;
  const RunResult single = runFromSnapshots(dir.path().string(), config, one);
  for (std::size_t cpu = 0; cpu < kSnapshotTraces.size(); ++cpu) {
    const json::array& all = cpuStats(serial.stats, cpu).at("window_ipc").as_array();
    const json::array& alone = cpuStats(single.stats, cpu).at("window_ipc").as_array();
    ASSERT_EQ(alone.size(), 1u) << "cpu " << cpu;
    bool found = false;
    for (const json::value& w : all) found = found || w == alone[0];
    EXPECT_TRUE(found) << "cpu " << cpu << ": window " << k << " alone gave " << json::serialize(alone[0]);
    EXPECT_EQ(u64(alone[0].as_array()[0]), k);
  }
}

TEST(WindowSnapshots, ADamagedSnapshotIsRefusedByName) {
  ScratchDir dir("snapshots");
  const Config config = loadConfig("netburst");
  runTraces(config, kSnapshotTraces, snapshotRunOptions(dir.path()));
  const std::filesystem::path file = dir / "window-000002.snap";
  const auto size = static_cast<std::streamoff>(std::filesystem::file_size(file));
  std::ifstream in(file, std::ios::binary);
  in.seekg(size / 2);
  const char byte = static_cast<char>(in.get());
  in.close();
  patchByte(file, size / 2, static_cast<char>(byte ^ 0x10));
  const std::string message = replayError(dir.path(), config);
  EXPECT_NE(message.find("window-000002.snap"), std::string::npos) << message;
  EXPECT_NE(message.find("damaged"), std::string::npos) << message;
}

TEST(WindowSnapshots, ASnapshotOfAnotherCacheSizeIsRefusedNamingTheKey) {
  ScratchDir dir("snapshots");
  const Config config = loadConfig("netburst");
  runTraces(config, kSnapshotTraces, snapshotRunOptions(dir.path()));
  Config bigger = config;
  bigger.mem.l2.size_kb *= 2;
  const std::string message = replayError(dir.path(), bigger);
  EXPECT_NE(message.find("window-000000.snap"), std::string::npos) << message;
  EXPECT_NE(message.find("mem.l2.size_kb"), std::string::npos) << message;
  // A key that only times the detailed model may differ: the windows run under the other fetch policy.
  Config icount = config;
  applyOverride(icount, "core.fetch_policy=icount");
  EXPECT_EQ(replayError(dir.path(), icount), "");
}

TEST(WindowSnapshots, ASnapshotOfANewerFormatIsRefused) {
  ScratchDir dir("snapshots");
  const Config config = loadConfig("netburst");
  runTraces(config, kSnapshotTraces, snapshotRunOptions(dir.path()));
  patchByte(dir / "window-000000.snap", 8, static_cast<char>(kSnapshotVersion + 1));  // the version's low byte
  const std::string message = replayError(dir.path(), config);
  EXPECT_NE(message.find("window-000000.snap"), std::string::npos) << message;
  EXPECT_NE(message.find(fmt::format("format version {} is newer", kSnapshotVersion + 1)), std::string::npos)
      << message;
}

}  // namespace
}  // namespace smtlab::test
