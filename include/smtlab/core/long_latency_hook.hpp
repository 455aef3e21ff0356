// The long-latency hook of the STALL and FLUSH fetch policies (Tullsen & Brown 2001): a load that misses the
// configured cache (core.long_latency_miss) gates its thread's fetch until its data returns, and with FLUSH its
// younger instructions are squashed, so a thread waiting on memory stops holding shared queue entries. With MLP-aware
// fetch (Eyerman & Eeckhout 2007) the gate and the squash start the load's predicted MLP distance past it
// (mlp_predictor.hpp). The load/store unit calls it for every executed load; it is a plain object (no virtual call),
// decided at construction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/mlp_predictor.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/mem/memory_system.hpp"

namespace smtlab {

enum class LongLatencyAction : std::uint8_t { None, Gate, Flush, MlpFlush };

class LongLatencyHook {
 public:
  // `mlp`: the predictor MlpFlush reads (not null then).
  LongLatencyHook(LongLatencyAction action, LongLatencyMiss miss, const MlpPredictor* mlp = nullptr)
      : action_(action), threshold_(static_cast<MemLevel>(static_cast<int>(miss) + 1)), mlp_(mlp) {}

  // The lowest level whose service makes a load long-latency (a miss of the configured cache).
  MemLevel threshold() const { return threshold_; }

  // A load of thread t (instruction seq, at pc) executed at `now`, served by `level`, its data ready at `dataReady`.
  // The flushes listed squash the thread's instructions after the seq given.
  void onLoad(ThreadContext& th, std::uint32_t t, SeqNum seq, Addr pc, MemLevel level, Cycle now, Cycle dataReady,
              std::vector<std::pair<std::uint32_t, SeqNum>>& flushes) const {
    if (action_ == LongLatencyAction::None || level < threshold_) return;
    if (action_ == LongLatencyAction::MlpFlush) {
      // The thread fetches on to the youngest miss the prediction says overlaps this one; a gate still open from an
      // earlier miss keeps the further of the two limits (the earlier miss predicted MLP up to its own).
      const SeqNum limit{seq.value + mlp_->predict(pc)};
      th.gateAfter = th.gatedUntil > now ? std::max(th.gateAfter, limit) : limit;
      flushes.emplace_back(t, th.gateAfter);
    }
    if (dataReady > th.gatedUntil) th.gatedUntil = dataReady;
    if (action_ == LongLatencyAction::Flush) flushes.emplace_back(t, seq);
  }

 private:
  const LongLatencyAction action_;
  const MemLevel threshold_;
  const MlpPredictor* const mlp_;
};

}  // namespace smtlab
