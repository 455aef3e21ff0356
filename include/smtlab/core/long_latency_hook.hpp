// The long-latency hook of the STALL and FLUSH fetch policies (Tullsen & Brown 2001): a load that misses the
// configured cache (core.long_latency_miss) gates its thread's fetch until its data returns, and with FLUSH its
// younger instructions are squashed, so a thread waiting on memory stops holding shared queue entries. The load/store
// unit calls it for every executed load; it is a plain object (no virtual call), decided at construction.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/mem/memory_system.hpp"

namespace smtlab {

enum class LongLatencyAction : std::uint8_t { None, Gate, Flush };

class LongLatencyHook {
 public:
  LongLatencyHook(LongLatencyAction action, LongLatencyMiss miss)
      : action_(action), threshold_(static_cast<MemLevel>(static_cast<int>(miss) + 1)) {}

  // The lowest level whose service makes a load long-latency (a miss of the configured cache).
  MemLevel threshold() const { return threshold_; }

  // A load of thread t (instruction seq) executed, served by `level`, its data ready at `dataReady`.
  void onLoad(ThreadContext& th, std::uint32_t t, SeqNum seq, MemLevel level, Cycle dataReady,
              std::vector<std::pair<std::uint32_t, SeqNum>>& flushes) const {
    if (action_ == LongLatencyAction::None || level < threshold_) return;
    if (dataReady > th.gatedUntil) th.gatedUntil = dataReady;
    if (action_ == LongLatencyAction::Flush) flushes.emplace_back(t, seq);
  }

 private:
  const LongLatencyAction action_;
  const MemLevel threshold_;
};

}  // namespace smtlab
