// The scheduler's set of renamed instructions waiting for their operands, keyed by the cycle they become ready: a
// timing wheel (one slot per cycle for the next kSlots cycles, Varghese & Lauck, SOSP 1987) with a heap for the few
// entries further out (misses to memory). Most waits are a few cycles (ALU, L1 hit, FP latencies), so pushing and
// taking an entry costs a list operation instead of a binary heap's log n moves (a binary heap alone
// is the scheduler's largest host cost after the uops in the window). No model state: the scheduler takes
// every due entry into its age-ordered ready list, so the order in which they come out does not matter.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/core/thread_context.hpp"

namespace smtlab {

class WaitQueue {
 public:
  WaitQueue() { head_.fill(kNil); }
  // Room for n entries, reserved once (more still fit, by growing).
  void reserve(std::size_t n) {
    nodes_.reserve(n);
    far_.reserve(n);
  }

  bool empty() const { return occupied_ == 0 && far_.empty(); }
  void visitState(StateIo& io) { io(nodes_, free_, head_, occupied_, base_, far_); }

  // The common case (due within the wheel, a free node) is kept small enough to be inlined at the scheduler's push
  // sites; a far entry or a new node goes out of line (pushSlow).
  void push(const WaitEntry& e) {
    const std::uint32_t node = free_;
    if (e.readyAt >= base_ + kSlots || node == kNil) [[unlikely]] {
      pushSlow(e);
      return;
    }
    // An entry due before the wheel's first cycle (none is, the scheduler pushes after taking what is due) is due at
    // that first cycle.
    const auto slot = static_cast<std::uint32_t>(std::max(e.readyAt, base_).value & kMask);
    free_ = nodes_[node].next;
    store(nodes_[node], e, head_[slot]);
    head_[slot] = node;
    occupied_ |= std::uint64_t{1} << slot;
  }

  // Calls take(entry) for every entry due by `now` and removes them; in no particular order.
  template <class Take>
  void popDue(Cycle now, Take&& take) {
    if (now >= base_) {
      const std::uint64_t span = now - base_ + 1;  // cycles of the wheel now due
      std::uint64_t due = occupied_;
      if (span < kSlots) {
        const auto first = static_cast<int>(base_.value & kMask);
        due &= std::rotl((std::uint64_t{1} << span) - 1, first);
      }
      occupied_ &= ~due;
      while (due != 0) {
        const int slot = std::countr_zero(due);
        due &= due - 1;
        std::uint32_t node = head_[slot];
        head_[slot] = kNil;
        while (node != kNil) {
          const std::uint32_t next = nodes_[node].next;
          take(nodes_[node].entry);
          nodes_[node].next = free_;
          free_ = node;
          node = next;
        }
      }
      base_ = now + 1;
    }
    while (!far_.empty() && far_.front().readyAt <= now) {
      std::pop_heap(far_.begin(), far_.end(), LaterReady{});
      const WaitEntry e = far_.back();
      far_.pop_back();
      take(e);
    }
  }

  // The earliest cycle an entry becomes due (Cycle::never() when empty).
  Cycle earliest() const {
    Cycle next = far_.empty() ? Cycle::never() : far_.front().readyAt;
    if (occupied_ != 0) {
      const auto first = static_cast<int>(base_.value & kMask);
      const Cycle wheel = base_ + static_cast<std::uint64_t>(std::countr_zero(std::rotr(occupied_, first)));
      next = std::min(next, wheel);
    }
    return next;
  }

 private:
  static constexpr std::uint64_t kSlots = 64;  // one bit each in occupied_
  static constexpr std::uint64_t kMask = kSlots - 1;
  static constexpr std::uint32_t kNil = 0xffffffffu;
  struct Node {
    WaitEntry entry;
    std::uint32_t next;  // the slot's list, or the free list
  };
  struct LaterReady {
    bool operator()(const WaitEntry& a, const WaitEntry& b) const { return a.readyAt > b.readyAt; }
  };

  // Field by field, each as wide as the caller wrote it: the entry was usually just built on the caller's stack, and
  // a whole-struct copy reads it back with 16-byte loads that span several of those stores, which the CPU cannot
  // forward from its store buffer (a stall of about a dozen cycles at each push; half of push()'s time).
  static void store(Node& n, const WaitEntry& e, std::uint32_t next) {
    [[maybe_unused]] const auto& [readyAt, age, thread, uop] = e;  // compiles only while these are all the fields
    n.entry.readyAt = e.readyAt;
    n.entry.age = e.age;
    n.entry.thread = e.thread;
    n.entry.uop = e.uop;
    n.next = next;
  }
  // Never inlined: inlined into push(), its registers made every push save and restore six of them.
  [[gnu::noinline]] void pushSlow(const WaitEntry& e) {
    if (e.readyAt >= base_ + kSlots) {
      far_.push_back(e);
      std::push_heap(far_.begin(), far_.end(), LaterReady{});
      return;
    }
    const auto slot = static_cast<std::uint32_t>(std::max(e.readyAt, base_).value & kMask);
    const auto node = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back({e, head_[slot]});
    head_[slot] = node;
    occupied_ |= std::uint64_t{1} << slot;
  }

  std::vector<Node> nodes_;
  std::uint32_t free_ = kNil;
  std::array<std::uint32_t, kSlots> head_{};
  std::uint64_t occupied_ = 0;  // bit s: slot s holds entries
  Cycle base_{0};               // slot s holds the entries due at the cycle in [base_, base_ + kSlots) that is s mod kSlots
  std::vector<WaitEntry> far_;  // due at base_ + kSlots or later when pushed: a min-heap by readyAt
};

}  // namespace smtlab
