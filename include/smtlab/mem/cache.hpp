// One set-associative, write-back, write-allocate cache level with LRU replacement and a bank of MSHRs. Time is kept
// as timestamps: each line remembers the cycle its fill completes, each MSHR the cycle it frees up.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/mem/memory_system.hpp"
#include "smtlab/mem/tag_array.hpp"

namespace smtlab {

class Cache {
 public:
  static constexpr std::uint32_t kNotFound = SetAssocTags<>::kNotFound;

  struct Eviction {
    bool dirty = false;       // the displaced line must be written back below
    LineAddr line;            // its line number
  };
  struct MshrGrant {
    std::uint32_t slot;
    Cycle start;  // when the miss may leave: now, or when the earliest MSHR frees up
  };

  // `name` is the config key of this level ("mem.l1d"), used in error messages. Throws ConfigError when the
  // geometry is not a power-of-two number of sets or a count is zero.
  Cache(const CacheConfig& config, std::uint32_t lineBytes, const std::string& name);

  std::uint32_t latency() const { return latency_; }
  std::uint32_t sets() const { return tags_.sets(); }
  std::uint32_t ways() const { return tags_.ways(); }

  // Lookup by line number; kNotFound on a miss. No side effects. The tag store holds the raw line numbers (its keys
  // are line or page numbers, so it stays a plain integer store).
  std::uint32_t find(LineAddr line) const { return tags_.find(line.value); }
  void touch(std::uint32_t entry) { tags_.touch(entry); }
  void setDirty(std::uint32_t entry) { dirty_[entry] = 1; }
  Cycle ready(std::uint32_t entry) const { return ready_[entry]; }
  MemLevel source(std::uint32_t entry) const { return source_[entry]; }

  // Installs `line` (absent) whose data arrives at `ready` from level `source`.
  Eviction fill(LineAddr line, Cycle ready, MemLevel source, bool dirty) {
    const auto ins = tags_.insert(line.value);
    Eviction ev{ins.evicted && dirty_[ins.entry] != 0, LineAddr::fromNumber(ins.evictedKey)};
    ready_[ins.entry] = ready;
    source_[ins.entry] = source;
    dirty_[ins.entry] = dirty ? 1 : 0;
    return ev;
  }

  // The MSHR that frees up first; waiting for it is counted in mshrFullCycles.
  MshrGrant acquireMshr(Cycle now) {
    std::uint32_t best = 0;
    for (std::uint32_t i = 1; i < mshrFree_.size(); ++i) {
      if (mshrFree_[i] < mshrFree_[best]) best = i;
    }
    const Cycle start = mshrFree_[best] > now ? mshrFree_[best] : now;
    stats_.mshrFullCycles += start - now;
    return MshrGrant{best, start};
  }
  // An MSHR free at `now`, or kNotFound (prefetches do not wait for one).
  std::uint32_t freeMshrAt(Cycle now) const {
    for (std::uint32_t i = 0; i < mshrFree_.size(); ++i) {
      if (mshrFree_[i] <= now) return i;
    }
    return kNotFound;
  }
  void holdMshr(std::uint32_t slot, Cycle until) { mshrFree_[slot] = until; }
  // MSHRs whose miss has not completed by `now`.
  std::uint32_t busyMshrs(Cycle now) const {
    std::uint32_t n = 0;
    for (const Cycle c : mshrFree_) n += c > now ? 1 : 0;
    return n;
  }

  CacheStats& stats() { return stats_; }
  const CacheStats& stats() const { return stats_; }
  void resetStats() { stats_ = {}; }
  // Contents, replacement order, fills in flight and MSHRs (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io) { io(tags_, ready_, dirty_, source_, mshrFree_, stats_); }

 private:
  std::uint32_t latency_;
  SetAssocTags<LruReplacement> tags_;
  std::vector<Cycle> ready_;        // per entry: cycle the fill completes
  std::vector<std::uint8_t> dirty_;  // per entry
  std::vector<MemLevel> source_;    // per entry: level that supplied the fill (reported on an MSHR merge)
  std::vector<Cycle> mshrFree_;     // per MSHR: cycle it frees up
  CacheStats stats_;
};

// Throws ConfigError naming `key` unless `value` is a non-zero power of two.
void requirePowerOfTwo(std::uint64_t value, const std::string& key, const std::string& what);

}  // namespace smtlab
