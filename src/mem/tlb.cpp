// Construction and config checks of a TLB; translate() is inline in the header.
#include "smtlab/mem/tlb.hpp"

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/mem/cache.hpp"

namespace smtlab {

namespace {

std::uint32_t tlbSets(const TlbConfig& config, const std::string& name) {
  if (config.assoc == 0) throw ConfigError(fmt::format("{}.assoc: must be at least 1", name));
  if (config.entries == 0 || config.entries % config.assoc != 0) {
    throw ConfigError(fmt::format("{}.entries: {} is not a positive multiple of assoc ({})", name, config.entries,
                                  config.assoc));
  }
  requirePowerOfTwo(config.entries / config.assoc, name + ".entries", "the number of sets (entries / assoc)");
  return config.entries / config.assoc;
}

}  // namespace

Tlb::Tlb(const TlbConfig& config, const std::string& name)
    : missLatency_(config.miss_latency),
      tags_(tlbSets(config, name), config.assoc),
      ready_(tags_.entries(), Cycle{0}) {}

}  // namespace smtlab
