// NetBurst replay: the Pentium 4's schedulers send a load's dependents to execute when an L1D hit would
// deliver its data, before the hit is known; when the load misses, the dependents find no data and go around the
// replay loop, issuing again (taking an issue slot and a unit each time) until the data has arrived (Hinton et al.,
// ITJ Q1 2001; Boggs et al., ITJ 8(1) 2004). Off (core.replay = false), a dependent waits for the data instead.
// Modelled: the load's direct dependents woken when it issues; a dependent of a replaying uop waits for the data
// (chosen: the real loop replays the whole speculatively scheduled chain, so the counts are a lower bound).
// The loop is a fixed-length pipe that cannot stall: a uop sent at s without its data comes back to the same port at
// s + period, s + 2 period, ... ahead of anything the scheduler would send there ("the replay system signals the
// scheduler to stop": Kartunov et al., xbitlabs 2005), so all of its attempts are known when it is first sent. The
// scheduler books them then (a calendar of port reservations, scheduler.cpp) and, with sim.replay_deferred, counts
// them when the core next wakes instead of waking it every period.
#pragma once

#include <cstdint>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"

namespace smtlab {

class ReplayLoop {
 public:
  explicit ReplayLoop(const Config& config);

  bool enabled() const { return enabled_; }
  // When a dependent of a load issued at `issuedAt` is scheduled: `done` (the producer's real result) unless replay
  // is on and the load missed (`extra` = cycles after its data that the producer's result comes: a load-op's ALU).
  Cycle scheduleDependents(Cycle issuedAt, Cycle dataReady, Cycle done) const {
    const Cycle hit = issuedAt + hitLatency_;
    if (!enabled_ || dataReady <= hit) return done;
    return hit + (done - dataReady);
  }
  // A dependent that issued before its operands were there comes back to issue this many cycles later.
  Cycle nextAttempt(Cycle now) const { return now + period_; }
  std::uint32_t period() const { return period_; }
  // Attempts of a uop first sent at `sentAt` that find no data when its operands come at `readyAt` > sentAt: the
  // ones at sentAt + k period < readyAt, that is ceil((readyAt - sentAt) / period) (docs/model.md: with the attempt
  // that succeeds, 1 + ceil(D / period) issues for a load delivering D cycles after the hit time).
  std::uint64_t failingAttempts(Cycle sentAt, Cycle readyAt) const {
    return (readyAt - sentAt + period_ - 1) / period_;
  }

 private:
  const bool enabled_;
  const std::uint32_t hitLatency_;  // load issue to data on an L1D hit: AGU + L1D latency
  const std::uint32_t period_;
};

}  // namespace smtlab
