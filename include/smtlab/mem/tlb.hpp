// A set-associative TLB with LRU replacement. A miss costs a page walk (a fixed latency, or the walk's loads through
// the caches: page_walker.hpp) and fills the entry; an access that finds an entry whose walk is still in progress
// waits for that walk instead of starting another.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/mem/memory_system.hpp"
#include "smtlab/mem/tag_array.hpp"

namespace smtlab {

class Tlb {
 public:
  struct Translation {
    Cycle ready;  // cycle the translation is available (now on a hit)
    bool miss;
  };

  // `name` is the config key ("mem.dtlb"), used in error messages.
  Tlb(const TlbConfig& config, const std::string& name);

  // `page` is a page number that already includes the address space (see address_space.hpp).
  Translation translate(std::uint64_t page, Cycle now) {
    return translate(page, now, [this](Cycle start) { return start + missLatency_; });
  }
  // The same with the page walk given as `walk(now) -> cycle the translation is known` (page_walker.hpp: the
  // walk's loads through the caches).
  template <class Walk>
  Translation translate(std::uint64_t page, Cycle now, Walk&& walk) {
    ++stats_.accesses;
    const std::uint32_t entry = tags_.find(page);
    if (entry != SetAssocTags<>::kNotFound) {
      tags_.touch(entry);
      return Translation{ready_[entry] > now ? ready_[entry] : now, false};
    }
    ++stats_.misses;
    const Cycle ready = walk(now);
    stats_.walkCycles += ready - now;
    ready_[tags_.insert(page).entry] = ready;
    return Translation{ready, true};
  }

  // Drops the entries of page numbers (as given to translate) that `pred` selects: a TLB flush on an address-space
  // switch. Returns how many were dropped.
  template <class Pred>
  std::uint32_t flush(Pred&& pred) {
    const std::uint32_t n = tags_.invalidateIf(pred);
    stats_.flushed += n;
    return n;
  }

  const TlbStats& stats() const { return stats_; }
  void resetStats() { stats_ = {}; }
  // Entries, replacement order and walks in progress (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io) { io(tags_, ready_, stats_); }

 private:
  std::uint32_t missLatency_;
  SetAssocTags<LruReplacement> tags_;
  std::vector<Cycle> ready_;
  TlbStats stats_;
};

}  // namespace smtlab
