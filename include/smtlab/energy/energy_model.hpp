// The energy model: per-event dynamic energies (fetch, rename, retire, each unit class, each cache level, DRAM) plus
// static power of active and halted cores, the uncore while anything runs, and the whole package when every logical
// CPU is halted. Coefficients come from the config's [energy] table; the event counts are handed in as EnergyCounts,
// which the machine fills from its statistics, so the model knows nothing of how a run is driven.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <boost/json/object.hpp>

#include "smtlab/config/config.hpp"
#include "smtlab/core/fu_kind.hpp"

namespace smtlab {

// The counters the energy model reads, for the measured part of the run. Per thread and per package rather than
// summed, because the energy is summed in that order and the result must not depend on who adds the counts up.
struct EnergyCounts {
  struct Thread {
    std::uint64_t fetched = 0;  // every fetched instruction and uop: retired, squashed and wrong-path alike
    std::uint64_t retired = 0;
  };
  struct Core {
    std::vector<Thread> threads;
    std::uint64_t renamed = 0;
    std::array<std::uint64_t, kFuKinds + 1> issuedByUnit{};  // FuKind order, then FuKind::None
    std::uint64_t l1iAccesses = 0;
    std::uint64_t l1dAccesses = 0;
    std::uint64_t l2Accesses = 0;
    std::uint64_t cyclesActive = 0;  // cycles in which the core had a logical CPU with work
  };
  std::vector<Core> cores;
  std::vector<std::uint64_t> llcAccesses;  // one per package
  std::uint64_t dramAccesses = 0;          // reads and writes
  std::uint64_t busyCycles = 0;            // cycles in which some logical CPU had work
  std::uint64_t measuredCycles = 0;
};

// Joules, watts and a breakdown by component for the measured part of the run:
// {"joules", "watts", "seconds", "dynamic_joules", "static_joules", "busy_seconds", "components": {name: joules}}.
boost::json::object energyJson(const Config& config, const EnergyCounts& counts);

}  // namespace smtlab
