// The load/store unit: loads access the data cache hierarchy when they issue (after the AGU latency); stores write
// the cache when they retire, or, with core.lsu.store_buffer, keep their store-queue entry after retire and drain
// into the L1D at its store bandwidth (StoreQueue). Load queue entries (taken at allocation) are freed at retire. It
// tracks each thread's loads that missed the L1D (MISSCOUNT) and passes every load to the long-latency hook, with
// which the STALL and FLUSH policies gate or flush their thread.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/long_latency_hook.hpp"
#include "smtlab/core/stage_ports.hpp"
#include "smtlab/core/store_queue.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/mem/memory_system.hpp"

namespace smtlab {

class LoadStoreUnit final : public ILoadStorePort {
 public:
  // action: what a load missing core.long_latency_miss does to its thread (STALL: gate, FLUSH: flush, else none).
  LoadStoreUnit(CoreId core, const Config& config, MemorySystem& memory, std::span<ThreadContext> threads,
                CoreQueues& queues, LongLatencyAction action);

  Cycle executeLoad(std::uint32_t thread, Uop& uop, Cycle now) override;
  void retireMemory(std::uint32_t thread, const Uop& uop, Cycle now) override;

  // Each cycle: buffered (retired) stores write the L1D. True if anything changed.
  bool drainStores(Cycle now) { return tracking_ && stores_.drain(now); }
  // The next cycle after `now` at which the unit can change anything by itself (a store's drain).
  void earliestWake(Cycle now, Cycle& next) const {
    if (tracking_) stores_.earliestWake(now, next);
  }
  // Retired stores still waiting to write the L1D (they hold SQ entries; the core has work while any remain).
  bool hasBufferedStores() const { return tracking_ && stores_.anyBuffered(); }
  std::uint32_t bufferedStores(std::uint32_t thread) const { return tracking_ ? stores_.retiredCount(thread) : 0; }
  // The core squashed thread t's instructions from seq `from` on; retired stores stay and drain.
  void squashFrom(std::uint32_t thread, std::uint64_t from) {
    if (tracking_) stores_.squashFrom(thread, from);
  }
  // A trace was attached to (or restarted on) thread t.
  void threadBound(std::uint32_t thread) {
    if (tracking_) stores_.rebind(thread);
  }

  // (thread, seq) of loads after which FLUSH squashes, gathered during issue; the core applies and clears them.
  const std::vector<std::pair<std::uint32_t, std::uint64_t>>& pendingFlushes() const { return pendingFlushes_; }
  void clearPendingFlushes() { pendingFlushes_.clear(); }

 private:
  const CoreId core_;
  const std::uint32_t loadAgu_;
  const LongLatencyHook longLatency_;
  const bool storeBuffer_;  // core.lsu.store_buffer
  const bool tracking_;     // the store queue's contents are modelled (some core.lsu mechanism is on)
  MemorySystem& memory_;
  std::span<ThreadContext> threads_;
  CoreQueues& queues_;
  StoreQueue stores_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> pendingFlushes_;
};

}  // namespace smtlab
