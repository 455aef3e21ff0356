// Sampled simulation (docs/sampling.md): a run alternates functional warming (Machine::warm: caches, TLBs, branch
// predictor and prefetchers updated, no pipeline timing) with short detailed windows, one every `period` instructions
// per thread as in SMARTS (Wunderlich et al., ISCA 2003). The threads of a core advance together: between two windows
// each one moves forward by what it retires in the same time at its IPC of the last window (time-based sampling,
// Carlson et al., ISPASS 2013), so the windows meet the co-phases that a detailed run would. Each thread's IPC and
// each core's throughput are ratio estimates over the stretches between windows, with their 95 % intervals.
#pragma once

#include <cstdint>
#include <span>

namespace smtlab {

struct SampleOptions {
  // Detailed instructions per thread in each measurement window, and in the detailed warm-up before it. Both are
  // turned into cycles once, at the mean IPC of the run's first (calibration) window, so that every window lasts
  // the same time.
  std::uint64_t window = 10'000;
  std::uint64_t warmup = 20'000;
  // Instructions per thread, on average over the live threads, from one window's start to the next; 0 chooses it
  // from the run's length: about kDefaultWindows windows, or kDefaultPeriod when the length is not known.
  std::uint64_t period = 0;
  // Wanted relative half-width of every measured thread's IPC interval (0.02 = +-2 %); 0 = one pass. When a pass
  // misses it, the run is made again with a shorter period, at most maxPasses times in all.
  double target = 0;
  std::uint32_t maxPasses = 4;
  // false: between windows every live thread advances the same number of instructions, whatever its rate, as
  // sampling each thread on its own would (per-thread SMARTS or SimPoint weights): the co-phase is lost. Only for
  // comparisons; a sampled run advances the threads by their rates.
  bool coPhase = true;

  static constexpr std::uint64_t kDefaultWindows = 100;
  static constexpr std::uint64_t kDefaultPeriod = 1'000'000;
};

// The mean of `samples` and the half-width of its two-sided 95 % confidence interval, t(0.975, n - 1) * s / sqrt(n)
// with s the samples' standard deviation (SMARTS' estimate for a systematic sample, with Student's t for few
// windows). halfWidth is NaN with fewer than two samples.
struct MeanInterval {
  double mean = 0;
  double halfWidth = 0;
  std::uint64_t n = 0;
};
MeanInterval meanInterval95(std::span<const double> samples);

// The ratio sum(y) / sum(x) of paired samples and the half-width of its 95 % interval from Cochran's variance of a
// ratio estimate, t(0.975, n - 1) * sqrt(sum((y - R x)^2) / (n - 1) / (n * mean(x)^2)). A sampled run's IPC is one:
// y the instructions of each stretch between two windows, x its cycles. With equal y it is SMARTS' interval of the
// mean CPI carried over to IPC (half-width = CPI half-width x IPC^2).
MeanInterval ratioInterval95(std::span<const double> y, std::span<const double> x);

}  // namespace smtlab
