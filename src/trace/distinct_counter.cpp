#include "smtlab/trace/distinct_counter.hpp"

#include <bit>
#include <cmath>

namespace smtlab {
namespace {

// SplitMix64's finaliser (Steele, Lea, Flood 2014): spreads sequential pcs and line numbers over all 64 bits, which
// HyperLogLog needs (it reads the top bits as a register index and the rest's leading zeros as a rank).
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

DistinctCounter::DistinctCounter(std::size_t exactLimit)
    : exactLimit_(exactLimit), registers_(std::size_t{1} << kRegisterBits, 0) {}

void DistinctCounter::add(std::uint64_t value) {
  const std::uint64_t h = mix(value);
  const std::size_t index = static_cast<std::size_t>(h >> (64 - kRegisterBits));
  // Rank: position of the first 1 bit in the remaining 50 bits (1-based); a guard bit caps it at 51.
  const std::uint64_t rest = (h << kRegisterBits) | (std::uint64_t{1} << (kRegisterBits - 1));
  const auto rank = static_cast<std::uint8_t>(std::countl_zero(rest) + 1);
  if (rank > registers_[index]) registers_[index] = rank;
  if (overflowed_) return;
  set_.insert(value);
  if (set_.size() > exactLimit_) {
    overflowed_ = true;
    std::unordered_set<std::uint64_t>().swap(set_);  // give the memory back
  }
}

std::uint64_t DistinctCounter::count() const {
  if (!overflowed_) return set_.size();
  const double m = static_cast<double>(registers_.size());
  double sum = 0;
  std::size_t zeros = 0;
  for (std::uint8_t r : registers_) {
    sum += std::ldexp(1.0, -r);
    zeros += r == 0;
  }
  const double alpha = 0.7213 / (1.0 + 1.079 / m);
  double estimate = alpha * m * m / sum;
  if (estimate <= 2.5 * m && zeros != 0) estimate = m * std::log(m / static_cast<double>(zeros));
  return static_cast<std::uint64_t>(std::llround(estimate));
}

}  // namespace smtlab
