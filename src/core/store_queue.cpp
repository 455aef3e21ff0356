#include "smtlab/core/store_queue.hpp"

#include <bit>

namespace smtlab {

StoreQueue::StoreQueue(CoreId core, std::uint32_t threads, std::uint32_t sqEntries, std::uint32_t storesPerCycle,
                       MemorySystem& memory, std::span<ThreadContext> contexts, SharedCapacity& sq, Alias64k* alias,
                       std::uint32_t aliasPenalty)
    : core_(core),
      threadCount_(threads),
      storesPerCycle_(storesPerCycle),
      aliasPenalty_(aliasPenalty),
      alias_(alias),
      memory_(memory),
      contexts_(contexts),
      sq_(sq),
      ring_(threads),
      writeThrough_(memory.l1dWriteThrough()) {
  // Every entry holds an SQ slot, so a thread never has more than the SQ's size.
  const std::uint32_t cap = std::bit_ceil(std::max<std::uint32_t>(sqEntries, 1));
  for (Ring& r : ring_) {
    r.slots.assign(cap, StoreEntry{});
    r.mask = cap - 1;
  }
}

void StoreQueue::sync(std::uint32_t t) {
  Ring& r = ring_[t];
  ThreadContext& th = contexts_[t];
  if (th.cursor == nullptr) return;
  if (r.scanned < th.cursor->retireSeq()) r.scanned = th.cursor->retireSeq();
  for (; r.scanned < th.robTail; ++r.scanned) {
    const Uop& u = th.robSlot(r.scanned);
    if (!u.hasStore) continue;
    // Every field set on its own: assigning a fresh StoreEntry{} first built it on the stack and copied it with 16-byte
    // loads that straddle its stores, which the CPU cannot forward from its store buffer (a stall at every store).
    StoreEntry& e = r.slots[r.tail & r.mask];
    [[maybe_unused]] const auto& [refs, seq, pc, asid, addressAt, dataAt, ownedAt, retired] = e;  // all its fields
    e.refs = u.instr->stores;
    e.seq = u.seq;
    e.pc = u.instr->pc;
    e.asid = th.asid;
    e.addressAt = Cycle::never();
    e.dataAt = Cycle::never();
    e.ownedAt = Cycle::never();
    e.retired = false;
    ++r.tail;
  }
}

StoreEntry* StoreQueue::inFlight(std::uint32_t t, SeqNum seq) {
  sync(t);
  Ring& r = ring_[t];
  // Entries are in seq order: search from the youngest (a store is usually looked up soon after it is renamed).
  for (std::uint64_t i = r.tail; i > r.retiredEnd; --i) {
    StoreEntry& e = r.slots[(i - 1) & r.mask];
    if (e.seq == seq) return &e;
    if (e.seq < seq) break;
  }
  return nullptr;
}

void StoreQueue::retire(std::uint32_t t, SeqNum seq, Cycle now) {
  sync(t);
  Ring& r = ring_[t];
  if (r.retiredEnd == r.tail || r.slots[r.retiredEnd & r.mask].seq != seq) return;  // not listed: nothing to keep
  StoreEntry& e = r.slots[r.retiredEnd & r.mask];
  e.retired = true;
  // Write-back L1D: the request for ownership; a miss owns its line when the fill returns (MemorySystem's store
  // timing, write-allocate); misses of several buffered stores overlap in the L1D's MSHRs. Write-through L1D: the
  // store may leave when it is in a write-combining buffer.
  Cycle owned = now;
  for (const MemRef& ref : e.refs) {
    if (!ref.valid()) continue;
    const MemResult res = memory_.store(core_, e.asid, ref.addr, ref.size, now);
    Cycle done = res.level != MemLevel::L1 || writeThrough_ ? res.ready : now;
    // 64K aliasing evicted the line: it comes back from the L2 (a write-through store does not wait for its line).
    const bool aliased = alias_ != nullptr && alias_->touch(e.asid, ref.addr);
    if (aliased && res.level == MemLevel::L1 && !writeThrough_) {
      done = now + aliasPenalty_;
      ++contexts_[t].stats.alias64kConflicts;
    }
    if (done > owned) owned = done;
  }
  e.ownedAt = owned;
  ++r.retiredEnd;
  ++buffered_;
}

void StoreQueue::retireWritten(std::uint32_t t, SeqNum seq) {
  sync(t);
  Ring& r = ring_[t];
  if (r.head != r.retiredEnd || r.retiredEnd == r.tail || r.slots[r.retiredEnd & r.mask].seq != seq) return;
  ++r.head;
  ++r.retiredEnd;
}

void StoreQueue::squashFrom(std::uint32_t t, SeqNum from) {
  Ring& r = ring_[t];
  while (r.tail > r.retiredEnd && r.slots[(r.tail - 1) & r.mask].seq >= from) --r.tail;
  if (r.scanned > from) r.scanned = from;
}

void StoreQueue::rebind(std::uint32_t t) {
  Ring& r = ring_[t];
  r.tail = r.retiredEnd;
  const ThreadContext& th = contexts_[t];
  r.scanned = th.cursor != nullptr ? th.cursor->retireSeq() : SeqNum{0};
}

void StoreQueue::popWritten(std::uint32_t t) {
  if (written_ != nullptr) {
    const StoreEntry& e = ring_[t].slots[ring_[t].head & ring_[t].mask];
    written_->push_back({t, e.asid, e.refs});
  }
  ++ring_[t].head;
  --buffered_;
  sq_.release(t);
}

bool StoreQueue::drain(Cycle now) {
  if (buffered_ == 0) return false;
  bool changed = false;
  // Write slots go round-robin over the threads, one store per thread per turn; a thread whose oldest buffered store
  // does not own its line yet waits (stores become visible in program order).
  std::uint32_t slots = storesPerCycle_;
  bool progress = true;
  while (slots > 0 && progress) {
    progress = false;
    const std::uint32_t start = lastDrained_;
    for (std::uint32_t i = 1; i <= threadCount_ && slots > 0; ++i) {
      const std::uint32_t t = (start + i) % threadCount_;
      const Ring& r = ring_[t];
      if (r.head == r.retiredEnd || r.slots[r.head & r.mask].ownedAt > now) continue;
      popWritten(t);
      lastDrained_ = t;
      --slots;
      progress = changed = true;
    }
  }
  return changed;
}

void StoreQueue::earliestWake(Cycle now, Cycle& next) const {
  if (buffered_ == 0) return;
  for (const Ring& r : ring_) {
    if (r.head == r.retiredEnd) continue;
    const Cycle owned = r.slots[r.head & r.mask].ownedAt;
    const Cycle at = owned > now ? owned : now + 1;  // its line arrives, or the next cycle's write slot
    if (at < next) next = at;
  }
}

void StoreQueue::visitState(StateIo& io) { io(ring_, buffered_, lastDrained_); }

}  // namespace smtlab
