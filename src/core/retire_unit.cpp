#include "smtlab/core/retire_unit.hpp"

namespace smtlab {

RetireUnit::RetireUnit(const Config& config, std::span<ThreadContext> threads, CoreQueues& queues,
                       ILoadStorePort& loadStore, std::vector<CoreEvent>& events)
    : threadCount_(config.core.threads),
      retireWidth_(config.core.retire_width),
      threads_(threads),
      queues_(queues),
      loadStore_(loadStore),
      events_(events) {}

bool RetireUnit::tick(Cycle now) {
  for (auto& th : threads_) th.retiredThisCycle = false;
  SharedCapacity& rob = queues_[QueueKind::Rob];
  for (std::uint32_t i = 1; i <= threadCount_; ++i) {
    const std::uint32_t t = (turn_ + i) % threadCount_;
    ThreadContext& th = threads_[t];
    if (th.state != ThreadState::Running) continue;
    std::uint32_t retired = 0;
    while (retired < retireWidth_ && th.robTail != th.cursor->retireSeq() && th.stats.instructions < th.retireLimit) {
      Uop& u = th.robSlot(th.cursor->retireSeq());
      if (!u.issued || u.doneAt > now) break;
      const Instr& in = *u.instr;
      if (u.hasLoad || u.hasStore) loadStore_.retireMemory(t, u, now);
      if (u.hasStore) ++th.stats.stores;
      if (u.hasLoad) {
        ++th.stats.loads;
        ++th.stats.loadLevel[static_cast<int>(u.level)];
      }
      if (in.isBranch()) {
        ++th.stats.branches;
        th.stats.mispredicts += u.mispredicted;
        th.stats.btbMisses += u.btbMiss;
      }
      rob.release(t);
      u.valid = false;
      th.cursor->retireOne();
      ++th.stats.instructions;
      ++retired;
      if (in.op == OpClass::Mark) {
        ++th.stats.marks;
        events_.push_back({CoreEventKind::Mark, t, in.markId, now});
        break;  // the caller sees the thread stopped right after its mark
      }
    }
    if (th.stats.instructions >= th.retireLimit && retired > 0) {
      events_.push_back({CoreEventKind::RetireLimit, t, 0, now});
    }
    if (retired > 0) {
      th.retiredThisCycle = true;
      turn_ = t;
      return true;
    }
  }
  return false;
}

}  // namespace smtlab
