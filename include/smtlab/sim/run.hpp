// Running traces to completion or to an instruction count, as `smtlab run` does: one trace per logical CPU, each
// thread measured over its first N instructions while it keeps running (its trace restarting if it ends) until every
// thread has retired N, so its siblings keep seeing contention.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "smtlab/common/error.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/sim/sampling.hpp"
#include "smtlab/trace/cursor.hpp"

namespace smtlab {

struct RunOptions {
  std::uint64_t maxInstructions = 0;  // per thread; 0 = run every trace to its end
  std::uint64_t warmup = 0;           // instructions per thread simulated before statistics start
  // Called now and then with (instructions retired so far, instructions expected or 0 if unknown).
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  // Called between chunks of simulated cycles (a chunk is 2^20 cycles, a fraction of a second of host time at
  // most); returning true ends the run by throwing RunInterrupted. The Python binding checks for Ctrl-C here.
  std::function<bool()> stopRequested;
  // Set: a sampled run (sampling.hpp, docs/sampling.md) instead of a detailed one; warmup must then be 0 (the
  // sampled run warms itself).
  std::optional<SampleOptions> sample;
  // With sample: a folder to write one snapshot per window into, with a manifest (docs/sampling.md "Window
  // snapshots"); empty: none.
  std::string snapshotDir;
  // Also run each trace alone (on its own logical CPU, same address space, config, count and warm-up, its siblings
  // idle) and add the multiprogram metrics (STP, ANTT, hmean, fairness) as `multiprogram` (docs/metrics.md). Two or
  // more traces. With sample, each alone run is sampled too and every metric has its 95 % interval; not with
  // snapshotDir.
  bool baselines = false;
  // The logical CPU of the first trace (trace i runs on CPU firstCpu + i, address space firstCpu + i + 1): a
  // baseline's alone run places its trace where the shared run had it.
  std::uint32_t firstCpu = 0;
};

// Thrown by runTraces when options.stopRequested() said so; no statistics are returned for a stopped run.
class RunInterrupted : public Error {
 public:
  RunInterrupted() : Error("run interrupted") {}
};

struct RunResult {
  boost::json::object stats;  // as written by `smtlab run --json`
  double hostSeconds = 0;
  std::uint64_t instructions = 0;  // all threads, measured part only
  std::uint64_t cycles = 0;
  std::uint64_t simulatedInstructions = 0;  // all retired, including past the measured N
};

// Runs trace spec i on logical CPU i. Throws smtlab::Error on bad input or a model deadlock.
RunResult runTraces(const Config& config, const std::vector<std::string>& traces, const RunOptions& options);

// The sampled form of runTraces (options.sample set; runTraces calls it): the result's logical_cpus give each
// thread's whole-run instructions and its IPC estimate with ipc_ci95, and a `sampling` object says how it was
// sampled (docs/sampling.md).
RunResult runSampled(const Config& config, const std::vector<std::string>& traces, const RunOptions& options);

// A run from the window snapshots a sampled run wrote (RunOptions::snapshotDir): windows firstWindow..lastWindow
// (all by default), each simulated from its snapshot under `config`, which must agree with the snapshots' on every
// key that shapes the machine's state (snapshot.hpp). The traces are the manifest's. With every window and the same
// config, the result is the sampled run's, statistic for statistic (host times aside), plus a `snapshots` object.
struct SnapshotRunOptions {
  std::uint64_t firstWindow = 0;
  std::uint64_t lastWindow = ~std::uint64_t{0};
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  std::function<bool()> stopRequested;
};
RunResult runFromSnapshots(const std::string& dir, const Config& config, const SnapshotRunOptions& options);

// A run from snapshots in parts (docs/sampling.md "Window snapshots", in parallel): each part simulates a range of
// windows (simulateSnapshotWindows, in its own process or on another machine) and hands back its window records, the
// per-window outcomes in a checked frame (snapshot.hpp); mergeSnapshotWindows adds them up in window order by the
// code runFromSnapshots uses, so that the result equals its result for the same windows (host times aside).
std::uint64_t snapshotWindowCount(const std::string& dir);
// Windows options.firstWindow..lastWindow of `dir` under `config`: their window records (bytes).
std::string simulateSnapshotWindows(const std::string& dir, const Config& config, const SnapshotRunOptions& options);
struct WindowRecords {
  std::string name;   // where they came from, for messages ("windows 0-50" or a file's path)
  std::string bytes;  // simulateSnapshotWindows' result
};
// The result of the windows options.firstWindow..lastWindow from the records of consecutive ranges that cover them,
// in window order; refuses (smtlab::Error naming the record) records of another folder, manifest or config, damaged
// ones, and a gap, overlap or disorder of the ranges. hostSeconds: the time the parts took, added to the merge's own.
RunResult mergeSnapshotWindows(const std::string& dir, const Config& config, const std::vector<WindowRecords>& records,
                               const SnapshotRunOptions& options, double hostSeconds);
// The config the snapshots in `dir` were taken with.
Config snapshotConfig(const std::string& dir);

// Opens trace spec i for logical CPU i of a machine with `logicalCpus` CPUs, with runTraces' checks (no more traces
// than CPUs; an endless generator needs maxInstructions).
std::vector<std::shared_ptr<TraceCursor>> openRunTraces(const std::vector<std::string>& traces,
                                                        std::uint64_t maxInstructions, const Config& config,
                                                        std::uint32_t logicalCpus);

}  // namespace smtlab
