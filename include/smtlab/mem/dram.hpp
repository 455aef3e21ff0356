// Main memory: a fixed access latency plus one shared channel of limited bandwidth. Each line transfer occupies the
// channel for line_bytes / bytes_per_cycle cycles (kept in 1/256 cycle so fractional rates add up exactly enough).
// Requests are timed when they are made, not in time order (a load behind a long page walk is booked for later than
// an instruction fetch made after it), so the channel keeps its booked intervals and gives each request the first
// gap at or after its arrival instead of queueing it behind every earlier booking.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "smtlab/common/state_io.hpp"

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
  // The channel's bookings (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> booked(booked_.begin(), booked_.end());
    io(booked, stats_);
    if (io.reading()) booked_.assign(booked.begin(), booked.end());
  }

 private:
  std::uint64_t occupy(Cycle when) {
    const std::uint64_t at = when.value * kFraction;
    // The common case: a request after every booking ends queues for nothing and goes at the end.
    if (booked_.empty() || at >= booked_.back().second) {
      while (!booked_.empty() && booked_.front().second + kHorizon < at) booked_.pop_front();
      booked_.emplace_back(at, at + transfer_);
      return at;
    }
    // Forget bookings that ended long before this request; a request arriving even earlier than that is not
    // delayed by them (bounded memory, and such reordering needs a page walk longer than the horizon).
    while (!booked_.empty() && booked_.front().second + kHorizon < at) booked_.pop_front();
    // First booking that ends after `at`; bookings are disjoint and sorted, so ends are sorted too. Requests are
    // rarely far out of order (a prefetch beside its demand miss), so the search walks back from the newest.
    auto it = booked_.end();
    while (it != booked_.begin() && std::prev(it)->second > at) --it;
    std::uint64_t start = at;
    for (; it != booked_.end(); ++it) {
      if (it->first >= start + transfer_) break;  // the gap before this booking is long enough
      start = std::max(start, it->second);
    }
    booked_.insert(it, {start, start + transfer_});
    stats_.queueCycles += (start - at + kFraction - 1) / kFraction;
    return start;
  }

  static constexpr std::uint64_t kHorizon = std::uint64_t{1} << 21;  // 8192 cycles, in 1/kFraction cycles
  std::uint32_t latency_;
  std::uint64_t transfer_;       // channel occupancy of one line, 1/kFraction cycles
  std::deque<std::pair<std::uint64_t, std::uint64_t>> booked_;  // [start, end) of line transfers, sorted
  DramStats stats_;
};

}  // namespace smtlab
