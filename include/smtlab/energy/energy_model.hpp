// The energy model: per-event dynamic energies (fetch, rename, retire, each unit class, each cache level, DRAM) plus
// static power of active and halted cores, the uncore while anything runs, and the whole package when every logical
// CPU is halted. Coefficients come from the config's [energy] table; the counts from the machine's statistics.
#pragma once

#include <boost/json/object.hpp>

namespace smtlab {

class Machine;

// Joules, watts and a breakdown by component for the measured part of the run:
// {"joules", "watts", "seconds", "dynamic_joules", "static_joules", "components": {name: joules}}.
boost::json::object energyJson(Machine& machine);

}  // namespace smtlab
