// Retire: in program order, up to retire_width per cycle from one thread, chosen by core.retire_policy among the
// threads whose oldest instruction is done (Pentium 4: alternate; a thread with nothing to retire yields its turn). Memory
// instructions hand their store and queue entries to the load/store unit; marks and retire limits become events.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/core_event.hpp"
#include "smtlab/core/fetch_policy.hpp"
#include "smtlab/core/mlp_predictor.hpp"
#include "smtlab/core/stage_ports.hpp"
#include "smtlab/core/thread_context.hpp"

namespace smtlab {

class RetireUnit {
 public:
  // mlp: MLP-aware fetch's distance predictor, trained with every retired instruction (null: none); a load served
  // from `longLatency` or beyond counts as long-latency for it.
  RetireUnit(const Config& config, std::span<ThreadContext> threads, CoreQueues& queues, ILoadStorePort& loadStore,
             std::vector<CoreEvent>& events, MlpPredictor* mlp = nullptr, MemLevel longLatency = MemLevel::Dram);

  // Retires from one thread; true if anything retired.
  bool tick(Cycle now);
  // Its turn-taking (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io);

 private:
  // Whether thread t's oldest instruction can retire now (inline: asked for each thread every cycle).
  bool canRetire(std::uint32_t t, Cycle now) const {
    const ThreadContext& th = threads_[t];
    if (th.state != ThreadState::Running || th.robTail == th.cursor->retireSeq()) return false;
    if (th.stats.instructions >= th.retireLimit) return false;
    const Uop& head = th.rob[th.cursor->retireSeq().value & th.robMask];
    return head.issued && head.doneAt <= now;
  }
  // The thread the configured policy serves (threadCount_ if none can retire).
  std::uint32_t chooseByPolicy(Cycle now);

  const std::uint32_t threadCount_;
  const std::uint32_t retireWidth_;
  std::span<ThreadContext> threads_;
  CoreQueues& queues_;
  ILoadStorePort& loadStore_;
  std::vector<CoreEvent>& events_;
  MlpPredictor* const mlp_;
  const MemLevel longLatency_;
  std::unique_ptr<IThreadChoice> policy_;
  const bool policyNeedsCounters_;
  // round_robin is evaluated in place, lazily (the first thread in turn that can proceed), like the Pentium 4's
  // alternation: a switch on a const instead of filling every candidate and a virtual call each cycle.
  const bool roundRobin_;
  std::uint32_t lastServed_ = 0;
  std::vector<ThreadCandidate> candidates_;
  std::vector<std::uint32_t> order_;
  std::uint32_t retiredLast_;  // the thread whose retiredThisCycle is set (threadCount_: none)
};

}  // namespace smtlab
