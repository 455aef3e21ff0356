// The checks a memory hierarchy's shape must pass before anything is allocated: counts of at least one, cores that
// split evenly into packages, power-of-two line and page sizes, and caches that the host can hold at all
// (memory_system.cpp builds the hierarchy only from values these return).
#pragma once

#include <cstdint>

#include "smtlab/config/config.hpp"

namespace smtlab {

// n, or ConfigError naming `key` when it is 0.
std::uint32_t checkedCount(std::uint32_t n, const char* key);
// packages, or ConfigError when it is 0 or the cores do not split evenly into that many.
std::uint32_t checkedPackages(std::uint32_t cores, std::uint32_t packages);
// mem.line_bytes, after checking the line and page sizes and that the caches of `coreCount` cores and
// `packageCount` packages fit in the host memory this process may use.
std::uint32_t checkedLineBytes(const MemConfig& config, std::uint32_t coreCount, std::uint32_t packageCount);

}  // namespace smtlab
