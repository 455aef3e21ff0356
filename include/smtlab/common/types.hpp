// Strong types for the quantities the model passes around: simulated time, addresses, cache line numbers, instruction
// sequence numbers and the ids of threads, cores and logical CPUs. They keep a cycle count from being used as an
// address or a core id as a thread id.
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

// A cache line number: a byte address shifted right by log2(line bytes). A line number is not a byte address: one
// used for the other still compiles as an integer but looks up, compares or indexes at the wrong granularity (64
// lines apart instead of one, or 64 bytes treated as 64 lines), a silent wrong answer. So it converts neither from
// nor to an integer; it is made from an address by of(addr, shift), has only the operations a line number has
// (comparison, hashing, the next line, its first byte), and exposes .value where a tag store or table indexes by it.
// Same size and layout as the integer: no cost.
class LineAddr {
 public:
  std::uint64_t value{};

  constexpr LineAddr() = default;
  // The line holding byte `addr`, for lines of 2^shift bytes.
  static constexpr LineAddr of(Addr addr, std::uint32_t shift) { return LineAddr{addr >> shift}; }
  // A number that already is a line number (a key read back from a tag store that holds lines).
  static constexpr LineAddr fromNumber(std::uint64_t line) { return LineAddr{line}; }

  constexpr auto operator<=>(const LineAddr&) const = default;
  // The line after this one (a next-line prefetch).
  constexpr LineAddr next() const { return LineAddr{value + 1}; }
  // Its first byte, for lines of 2^shift bytes (to ask which page the line is in).
  constexpr Addr firstByte(std::uint32_t shift) const { return value << shift; }

 private:
  constexpr explicit LineAddr(std::uint64_t line) : value(line) {}
};

// An instruction's sequence number: its place in its thread's program order (the trace cursor numbers the records it
// reads 0, 1, 2, ...; a refetched instruction keeps its number). The ROB, the uop queue, the store queue, squashes
// ("everything from seq on") and memory ordering ("is this store older than that load") all key on it. A sequence
// number is not a count, a cycle or an address: one mixed with those still compiles as an integer and gives a silent
// wrong answer (a squash from a cycle, an occupancy compared with a position). So it converts neither from nor to an
// integer implicitly and has only the operations a position in program order has: comparison (older < younger),
// stepping on in program order (next(), ++, + n instructions), the number of instructions between two (a - b, a
// count), and .value where a ring is indexed (value & mask). Same size and layout as the integer: no cost.
struct SeqNum {
  std::uint64_t value{};

  constexpr SeqNum() = default;
  constexpr explicit SeqNum(std::uint64_t v) : value(v) {}

  constexpr auto operator<=>(const SeqNum&) const = default;
  // The instruction after / before this one in program order.
  constexpr SeqNum next() const { return SeqNum{value + 1}; }
  constexpr SeqNum prev() const { return SeqNum{value - 1}; }
  constexpr SeqNum& operator++() {
    ++value;
    return *this;
  }
  constexpr SeqNum& operator--() {
    --value;
    return *this;
  }
  // n instructions further on.
  constexpr SeqNum operator+(std::uint64_t n) const { return SeqNum{value + n}; }
  constexpr SeqNum& operator+=(std::uint64_t n) {
    value += n;
    return *this;
  }
  // How many instructions lie in [o, *this): a count, not a sequence number.
  constexpr std::uint64_t operator-(SeqNum o) const { return value - o.value; }
};

}  // namespace smtlab

template <class Tag, class Rep>
struct std::hash<smtlab::StrongId<Tag, Rep>> {
  std::size_t operator()(const smtlab::StrongId<Tag, Rep>& id) const noexcept { return std::hash<Rep>{}(id.value); }
};

template <>
struct std::hash<smtlab::LineAddr> {
  std::size_t operator()(const smtlab::LineAddr& line) const noexcept { return std::hash<std::uint64_t>{}(line.value); }
};
