// Replacement policies for set-associative arrays (caches, TLBs). A policy is a template parameter of the tag array,
// not a virtual interface: it is consulted on every access, where an indirect call would cost more than the policy.
#pragma once

#include <concepts>
#include <cstdint>
#include <vector>

#include "smtlab/common/state_io.hpp"

namespace smtlab {

// IReplacement: the contract every replacement policy meets, checked at compile time by the tag array:
//   Policy(std::uint32_t sets, std::uint32_t ways);
//   void onAccess(std::uint32_t entry);   // a hit on entry = set * ways + way
//   void onInsert(std::uint32_t entry);   // a new line was placed in entry
//   std::uint32_t victim(std::uint32_t set) const;  // way to evict when every way of the set is valid
// Another policy (tree-PLRU, SRRIP, seeded random) is a new class with these four members.
template <class P>
concept IReplacement = requires(P p, const P cp, std::uint32_t n) {
  P(n, n);
  p.onAccess(n);
  p.onInsert(n);
  { cp.victim(n) } -> std::same_as<std::uint32_t>;
};

// True LRU kept as a recency list per set (most recent first): a touch relinks one entry and the victim is the
// list's tail, both O(1), so a fully associative TLB costs no more per access than a 4-way cache.
class LruReplacement {
 public:
  LruReplacement(std::uint32_t sets, std::uint32_t ways)
      : ways_(ways), prev_(std::size_t{sets} * ways), next_(std::size_t{sets} * ways), head_(sets), tail_(sets) {
    for (std::uint32_t set = 0; set < sets; ++set) {
      const std::size_t base = std::size_t{set} * ways;
      for (std::uint32_t w = 0; w < ways; ++w) {
        prev_[base + w] = w == 0 ? kNone : w - 1;
        next_[base + w] = w + 1 == ways ? kNone : w + 1;
      }
      head_[set] = 0;
      tail_[set] = ways - 1;
    }
  }

  void onAccess(std::uint32_t entry) { moveToFront(entry); }
  void onInsert(std::uint32_t entry) { moveToFront(entry); }
  std::uint32_t victim(std::uint32_t set) const { return tail_[set]; }
  void visitState(StateIo& io) { io(prev_, next_, head_, tail_); }
  // A flushed entry (TLB flush) becomes its set's next victim, as an invalid way would be.
  void onInvalidate(std::uint32_t entry) {
    const std::uint32_t set = entry / ways_;
    const std::uint32_t way = entry - set * ways_;
    const std::size_t base = std::size_t{set} * ways_;
    if (tail_[set] == way) return;
    const std::uint32_t p = prev_[entry];
    const std::uint32_t n = next_[entry];  // not the tail, so it has a successor
    prev_[base + n] = p;
    if (p != kNone) {
      next_[base + p] = n;
    } else {
      head_[set] = n;
    }
    next_[entry] = kNone;
    prev_[entry] = tail_[set];
    next_[base + tail_[set]] = way;
    tail_[set] = way;
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  void moveToFront(std::uint32_t entry) {
    const std::uint32_t set = entry / ways_;
    const std::uint32_t way = entry - set * ways_;
    const std::size_t base = std::size_t{set} * ways_;
    if (head_[set] == way) return;
    // Unlink (the entry is not the head, so it has a predecessor).
    const std::uint32_t p = prev_[entry];
    const std::uint32_t n = next_[entry];
    next_[base + p] = n;
    if (n != kNone) {
      prev_[base + n] = p;
    } else {
      tail_[set] = p;
    }
    // Link at the front.
    prev_[entry] = kNone;
    next_[entry] = head_[set];
    prev_[base + head_[set]] = way;
    head_[set] = way;
  }

  std::uint32_t ways_;
  std::vector<std::uint32_t> prev_;  // way index within the set, kNone at the head
  std::vector<std::uint32_t> next_;  // way index within the set, kNone at the tail
  std::vector<std::uint32_t> head_;  // most recently used way per set
  std::vector<std::uint32_t> tail_;  // least recently used way per set
};

}  // namespace smtlab
