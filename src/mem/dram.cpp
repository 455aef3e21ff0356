// Construction and config checks of the DRAM channel.
#include "smtlab/mem/dram.hpp"

#include <cmath>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {

Dram::Dram(const DramConfig& config, std::uint32_t lineBytes) : latency_(config.latency) {
  if (!(config.bytes_per_cycle > 0.0) || !std::isfinite(config.bytes_per_cycle)) {
    throw ConfigError(fmt::format("mem.dram.bytes_per_cycle: {} must be a positive number", config.bytes_per_cycle));
  }
  const double t = std::round(static_cast<double>(lineBytes) * kFraction / config.bytes_per_cycle);
  // At least 1/256 cycle per line so the channel is never free of charge; an absurd rate is still accepted.
  transfer_ = t < 1.0 ? 1 : static_cast<std::uint64_t>(t);
}

}  // namespace smtlab
