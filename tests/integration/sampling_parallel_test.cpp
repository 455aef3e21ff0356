// A run from window snapshots in parts (docs/sampling.md "Window snapshots"): ranges of windows simulated apart (in
// worker processes with `smtlab run --from-snapshots DIR --workers N`) and merged in window order give the result of
// the one-process run and of the sampled run that wrote the snapshots, bit for bit but the host times; a worker that
// fails or is killed ends the run in one line naming its windows.
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../scratch_dir.hpp"
#include "cli_program.hpp"
#include "helpers.hpp"
#include "smtlab/sim/snapshot.hpp"

namespace smtlab::test {
namespace {

// Two threads on one netburst core, a dozen windows of a few thousand instructions: seconds in all.
const std::vector<std::string> kParallelSampleArgs{"run", "-c", "netburst", "--sample", "-n", "720k",
                                                   "--sample-period", "60k", "--sample-window", "5k",
                                                   "--sample-warmup", "5k", "-q", "gen:mix", "gen:branchy"};

json::object parallelStatsWithoutHost(const std::filesystem::path& file) {
  boost::system::error_code ec;
  json::value v = json::parse(slurp(file), ec);
  EXPECT_FALSE(ec) << file << ": " << ec.message();
  if (ec || !v.is_object()) return {};
  json::object o = std::move(v.as_object());
  o.erase("host_seconds");
  o.erase("instructions_per_host_second");
  return o;
}

// The printed table without its line of host times.
std::string tableWithoutSpeed(const std::string& out) {
  std::istringstream in(out);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.rfind("speed:", 0) != 0) kept += line + "\n";
  }
  return kept;
}

std::size_t lineCount(const std::string& text) {
  std::size_t n = 0;
  for (const char c : text) n += c == '\n' ? 1 : 0;
  return n;
}

