// Construction and config checks of a cache level; the per-access methods are inline in the header.
#include "smtlab/mem/cache.hpp"

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {

void requirePowerOfTwo(std::uint64_t value, const std::string& key, const std::string& what) {
  if (value == 0 || (value & (value - 1)) != 0) {
    throw ConfigError(fmt::format("{}: {} is {}, must be a power of two (caches and TLBs are indexed with masks)", key,
                                  what, value));
  }
}

namespace {

std::uint32_t cacheSets(const CacheConfig& config, std::uint32_t lineBytes, const std::string& name) {
  if (config.assoc == 0) throw ConfigError(fmt::format("{}.assoc: must be at least 1", name));
  if (config.mshrs == 0) throw ConfigError(fmt::format("{}.mshrs: must be at least 1", name));
  if (config.size_kb == 0) throw ConfigError(fmt::format("{}.size_kb: must be at least 1", name));
  const std::uint64_t bytes = std::uint64_t{config.size_kb} * 1024;
  const std::uint64_t perSet = std::uint64_t{config.assoc} * lineBytes;
  if (bytes % perSet != 0) {
    throw ConfigError(fmt::format("{}.size_kb: {} KiB is not a whole number of sets of {} ways x {} B lines", name,
                                  config.size_kb, config.assoc, lineBytes));
  }
  requirePowerOfTwo(bytes / perSet, name + ".size_kb", "the number of sets (size / (assoc * line_bytes))");
  return static_cast<std::uint32_t>(bytes / perSet);
}

}  // namespace

Cache::Cache(const CacheConfig& config, std::uint32_t lineBytes, const std::string& name)
    : latency_(config.latency),
      tags_(cacheSets(config, lineBytes, name), config.assoc),
      ready_(tags_.entries(), Cycle{0}),
      dirty_(tags_.entries(), 0),
      source_(tags_.entries(), MemLevel::L1),
      mshrFree_(config.mshrs, Cycle{0}) {}

}  // namespace smtlab
