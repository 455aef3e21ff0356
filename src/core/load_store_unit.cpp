#include "smtlab/core/load_store_unit.hpp"

#include <algorithm>

namespace smtlab {

LoadStoreUnit::LoadStoreUnit(CoreId core, const Config& config, MemorySystem& memory,
                             std::span<ThreadContext> threads, CoreQueues& queues, LongLatencyAction action)
    : core_(core),
      loadAgu_(config.core.fu.load.latency),
      longLatency_(action, config.core.long_latency_miss),
      storeBuffer_(config.core.lsu.store_buffer),
      tracking_(storeBuffer_),
      memory_(memory),
      threads_(threads),
      queues_(queues),
      stores_(core, config.core.threads, config.core.sq.entries, config.core.lsu.stores_per_cycle, memory, threads,
              queues[QueueKind::Sq]) {
  pendingFlushes_.reserve(static_cast<std::size_t>(config.core.issue_width) * kMaxThreads);
}

Cycle LoadStoreUnit::executeLoad(std::uint32_t t, Uop& u, Cycle now) {
  ThreadContext& th = threads_[t];
  Cycle dataReady = now;
  MemLevel level = MemLevel::L1;
  for (const MemRef& ld : u.instr->loads) {
    if (!ld.valid()) continue;
    const MemResult r = memory_.load(core_, th.asid, ld.addr, ld.size, now + loadAgu_);
    dataReady = std::max(dataReady, r.ready);
    level = std::max(level, r.level);
  }
  u.level = level;
  if (level != MemLevel::L1) {
    // Remember the miss for MISSCOUNT; drop the ones that have returned.
    std::erase_if(th.missDone, [&](Cycle c) { return c <= now; });
    th.missDone.push_back(dataReady);
  }
  longLatency_.onLoad(th, t, u.seq, level, dataReady, pendingFlushes_);
  return dataReady;
}

void LoadStoreUnit::retireMemory(std::uint32_t t, const Uop& u, Cycle now) {
  if (u.hasStore && storeBuffer_) {
    stores_.retire(t, u.seq);  // keeps its SQ entry until it has written the L1D (drainStores)
  } else if (u.hasStore) {
    if (tracking_) stores_.retireWritten(t, u.seq);  // written now: no longer in the queue
    const ThreadContext& th = threads_[t];
    for (const MemRef& st : u.instr->stores) {
      if (st.valid()) memory_.store(core_, th.asid, st.addr, st.size, now);
    }
    queues_[QueueKind::Sq].release(t);
  }
  if (u.hasLoad) queues_[QueueKind::Lq].release(t);
}

}  // namespace smtlab