std::vector<std::string> withArgs(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The sampled run's snapshots in `dir`, its JSON in `dir`/../original.json.
std::uint64_t takeSnapshots(const ScratchDir& scratch) {
  const ProgramResult r = runProgram(
      withArgs(kParallelSampleArgs, {"--snapshots", (scratch / "snaps").string(), "--json",
                                     (scratch / "original.json").string()}),
      scratch.path(), {.limitSeconds = 300});
  EXPECT_EQ(r.status, 0) << r.err;
  const json::object o = parallelStatsWithoutHost(scratch / "original.json");
  return o.contains("sampling") ? u64(o.at("sampling").as_object().at("windows")) : 0;
}

TEST(ParallelSnapshotRun, WorkersGiveTheOneProcessRunsAndTheSampledRunsResult) {
  ScratchDir scratch("parallel-snapshots");
  const std::uint64_t windows = takeSnapshots(scratch);
  ASSERT_GE(windows, 10u);
  const std::string snaps = (scratch / "snaps").string();
  std::vector<json::object> results;
  std::vector<std::string> tables;
  for (const char* workers : {"1", "2", "3"}) {
    const std::string out = (scratch / fmt::format("w{}.json", workers)).string();
    const ProgramResult r =
        runProgram({"run", "--from-snapshots", snaps, "--workers", workers, "-q", "--json", out}, scratch.path(),
                   {.limitSeconds = 300});
    ASSERT_EQ(r.status, 0) << "--workers " << workers << ": " << r.err;
    EXPECT_EQ(r.err, "") << "--workers " << workers;
    results.push_back(parallelStatsWithoutHost(out));
    tables.push_back(tableWithoutSpeed(r.out));
  }
  // Every figure: the windows' IPCs in window order, the intervals (sums over the stretches in order), the counters.
  for (std::size_t cpu = 0; cpu < 2; ++cpu) {
    const json::array& one = cpuStats(results[0], cpu).at("window_ipc").as_array();
    const json::array& two = cpuStats(results[1], cpu).at("window_ipc").as_array();
    ASSERT_EQ(one.size(), two.size()) << "cpu " << cpu;
    for (std::size_t k = 0; k < one.size(); ++k) EXPECT_EQ(one[k], two[k]) << "cpu " << cpu << " entry " << k;
    EXPECT_EQ(cpuStats(results[0], cpu).at("ipc_ci95"), cpuStats(results[1], cpu).at("ipc_ci95")) << "cpu " << cpu;
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  EXPECT_EQ(tables[0], tables[1]);
  EXPECT_EQ(tables[0], tables[2]);
  // And the sampled run that wrote the snapshots, which has no `snapshots` object.
  json::object replayed = results[1];
  replayed.erase("snapshots");
  EXPECT_EQ(parallelStatsWithoutHost(scratch / "original.json"), replayed);

  // A range of windows in parts is that range in one process.
  const std::string someOne = (scratch / "some1.json").string(), someTwo = (scratch / "some2.json").string();
  ASSERT_EQ(runProgram({"run", "--from-snapshots", snaps, "--windows", "3-8", "-q", "--json", someOne},
                       scratch.path(), {.limitSeconds = 300})
                .status,
            0);
  ASSERT_EQ(runProgram({"run", "--from-snapshots", snaps, "--windows", "3-8", "--workers", "2", "-q", "--json",
                        someTwo},
                       scratch.path(), {.limitSeconds = 300})
                .status,
            0);
  EXPECT_EQ(parallelStatsWithoutHost(someOne), parallelStatsWithoutHost(someTwo));
}

TEST(ParallelSnapshotRun, AWorkerThatFailsEndsTheRunInOneLineNamingItsWindows) {
  ScratchDir scratch("parallel-snapshots");
  const std::uint64_t windows = takeSnapshots(scratch);
  ASSERT_GE(windows, 10u);
  // The last window's file goes after the manifest was written: the second worker's range holds it.
  const std::string victim = fmt::format("window-{:06}.snap", windows - 1);
  std::filesystem::remove(scratch / "snaps" / victim);
  const std::string out = (scratch / "broken.json").string();
  const ProgramResult r = runProgram(
      {"run", "--from-snapshots", (scratch / "snaps").string(), "--workers", "2", "--json", out}, scratch.path(),
      {.limitSeconds = 300});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(lineCount(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(fmt::format("windows {}-{}", windows / 2, windows - 1)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(victim), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(out));
}

// The process ids whose parent is `parent` (from /proc/PID/stat).
std::vector<pid_t> childrenOf(pid_t parent) {
  std::vector<pid_t> kids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) kids.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return kids;
}

TEST(ParallelSnapshotRun, AKilledWorkerEndsTheRunInOneLineNamingItsWindows) {
  ScratchDir scratch("parallel-snapshots");
  ASSERT_GE(takeSnapshots(scratch), 10u);
  const std::string out = (scratch / "killed.json").string();
  const std::string errPath = (scratch / "stderr").string();
  std::vector<std::string> args{smtlabBinary(), "run", "--from-snapshots", (scratch / "snaps").string(),
                                "--workers", "2", "--json", out};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  const int null = ::open("/dev/null", O_RDWR);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(err, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(err);
  ::close(null);
  ASSERT_GT(pid, 0);
  // The first worker seen is killed as soon as it runs.
  pid_t killed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  while (killed == 0 && std::chrono::steady_clock::now() < deadline && ::waitpid(pid, &status, WNOHANG) == 0) {
    for (const pid_t kid : childrenOf(pid)) {
      if (::kill(kid, SIGKILL) == 0) killed = kid;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (killed != 0) ::waitpid(pid, &status, 0);
  ASSERT_NE(killed, 0) << "no worker process was seen";
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string message = slurp(errPath);
  EXPECT_EQ(lineCount(message), 1u) << message;
  EXPECT_NE(message.find("killed by signal 9"), std::string::npos) << message;
  EXPECT_NE(message.find("windows "), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(childrenOf(pid).empty());  // the other worker was ended too
}

// In one process: ranges simulated apart and merged equal the run of them all; records out of order, of another
// config or damaged are refused naming them.
TEST(ParallelSnapshotRun, RecordsMergeInWindowOrderAndAreChecked) {
  ScratchDir scratch("parallel-snapshots");
  const std::uint64_t windows = takeSnapshots(scratch);
  ASSERT_GE(windows, 10u);
  const std::string snaps = (scratch / "snaps").string();
  const Config config = snapshotConfig(snaps);
  const RunResult whole = runFromSnapshots(snaps, config, {});
  auto range = [](std::uint64_t a, std::uint64_t b) {
    SnapshotRunOptions o;
    o.firstWindow = a;
    o.lastWindow = b;
    return o;
  };
  const std::uint64_t mid = windows / 3;
  const std::vector<WindowRecords> parts{
      {"first part", simulateSnapshotWindows(snaps, config, range(0, mid - 1))},
      {"second part", simulateSnapshotWindows(snaps, config, range(mid, windows - 1))}};
  const RunResult merged = mergeSnapshotWindows(snaps, config, parts, {}, 0);
  json::object a = whole.stats, b = merged.stats;
  for (json::object* o : {&a, &b}) {
    o->erase("host_seconds");
    o->erase("instructions_per_host_second");
  }
  EXPECT_EQ(a, b);

  auto mergeError = [&](const std::vector<WindowRecords>& records, const Config& c) -> std::string {
    try {
      mergeSnapshotWindows(snaps, c, records, {}, 0);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string swapped = mergeError({parts[1], parts[0]}, config);
  EXPECT_NE(swapped.find("second part"), std::string::npos) << swapped;
  EXPECT_NE(swapped.find("window 0 comes next"), std::string::npos) << swapped;
  const std::string missing = mergeError({parts[0]}, config);
  EXPECT_NE(missing.find(fmt::format("end before window {}", mid)), std::string::npos) << missing;
  Config icount = config;
  applyOverride(icount, "core.fetch_policy=icount");
  const std::string other = mergeError(parts, icount);
  EXPECT_NE(other.find("first part: simulated under another config"), std::string::npos) << other;
  WindowRecords damaged = parts[0];
  damaged.bytes[damaged.bytes.size() / 2] ^= 0x10;
  const std::string broken = mergeError({damaged, parts[1]}, config);
  EXPECT_NE(broken.find("first part: the window record is damaged"), std::string::npos) << broken;
  WindowRecords newer = parts[0];
  newer.bytes[8] = static_cast<char>(kWindowRecordsVersion + 1);
  const std::string version = mergeError({newer, parts[1]}, config);
  EXPECT_NE(version.find(fmt::format("window record format version {} is newer", kWindowRecordsVersion + 1)),
            std::string::npos)
      << version;
}

}  // namespace
}  // namespace smtlab::test
