// The load/store unit: loads access the data cache hierarchy when they issue (after the AGU latency); stores write
// the cache when they retire, or, with core.lsu.store_buffer, keep their store-queue entry after retire and drain
// into the L1D at its store bandwidth (StoreQueue). Memory ordering (core.lsu): before a load issues it
// searches its thread's older stores (in flight and buffered), youngest first: one that covers its bytes forwards its
// data (no L1D access); one that overlaps only partly, or matches in address bits 0..11 only (4K aliasing), holds the
// load until it has written the L1D; one whose address is unknown holds it, or not, by core.lsu.memory_dependence,
// and a load that went ahead of a store that then turns out to overlap it is flushed (the core's flush path) and
// teaches a per-PC predictor. NetBurst's 64K aliasing makes an L1D hit a miss when the other line of the same
// position modulo 64 KiB was used last (Alias64k). Load queue entries (taken at allocation) are freed at retire. It
// tracks each thread's loads that missed the L1D (MISSCOUNT) and passes every load to the long-latency hook, with
// which the STALL and FLUSH policies gate or flush their thread. With core.lsu.sibling_order_clears a store that writes
// the L1D clears a sibling thread that read one of its lines out of order (the memory-ordering machine clear).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/alias_64k.hpp"
#include "smtlab/core/long_latency_hook.hpp"
#include "smtlab/core/stage_ports.hpp"
#include "smtlab/core/store_queue.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/mem/memory_system.hpp"

namespace smtlab {

class LoadStoreUnit final : public ILoadStorePort {
 public:
  // action: what a load missing core.long_latency_miss does to its thread (STALL: gate, FLUSH: flush, MLP-aware fetch:
  // both from the load's predicted MLP distance on, else none).
  LoadStoreUnit(CoreId core, const Config& config, MemorySystem& memory, std::span<ThreadContext> threads,
                CoreQueues& queues, LongLatencyAction action);

  Cycle loadMayIssueAt(std::uint32_t thread, const Uop& load, Cycle now) override;
  Cycle executeLoad(std::uint32_t thread, Uop& uop, Cycle now) override;
  // MLP-aware fetch's distance predictor, which the retire unit trains (null under any other fetch policy).
  MlpPredictor* mlpPredictor() { return mlp_.get(); }
  // The level from which a load counts as long-latency (a miss of core.long_latency_miss).
  MemLevel longLatencyLevel() const { return longLatency_.threshold(); }
  void executeStore(std::uint32_t thread, const Uop& store, Cycle now) override;
  void storeDataReady(std::uint32_t thread, const Uop& store, Cycle dataAt) override;
  void retireMemory(std::uint32_t thread, const Uop& uop, Cycle now) override;

  // Each cycle: buffered (retired) stores write the L1D. True if anything changed.
  bool drainStores(Cycle now) {
    if (!tracking_) return false;
    const bool changed = stores_.drain(now);
    if (!written_.empty()) snoopWritten(now);
    return changed;
  }
  // The next cycle after `now` at which the unit can change anything by itself (a store's drain).
  void earliestWake(Cycle now, Cycle& next) const {
    if (tracking_) stores_.earliestWake(now, next);
  }
  // Retired stores still waiting to write the L1D (they hold SQ entries; the core has work while any remain).
  bool hasBufferedStores() const { return tracking_ && stores_.anyBuffered(); }
  std::uint32_t bufferedStores(std::uint32_t thread) const { return tracking_ ? stores_.retiredCount(thread) : 0; }
  // The core squashed thread t's instructions from seq `from` on; retired stores stay and drain.
  void squashFrom(std::uint32_t thread, SeqNum from);
  // A trace was attached to (or restarted on) thread t.
  void threadBound(std::uint32_t thread);
  // The store queue, the memory-dependence predictor, 64K-aliasing positions and loads in flight (a snapshot:
  // common/state_io.hpp).
  void visitState(StateIo& io);
  // Functional warming (docs/sampling.md): the instruction's loads and stores reach the DTLB and data caches, in
  // program order and with no timing (the memory system is in functional mode); no forwarding, no queue entry.
  void warm(Asid asid, const Instr& in, Cycle now) {
    // The present operands as a mask, without a branch per slot (most instructions have none or one, and a branch per
    // empty slot mispredicted often enough to show in the functional mode's profile).
    unsigned mask = 0;
    for (int k = 0; k < kMaxLoads; ++k) mask |= static_cast<unsigned>(in.loads[k].size != 0) << k;
    for (int k = 0; k < kMaxStores; ++k) mask |= static_cast<unsigned>(in.stores[k].size != 0) << (kMaxLoads + k);
    for (; mask != 0; mask &= mask - 1) {
      const int slot = std::countr_zero(mask);
      if (slot < kMaxLoads) {
        memory_.load(core_, asid, in.loads[slot].addr, in.loads[slot].size, now);
      } else {
        memory_.store(core_, asid, in.stores[slot - kMaxLoads].addr, in.stores[slot - kMaxLoads].size, now);
      }
    }
  }

