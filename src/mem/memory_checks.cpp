#include "memory_checks.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/mem/cache.hpp"

namespace smtlab {

namespace {

// The host memory the model's caches take at least: per line a tag (8 bytes), a fill time (8), its LRU links (8), a
// dirty flag and the level that filled it (1 + 1); cache.hpp and replacement.hpp. Measured: a 4 GiB LLC took 1.8 GB.
constexpr std::uint64_t kModelBytesPerLine = 26;

// Host memory available to this process: the physical memory, or less under an address-space limit (ulimit -v).
std::uint64_t hostMemoryBytes() {
  std::uint64_t bytes = ~std::uint64_t{0};
  const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && pageSize > 0) bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize);
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    bytes = std::min<std::uint64_t>(bytes, limit.rlim_cur);
  }
  return bytes;
}

// Refuses, before anything is allocated, caches that this host cannot hold: with overcommit the allocation would
// succeed and the process be killed while filling it, with no message (64 packages of a 4 GiB LLC need ~115 GB).
void checkHostMemory(const MemConfig& config, std::uint32_t coreCount, std::uint32_t packageCount) {
  struct Part {
    const char* key;
    const CacheConfig& cache;
    std::uint64_t copies;
    const char* per;
  };
  const Part parts[] = {{"mem.l1i", config.l1i, coreCount, "cores"}, {"mem.l1d", config.l1d, coreCount, "cores"},
                        {"mem.l2", config.l2, coreCount, "cores"}, {"mem.llc", config.llc, packageCount, "packages"}};
  std::uint64_t total = 0;
  const Part* largest = &parts[0];
  std::uint64_t largestBytes = 0;
  for (const Part& p : parts) {
    const std::uint64_t bytes =
        p.copies * (std::uint64_t{p.cache.size_kb} * 1024 / config.line_bytes) * kModelBytesPerLine;
    total += bytes;
    if (bytes > largestBytes) largest = &p, largestBytes = bytes;
  }
  const std::uint64_t host = hostMemoryBytes();
  if (total <= host) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  throw ConfigError(fmt::format(
      "the caches need at least {:.1f} GiB of host memory to model, more than this host gives the process ({:.1f} "
      "GiB); the largest part: {}.size_kb = {} x {} {} = {:.1f} GiB (about {} bytes per line): make the caches "
      "smaller or the machine (system.packages, system.cores) fewer",
      static_cast<double>(total) / kGiB, static_cast<double>(host) / kGiB, largest->key, largest->cache.size_kb,
      largest->copies, largest->per, static_cast<double>(largestBytes) / kGiB, kModelBytesPerLine));
}

}  // namespace

std::uint32_t checkedLineBytes(const MemConfig& config, std::uint32_t coreCount, std::uint32_t packageCount) {
  requirePowerOfTwo(config.line_bytes, "mem.line_bytes", "the line size");
  requirePowerOfTwo(config.page_bytes, "mem.page_bytes", "the page size");
  if (config.page_bytes < config.line_bytes) {
    throw ConfigError(fmt::format("mem.page_bytes: {} is smaller than mem.line_bytes ({})", config.page_bytes,
                                  config.line_bytes));
  }
  checkHostMemory(config, coreCount, packageCount);
  return config.line_bytes;
}

std::uint32_t checkedCount(std::uint32_t n, const char* key) {
  if (n == 0) throw ConfigError(fmt::format("{}: must be at least 1", key));
  return n;
}

std::uint32_t checkedPackages(std::uint32_t cores, std::uint32_t packages) {
  checkedCount(packages, "system.packages");
  if (cores % packages != 0) {
    throw ConfigError(fmt::format("memory system: {} cores do not split evenly into {} packages", cores, packages));
  }
  return packages;
}

}  // namespace smtlab
