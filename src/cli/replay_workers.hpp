// `smtlab run --from-snapshots DIR --workers N`: a sampled run's windows simulated again from their snapshots in N
// worker processes, each a contiguous range of windows, their window records merged in window order
// (mergeSnapshotWindows), so that the result is the one process's (docs/sampling.md "Window snapshots").
#pragma once

#include <cstdint>
#include <string>

#include "smtlab/config/config.hpp"
#include "smtlab/sim/run.hpp"

namespace smtlab::cli {

// The most worker processes per CPU this process may use: a few let a run oversubscribe a host where other jobs hold
// some cores; far more (a typo) is refused before the processes are started. The sweep's WORKERS_PER_CPU.
inline constexpr std::uint64_t kWorkersPerCpu = 4;

// Throws UsageError naming --workers unless 1 <= workers <= kWorkersPerCpu x the CPUs this process may use.
void checkWorkers(std::uint64_t workers);

// Windows range.firstWindow..lastWindow of `dir` under `config` in `workers` processes (fork), each writing its
// window records to a file in a private temporary folder (written under a temporary name, renamed when complete).
// A worker that fails or is killed ends the run: the others are ended, and smtlab::Error names its window range and
// what happened; nothing is merged.
RunResult runFromSnapshotsInWorkers(const std::string& dir, const Config& config, const SnapshotRunOptions& range,
                                    std::uint64_t workers);

}  // namespace smtlab::cli
