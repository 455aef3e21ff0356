// The store queue of one core's threads, in program order per thread: stores in flight (renamed, not retired: their
// address known once their store-address part has executed) followed by retired stores that have not yet written the
// L1D (the post-retire store buffer; Intel's "senior stores"). At retire a store asks the memory system for its line
// (the request for ownership; chosen: at retire rather than at execute, so squashed stores never touch the caches,
// and misses of several buffered stores overlap up to the L1D's MSHRs). It then writes the L1D in program order (x86
// stores become visible in order), `stores_per_cycle` per cycle over all threads; one whose line is not yet owned
// holds its thread's drain until it is. The entry's SQ capacity is freed when it has written the cache, so a
// store-bound loop runs at the drain rate. Loads search it for forwarding and ordering (LoadStoreUnit).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/core/alias_64k.hpp"
#include "smtlab/core/capacity.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/mem/memory_system.hpp"

namespace smtlab {

struct StoreEntry {
  std::array<MemRef, kMaxStores> refs{};
  SeqNum seq{0};                       // program order within the thread's current trace (in-flight entries)
  Addr pc = 0;
  Asid asid{0};
  Cycle addressAt = Cycle::never();    // the store-address part has executed (never: not yet issued)
  Cycle dataAt = Cycle::never();       // its data can be forwarded from then on
  Cycle ownedAt = Cycle::never();      // retired: its line is owned (writable) from then on
  bool retired = false;
};

// A retired store as it writes the L1D (becomes visible to the sibling threads): StoreQueue::setWrittenLog.
struct WrittenStore {
  std::uint32_t thread = 0;
  Asid asid{0};
  std::array<MemRef, kMaxStores> refs{};
};

class StoreQueue {
 public:
  // sqEntries: the SQ's total size (one thread may hold all of it under shared sharing). alias: NetBurst's 64K
  // aliasing (nullptr: off); a store that conflicts there takes aliasPenalty cycles (an L2 hit) instead of a hit.
  StoreQueue(CoreId core, std::uint32_t threads, std::uint32_t sqEntries, std::uint32_t storesPerCycle,
             MemorySystem& memory, std::span<ThreadContext> contexts, SharedCapacity& sq, Alias64k* alias,
             std::uint32_t aliasPenalty);

  // Appends thread t's renamed stores that are not yet listed (each ROB slot is looked at once).
  void sync(std::uint32_t t);
  // The in-flight entry of store `seq` (synced first); nullptr if the thread has none with that seq.
  StoreEntry* inFlight(std::uint32_t t, SeqNum seq);
  // Store `seq` retires (the oldest in-flight entry): it becomes a buffered store and requests its line.
  void retire(std::uint32_t t, SeqNum seq, Cycle now);
  // Store `seq` retires and writes the L1D at once (no store buffer): its entry leaves (the caller frees the SQ slot).
  void retireWritten(std::uint32_t t, SeqNum seq);
  // Drops in-flight entries with seq >= from (squash). Retired entries are architectural and stay to drain.
  void squashFrom(std::uint32_t t, SeqNum from);
  // A trace was (re)attached: in-flight entries are gone, program order restarts at the cursor's retire point.
  void rebind(std::uint32_t t);

  // Writes buffered stores into the L1D. True if anything changed.
  bool drain(Cycle now);
  // Every store drain() writes is also appended to `log` (nullptr: none is kept; the default).
  void setWrittenLog(std::vector<WrittenStore>* log) { written_ = log; }
  // The next cycle after `now` at which draining can change anything.
  void earliestWake(Cycle now, Cycle& next) const;

  // Entries of thread t, oldest first: [0, retiredCount) buffered, then in flight. Index i < size(t).
  std::uint32_t size(std::uint32_t t) const { return static_cast<std::uint32_t>(ring_[t].tail - ring_[t].head); }
  std::uint32_t retiredCount(std::uint32_t t) const {
    return static_cast<std::uint32_t>(ring_[t].retiredEnd - ring_[t].head);
  }
  const StoreEntry& at(std::uint32_t t, std::uint32_t i) const {
    const Ring& r = ring_[t];
    return r.slots[(r.head + i) & r.mask];
  }
  bool anyBuffered() const { return buffered_ != 0; }
  // In-flight and buffered stores (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io);

 private:
  struct Ring {
    std::vector<StoreEntry> slots;
    std::uint64_t mask = 0;
    std::uint64_t head = 0, retiredEnd = 0, tail = 0;  // [head, retiredEnd) retired, [retiredEnd, tail) in flight
    SeqNum scanned{0};                                  // ROB seqs below this were looked at by sync
    void visitState(StateIo& io) { io(slots, mask, head, retiredEnd, tail, scanned); }
  };
  void popWritten(std::uint32_t t);

  const CoreId core_;
  const std::uint32_t threadCount_;
  const std::uint32_t storesPerCycle_;
  const std::uint32_t aliasPenalty_;
  Alias64k* alias_;
  MemorySystem& memory_;
  std::span<ThreadContext> contexts_;
  SharedCapacity& sq_;
  std::vector<Ring> ring_;
  const bool writeThrough_;  // mem.l1d_write_through: a store leaves when it is in a write-combining buffer
  std::uint32_t buffered_ = 0;      // retired entries over all threads
  std::uint32_t lastDrained_ = 0;   // round-robin start of the drain's thread order
  std::vector<WrittenStore>* written_ = nullptr;
};

}  // namespace smtlab
