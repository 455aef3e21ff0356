// Replacement policies for set-associative arrays (caches, TLBs). A policy is a template parameter of the tag array,
// not a virtual interface: it is consulted on every access, where an indirect call would cost more than the policy.
#pragma once

#include <concepts>
#include <cstdint>
#include <vector>

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

// True LRU with a per-entry timestamp: exact, and a touch is one store.
class LruReplacement {
 public:
  LruReplacement(std::uint32_t sets, std::uint32_t ways) : ways_(ways), stamps_(std::size_t{sets} * ways, 0) {}

  void onAccess(std::uint32_t entry) { stamps_[entry] = ++clock_; }
  void onInsert(std::uint32_t entry) { stamps_[entry] = ++clock_; }

  std::uint32_t victim(std::uint32_t set) const {
    const std::uint64_t* s = stamps_.data() + std::size_t{set} * ways_;
    std::uint32_t best = 0;
    for (std::uint32_t w = 1; w < ways_; ++w) {
      if (s[w] < s[best]) best = w;
    }
    return best;
  }

 private:
  std::uint32_t ways_;
  std::uint64_t clock_ = 0;
  std::vector<std::uint64_t> stamps_;
};

}  // namespace smtlab
