// A queue's capacity and how it is divided between the hardware threads of a core: the one place where the
// replicated / partitioned / shared / capped policies live, and where an adaptive allocation policy sets its shares.
// Every queue of the pipeline (uop queue, ROB, issue queue, load and store queues) holds one of these and asks it
// before taking an entry.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "smtlab/common/state_io.hpp"
#include "smtlab/config/config.hpp"

namespace smtlab {

inline constexpr int kMaxThreads = 8;

enum class CapacityVerdict : std::uint8_t {
  Ok,
  StructureFull,  // the whole structure is full (or, for a shared one, the thread's limit is the structure)
  PartitionFull,  // the thread holds all it is allowed to while the structure still has room
};

class SharedCapacity {
 public:
  SharedCapacity() = default;
  SharedCapacity(std::string name, const QueueConfig& config, std::uint32_t threads, bool recombine);

  // Can `thread` take `n` more entries?
  CapacityVerdict check(std::uint32_t thread, std::uint32_t n = 1) const {
    if (used_[thread] + n > limit_[thread]) {
      // A share as large as the structure (shared, or a partition recombined for a lone thread) is the structure.
      return limit_[thread] >= total_ ? CapacityVerdict::StructureFull : CapacityVerdict::PartitionFull;
    }
    if (usedTotal_ + n > total_) return CapacityVerdict::StructureFull;
    return CapacityVerdict::Ok;
  }
  // check(thread, n) == Ok, for callers that need no reason (rename asks it for every instruction).
  bool fits(std::uint32_t thread, std::uint32_t n = 1) const {
    return used_[thread] + n <= limit_[thread] && usedTotal_ + n <= total_;
  }
  void take(std::uint32_t thread, std::uint32_t n = 1) {
    const std::uint32_t used = used_[thread] += n;
    const std::uint32_t usedTotal = usedTotal_ += n;
    // Callers check() first; taking past the share would be a pipeline bug, counted so checks and tests see it.
    if (used > limit_[thread] || usedTotal > total_) [[unlikely]] ++overTakes_;
  }
  void release(std::uint32_t thread, std::uint32_t n = 1) {
    used_[thread] -= n;
    usedTotal_ -= n;
  }
  // The set of threads that currently run changed: partitions are redivided among them (if recombination is on).
  // These are the `static` allocation policy's shares; an adaptive policy (allocation_policy.hpp) overrides them.
  void setActive(std::uint32_t activeMask);
  // An adaptive allocation policy sets a thread's share: at most `limit` entries, of which `guaranteed` it can always
  // get. A limit below what the thread holds stops its allocation until it has freed enough.
  void setShare(std::uint32_t thread, std::uint32_t limit, std::uint32_t guaranteed) {
    limit_[thread] = limit;
    guaranteed_[thread] = guaranteed;
  }

  std::uint32_t used(std::uint32_t thread) const { return used_[thread]; }
  std::uint32_t usedTotal() const { return usedTotal_; }
  std::uint32_t total() const { return total_; }
  std::uint32_t limit(std::uint32_t thread) const { return limit_[thread]; }
  // Entries the thread can always get, even while every other sharer holds its whole limit (at least 1): its limit
  // for replicated and partitioned structures, total - (sharers - 1) x limit for shared and capped ones.
  std::uint32_t guaranteed(std::uint32_t thread) const { return guaranteed_[thread]; }
  const std::string& name() const { return name_; }
  Sharing sharing() const { return sharing_; }
  // Entries taken beyond a thread's limit or the structure's size (must stay 0).
  std::uint64_t overTakes() const { return overTakes_; }
  // Entries held and the shares (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io) { io(usedTotal_, overTakes_, used_, limit_, guaranteed_); }

 private:
  std::string name_;
  Sharing sharing_ = Sharing::Shared;
  std::uint32_t entries_ = 0;  // as configured (per thread for Replicated)
  std::uint32_t threads_ = 1;
  std::uint32_t total_ = 0;    // entries in the whole structure
  double cap_ = 1.0;
  bool recombine_ = true;
  std::uint32_t usedTotal_ = 0;
  std::uint64_t overTakes_ = 0;
  std::array<std::uint32_t, kMaxThreads> used_{};
  std::array<std::uint32_t, kMaxThreads> limit_{};
  std::array<std::uint32_t, kMaxThreads> guaranteed_{};
};

}  // namespace smtlab