  // (thread, seq) of loads after which FLUSH squashes, gathered during issue; the core applies and clears them.
  const std::vector<std::pair<std::uint32_t, SeqNum>>& pendingFlushes() const { return pendingFlushes_; }
  void clearPendingFlushes() { pendingFlushes_.clear(); }
  // (thread, seq) of loads that read before a conflicting older store resolved: the core squashes from each load
  // (counted as memory-order flushes, not FLUSH-policy ones), then clears them.
  const std::vector<std::pair<std::uint32_t, SeqNum>>& orderViolations() const { return orderViolations_; }
  void clearOrderViolations() { orderViolations_.clear(); }
  // (thread, seq) of memory-ordering machine clears (core.lsu.sibling_order_clears): a sibling's store wrote a line the
  // thread had read out of order; the core restarts the thread from seq, its oldest unretired instruction then.
  const std::vector<std::pair<std::uint32_t, SeqNum>>& siblingClears() const { return siblingClears_; }
  void clearSiblingClears() { siblingClears_.clear(); }
  // Any of the three lists above is not empty.
  bool hasPendingSquashes() const {
    return !pendingFlushes_.empty() || !orderViolations_.empty() || !siblingClears_.empty();
  }

 private:
  // What a load's search of its older stores found.
  enum class Hold : std::uint8_t { None, StoreAddress, ForwardStall, Alias4k, StoreData };
  struct Search {
    Hold hold = Hold::None;
    Cycle retryAt = Cycle::never();
    bool bypassedUnknown = false;  // went ahead of an older store whose address is unknown
    // Per load operand: forwarded from a store (dataAt: the store's data), and which in-flight stores the operand's
    // bytes already reflect: those older than `source`, which is one past the store it forwarded from (kNoStore: none,
    // it read the cache or a retired store).
    std::array<bool, kMaxLoads> forwarded{};
    std::array<Cycle, kMaxLoads> dataAt{};
    std::array<SeqNum, kMaxLoads> source{};  // kNoStore
  };
  // No in-flight store is reflected: every older store may still write the bytes. Sequence number 0, older than any
  // store the load can see, so "store older than source" is false for all of them.
  static constexpr SeqNum kNoStore{0};
  // A load that went ahead of an older unknown-address store, kept until a store's address can show it read early.
  struct SpeculativeLoad {
    SeqNum seq;
    std::uint64_t age;
    MemRef ref;
    SeqNum source;  // the stores older than this are in the bytes it read (Search::source; kNoStore: none)
    Addr pc;
  };

  void search(std::uint32_t t, const Uop& load, Cycle now, Search& out);
  bool predictsConflict(Addr pc) const { return conflictBits_[(pc ^ (pc >> 12)) & predictorMask_] != 0; }
  void countHold(std::uint32_t t, const Uop& load, Hold hold);
  void pruneSpeculative(std::uint32_t t);
  // core.lsu.sibling_order_clears: store `st` of thread t (address space asid) writes the L1D at `now`; every other
  // thread with an issued load of one of its lines while an older load of its own still waits for its data is cleared.
  void snoopSiblings(std::uint32_t t, Asid asid, const std::array<MemRef, kMaxStores>& st, Cycle now);
  // snoopSiblings for every store the drain wrote (written_), then forgets them.
  void snoopWritten(Cycle now);

  const CoreId core_;
  const std::uint32_t loadAgu_;
  const std::unique_ptr<MlpPredictor> mlp_;  // MLP-aware fetch's distance predictor; null under any other policy
  const LongLatencyHook longLatency_;
  // Only a fetch policy that counts each thread's L1D misses in flight (MISSCOUNT) and an allocation policy that
  // classifies threads by them (DCRA) read ThreadContext::missDone; under any other the list is not kept, so its
  // completion cycles are no wake-up points either (core.cpp).
  const bool countMisses_;
  const bool storeBuffer_;  // core.lsu.store_buffer
  const bool forwarding_;   // core.lsu.forwarding
  const bool forwardSameAddress_;
  const std::uint32_t forwardLatency_;
  const MemDependence memDependence_;
  const bool alias4k_;
  const bool ordering_;     // loads search older stores (forwarding, a memory-dependence mode or 4K aliasing)
  const bool tracking_;     // the store queue's contents are modelled (store buffer or ordering)
  const std::uint32_t aliasPenalty_;  // a 64K-aliasing conflict serves an L1D hit from the L2 (mem.l2.latency)
  const Addr predictorMask_;
  MemorySystem& memory_;
  std::span<ThreadContext> threads_;
  CoreQueues& queues_;
  std::vector<Alias64k> alias64k_;  // one (the core's) when core.lsu.alias_64k, else none
  StoreQueue stores_;
  std::vector<std::uint8_t> conflictBits_;  // memory-dependence predictor: per-PC "has conflicted", sticky
  std::vector<std::vector<SpeculativeLoad>> speculative_;  // per thread, capacity reserved once
  std::size_t speculativeCap_ = 0;
  // Per thread and ROB slot: (age, hold kinds already counted), so a load polled for many cycles counts once.
  std::vector<std::vector<std::pair<std::uint64_t, std::uint8_t>>> holdCounted_;
  Search last_;  // the search of the load asked last, reused when it issues in the same cycle
  std::uint32_t lastThread_ = 0;
  std::uint64_t lastAge_ = 0;
  Cycle lastCycle_ = Cycle::never();
  std::vector<std::pair<std::uint32_t, SeqNum>> pendingFlushes_;
  std::vector<std::pair<std::uint32_t, SeqNum>> orderViolations_;
  const bool snoopSiblings_;                    // core.lsu.sibling_order_clears (and more than one thread)
  const std::uint32_t lineShift_;
  std::vector<WrittenStore> written_;           // the stores the last drain wrote, when snoopSiblings_
  std::vector<std::pair<std::uint32_t, SeqNum>> siblingClears_;
};

}  // namespace smtlab
