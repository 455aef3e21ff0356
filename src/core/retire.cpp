// Retire: in program order, up to retire_width per cycle from one thread; threads alternate every cycle and a thread
// with nothing to retire yields its turn (Pentium 4). Stores write the cache here; marks are reported.
#include <algorithm>

#include "smtlab/core/core.hpp"

namespace smtlab {

bool Core::retireStage(Cycle now) {
  for (auto& th : threads_) th.retiredThisCycle = false;
  SharedCapacity& rob = queues_[static_cast<int>(QueueKind::Rob)];
  SharedCapacity& lq = queues_[static_cast<int>(QueueKind::Lq)];
  SharedCapacity& sq = queues_[static_cast<int>(QueueKind::Sq)];
  for (std::uint32_t i = 1; i <= threadCount_; ++i) {
    const std::uint32_t t = (retireTurn_ + i) % threadCount_;
    ThreadContext& th = threads_[t];
    if (th.state != ThreadState::Running) continue;
    std::uint32_t retired = 0;
    while (retired < retireWidth_ && th.robTail != th.cursor->retireSeq() && th.stats.instructions < th.retireLimit) {
      Uop& u = th.robSlot(th.cursor->retireSeq());
      if (!u.issued || u.doneAt > now) break;
      const Instr& in = *u.instr;
      if (u.hasStore) {
        for (const MemRef& st : in.stores) {
          if (st.valid()) memory_.store(id_, th.asid, st.addr, st.size, now);
        }
        sq.release(t);
        ++th.stats.stores;
      }
      if (u.hasLoad) {
        lq.release(t);
        ++th.stats.loads;
        ++th.stats.loadLevel[static_cast<int>(u.level)];
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
      retireTurn_ = t;
      lastRetire_ = now;
      return true;
    }
  }
  return false;
}

}  // namespace smtlab
