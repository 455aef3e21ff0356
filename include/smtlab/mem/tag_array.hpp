// The tag store of a set-associative structure (cache or TLB): one flat array of keys, sets indexed by the key's low
// bits (power-of-two masks), and a replacement policy chosen at compile time.
#pragma once

#include <concepts>
#include <cstdint>
#include <vector>

#include "smtlab/mem/replacement.hpp"

namespace smtlab {

template <IReplacement Policy = LruReplacement>
class SetAssocTags {
 public:
  static constexpr std::uint32_t kNotFound = ~std::uint32_t{0};
  // Keys are line or page numbers, whose top bits are zero, so all-ones never names a real line.
  static constexpr std::uint64_t kInvalid = ~std::uint64_t{0};

  struct Insertion {
    std::uint32_t entry;        // where the new key now lives
    bool evicted;               // a valid key was displaced
    std::uint64_t evictedKey;
  };

  // sets must be a power of two (the owner validates its config before constructing).
  SetAssocTags(std::uint32_t sets, std::uint32_t ways)
      : setMask_(sets - 1), ways_(ways), tags_(std::size_t{sets} * ways, kInvalid), filled_(sets, 0), policy_(sets, ways) {}

  std::uint32_t sets() const { return setMask_ + 1; }
  std::uint32_t ways() const { return ways_; }
  std::uint32_t entries() const { return static_cast<std::uint32_t>(tags_.size()); }

  // Entry holding `key`, or kNotFound. Does not update the replacement state.
  std::uint32_t find(std::uint64_t key) const {
    const std::uint32_t base = static_cast<std::uint32_t>(key & setMask_) * ways_;
    const std::uint64_t* t = tags_.data() + base;
    for (std::uint32_t w = 0; w < ways_; ++w) {
      if (t[w] == key) return base + w;
    }
    return kNotFound;
  }

  void touch(std::uint32_t entry) { policy_.onAccess(entry); }

  // Places `key` (known to be absent): an invalid way if the set has one, else the policy's victim.
  Insertion insert(std::uint64_t key) {
    const std::uint32_t set = static_cast<std::uint32_t>(key & setMask_);
    const std::uint32_t base = set * ways_;
    // Keys are never removed, so a set fills its ways in order and is full once `filled_` reaches the ways.
    const std::uint32_t way = filled_[set] < ways_ ? filled_[set]++ : policy_.victim(set);
    const std::uint32_t entry = base + way;
    const std::uint64_t old = tags_[entry];
    tags_[entry] = key;
    policy_.onInsert(entry);
    return Insertion{entry, old != kInvalid, old};
  }

  std::uint64_t key(std::uint32_t entry) const { return tags_[entry]; }

 private:
  std::uint64_t setMask_;
  std::uint32_t ways_;
  std::vector<std::uint64_t> tags_;
  std::vector<std::uint32_t> filled_;  // valid ways per set (always the lowest ones)
  Policy policy_;
};

}  // namespace smtlab
