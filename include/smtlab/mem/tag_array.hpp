// The tag store of a set-associative structure (cache or TLB): one flat array of keys, sets indexed by the key's low
// bits (power-of-two masks), and a replacement policy chosen at compile time.
#pragma once

#include <bit>
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
      : setMask_(sets - 1), ways_(ways), tags_(std::size_t{sets} * ways, kInvalid), filled_(sets, 0), policy_(sets, ways) {
    // Highly associative arrays (a fully associative TLB) also keep a hash index, so a lookup is not a scan of
    // every way; small sets are faster to scan.
    if (ways_ > kScanWays) index_.assign(std::bit_ceil(std::size_t{sets} * ways * 4), kEmpty);
  }

  std::uint32_t sets() const { return setMask_ + 1; }
  std::uint32_t ways() const { return ways_; }
  std::uint32_t entries() const { return static_cast<std::uint32_t>(tags_.size()); }

  // Entry holding `key`, or kNotFound. Does not update the replacement state.
  std::uint32_t find(std::uint64_t key) const {
    if (!index_.empty()) {
      for (std::size_t i = slotOf(key);; i = (i + 1) & (index_.size() - 1)) {
        if (index_[i] == kEmpty) return kNotFound;
        if (tags_[index_[i]] == key) return index_[i];
      }
    }
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
    // A set fills its ways in order and is full once `filled_` reaches the ways; a way freed later by
    // invalidateIf is the policy's victim, so it is reused before any valid way.
    const std::uint32_t way = filled_[set] < ways_ ? filled_[set]++ : policy_.victim(set);
    const std::uint32_t entry = base + way;
    const std::uint64_t old = tags_[entry];
    if (!index_.empty() && old != kInvalid) indexErase(old);
    tags_[entry] = key;
    if (!index_.empty()) indexInsert(key, entry);
    policy_.onInsert(entry);
    return Insertion{entry, old != kInvalid, old};
  }

  std::uint64_t key(std::uint32_t entry) const { return tags_[entry]; }

  // Keys, fill counts, the hash index and the replacement order (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io) { io(tags_, filled_, index_, policy_); }

  // Removes every key for which `pred(key)` holds (a TLB flush); returns how many. The freed ways are replaced
  // first, before any valid one. Not for the hot path: it scans the whole array.
  template <class Pred>
  std::uint32_t invalidateIf(Pred&& pred) {
    std::uint32_t n = 0;
    for (std::uint32_t e = 0; e < tags_.size(); ++e) {
      if (tags_[e] == kInvalid || !pred(tags_[e])) continue;
      if (!index_.empty()) indexErase(tags_[e]);
      tags_[e] = kInvalid;
      if constexpr (requires { policy_.onInvalidate(e); }) policy_.onInvalidate(e);
      ++n;
    }
    return n;
  }

 private:
  static constexpr std::uint32_t kScanWays = 16;
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};

  std::size_t slotOf(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & (index_.size() - 1);
  }
  void indexInsert(std::uint64_t key, std::uint32_t entry) {
    std::size_t i = slotOf(key);
    while (index_[i] != kEmpty) i = (i + 1) & (index_.size() - 1);
    index_[i] = entry;
  }
  // Linear probing with backward-shift deletion: no tombstones, so lookups stay short.
  void indexErase(std::uint64_t key) {
    const std::size_t mask = index_.size() - 1;
    std::size_t i = slotOf(key);
    while (tags_[index_[i]] != key) i = (i + 1) & mask;
    for (std::size_t j = (i + 1) & mask; index_[j] != kEmpty; j = (j + 1) & mask) {
      const std::size_t home = slotOf(tags_[index_[j]]);
      // Move j back into the hole at i if its home is not in the cyclic range (i, j].
      if (((j - home) & mask) >= ((j - i) & mask)) {
        index_[i] = index_[j];
        i = j;
      }
    }
    index_[i] = kEmpty;
  }

  std::uint64_t setMask_;
  std::uint32_t ways_;
  std::vector<std::uint64_t> tags_;
  std::vector<std::uint32_t> filled_;  // valid ways per set (always the lowest ones)
  std::vector<std::uint32_t> index_;   // key hash -> entry, only when ways_ > kScanWays
  Policy policy_;
};

}  // namespace smtlab
