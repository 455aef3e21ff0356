// Counting distinct values (pcs, cache lines, pages) of a trace in bounded memory, for `smtlab trace info`: exact up
// to a limit, then an estimate, so that a billion-record trace (or a decompression bomb) cannot exhaust memory.
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

namespace smtlab {

// Exact while at most exactLimit distinct values were seen; after that a HyperLogLog estimate (Flajolet, Fusy,
// Gandouet, Meunier 2007, with its small-range correction) over 2^14 one-byte registers: standard error
// 1.04 / sqrt(2^14) = 0.81%. Memory: the exact set up to exactLimit entries plus 16 KiB, whatever the input.
class DistinctCounter {
 public:
  static constexpr int kRegisterBits = 14;
  static constexpr double kStandardError = 0.0081;
  static constexpr std::size_t kDefaultExactLimit = std::size_t{1} << 17;

  explicit DistinctCounter(std::size_t exactLimit = kDefaultExactLimit);
  void add(std::uint64_t value);
  // The exact count while exact(), else the estimate (rounded).
  std::uint64_t count() const;
  bool exact() const { return !overflowed_; }
  std::size_t exactLimit() const { return exactLimit_; }

 private:
  std::size_t exactLimit_;
  bool overflowed_ = false;
  std::unordered_set<std::uint64_t> set_;
  std::vector<std::uint8_t> registers_;
};

}  // namespace smtlab
