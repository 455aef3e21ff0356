// The load/store unit: loads access the data cache hierarchy when they issue (after the AGU latency); stores write
// the cache when they retire; load and store queue entries (taken at allocation) are freed at retire. It tracks each
// thread's loads that missed the L1D (MISSCOUNT) and passes every load to the long-latency hook, with which the STALL
// and FLUSH policies gate or flush their thread. Store-to-load forwarding, memory ordering and a post-retire store buffer will
// live here (issue 10 §3).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/long_latency_hook.hpp"
#include "smtlab/core/stage_ports.hpp"
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

  // (thread, seq) of loads after which FLUSH squashes, gathered during issue; the core applies and clears them.
  const std::vector<std::pair<std::uint32_t, std::uint64_t>>& pendingFlushes() const { return pendingFlushes_; }
  void clearPendingFlushes() { pendingFlushes_.clear(); }

 private:
  const CoreId core_;
  const std::uint32_t loadAgu_;
  const LongLatencyHook longLatency_;
  MemorySystem& memory_;
  std::span<ThreadContext> threads_;
  CoreQueues& queues_;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> pendingFlushes_;
};

}  // namespace smtlab
