#include "smtlab/core/replay.hpp"

namespace smtlab {

ReplayLoop::ReplayLoop(const Config& config)
    : enabled_(config.core.replay),
      hitLatency_(config.core.fu.load.latency + config.mem.l1d.latency),
      period_(config.core.replay_period) {}

}  // namespace smtlab
