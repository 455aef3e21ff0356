// Strong types for the quantities the model passes around: simulated time, addresses and the ids of threads,
// cores and logical CPUs. They keep a cycle count from being used as an address or a core id as a thread id.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace smtlab {

// A strong integer: explicit construction, explicit .value, comparisons; arithmetic only where it has a meaning.
template <class Tag, class Rep>
struct StrongId {
  Rep value{};
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr auto operator<=>(const StrongId&) const = default;
};

struct ThreadIdTag {};
struct CoreIdTag {};
struct LogicalCpuTag {};
struct AsidTag {};

using ThreadId = StrongId<ThreadIdTag, std::uint32_t>;      // hardware thread within one core (0..threads-1)
using CoreId = StrongId<CoreIdTag, std::uint32_t>;          // physical core (0..cores-1)
using LogicalCpu = StrongId<LogicalCpuTag, std::uint32_t>;  // logical CPU as the OS numbers it
using Asid = StrongId<AsidTag, std::uint32_t>;              // address-space id of a software process

// Simulated time in core clock cycles. Arithmetic with plain integers is allowed (cycle + latency).
struct Cycle {
  std::uint64_t value{};
  constexpr Cycle() = default;
  constexpr explicit Cycle(std::uint64_t v) : value(v) {}
  constexpr auto operator<=>(const Cycle&) const = default;
  constexpr Cycle operator+(std::uint64_t d) const { return Cycle{value + d}; }
  constexpr Cycle& operator+=(std::uint64_t d) {
    value += d;
    return *this;
  }
  constexpr std::uint64_t operator-(Cycle o) const { return value - o.value; }
  static constexpr Cycle never() { return Cycle{std::numeric_limits<std::uint64_t>::max()}; }
};

// A byte address in a program's virtual address space.
using Addr = std::uint64_t;

}  // namespace smtlab

template <class Tag, class Rep>
struct std::hash<smtlab::StrongId<Tag, Rep>> {
  std::size_t operator()(const smtlab::StrongId<Tag, Rep>& id) const noexcept { return std::hash<Rep>{}(id.value); }
};
