// NetBurst replay (issue 10 §4): the Pentium 4's schedulers send a load's dependents to execute when an L1D hit would
// deliver its data, before the hit is known; when the load misses, the dependents find no data and go around the
// replay loop, issuing again (taking an issue slot and a unit each time) until the data has arrived (Hinton et al.,
// ITJ Q1 2001; Boggs et al., ITJ 8(1) 2004). Off (core.replay = false), a dependent waits for the data instead.
// Modelled: the load's direct dependents woken when it issues; a dependent of a replaying uop waits for the data
// (chosen: the real loop replays the whole speculatively scheduled chain, so the counts are a lower bound).
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

 private:
  const bool enabled_;
  const std::uint32_t hitLatency_;  // load issue to data on an L1D hit: AGU + L1D latency
  const std::uint32_t period_;
};

}  // namespace smtlab
