// Main memory: a fixed access latency plus one shared channel of limited bandwidth. Each line transfer occupies the
// channel for line_bytes / bytes_per_cycle cycles (kept in 1/256 cycle so fractional rates add up exactly enough).
#pragma once

#include <cstdint>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/mem/memory_system.hpp"

namespace smtlab {

class Dram {
 public:
  static constexpr std::uint64_t kFraction = 256;  // channel time unit: 1/256 cycle

  // Throws ConfigError unless bytes_per_cycle is positive and finite.
  Dram(const DramConfig& config, std::uint32_t lineBytes);

  // A line read whose request reaches the controller at `request`: returns the cycle the data is back.
  // With an idle channel that is request + latency; otherwise the transfer waits for the channel.
  Cycle read(Cycle request) {
    ++stats_.reads;
    const std::uint64_t start = occupy(request);
    return Cycle{(start + kFraction - 1) / kFraction} + latency_;
  }

  // A line written back at `when`: it only takes channel time away from later reads.
  void write(Cycle when) {
    ++stats_.writes;
    occupy(when);
  }

  std::uint64_t transferTime() const { return transfer_; }  // in 1/kFraction cycles
  const DramStats& stats() const { return stats_; }
  void resetStats() { stats_ = {}; }

 private:
  std::uint64_t occupy(Cycle when) {
    const std::uint64_t at = when.value * kFraction;
    const std::uint64_t start = nextFree_ > at ? nextFree_ : at;
    stats_.queueCycles += (start - at + kFraction - 1) / kFraction;
    nextFree_ = start + transfer_;
    return start;
  }

  std::uint32_t latency_;
  std::uint64_t transfer_;       // channel occupancy of one line, 1/kFraction cycles
  std::uint64_t nextFree_ = 0;   // first instant the channel is idle, 1/kFraction cycles
  DramStats stats_;
};

}  // namespace smtlab
