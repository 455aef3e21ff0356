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
#include "smtlab/core/stage_ports.hpp"
#include "smtlab/core/thread_context.hpp"

namespace smtlab {

class RetireUnit {
 public:
  RetireUnit(const Config& config, std::span<ThreadContext> threads, CoreQueues& queues, ILoadStorePort& loadStore,
             std::vector<CoreEvent>& events);

  // Retires from one thread; true if anything retired.
  bool tick(Cycle now);

 private:
  const std::uint32_t threadCount_;
  const std::uint32_t retireWidth_;
  std::span<ThreadContext> threads_;
  CoreQueues& queues_;
  ILoadStorePort& loadStore_;
  std::vector<CoreEvent>& events_;
  std::unique_ptr<IThreadChoice> policy_;
  std::vector<ThreadCandidate> candidates_;
  std::vector<std::uint32_t> order_;
};

}  // namespace smtlab
