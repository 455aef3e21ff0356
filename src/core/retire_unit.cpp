#include "smtlab/core/retire_unit.hpp"

namespace smtlab {

RetireUnit::RetireUnit(const Config& config, std::span<ThreadContext> threads, CoreQueues& queues,
                       ILoadStorePort& loadStore, std::vector<CoreEvent>& events, MlpPredictor* mlp,
                       MemLevel longLatency)
    : threadCount_(config.core.threads),
      retireWidth_(config.core.retire_width),
      threads_(threads),
      queues_(queues),
      loadStore_(loadStore),
      events_(events),
      mlp_(mlp),
      longLatency_(longLatency),
      policy_(makeThreadChoice(config.core.retire_policy)),
      policyNeedsCounters_(policy_->needsCounters()),
      roundRobin_(config.core.retire_policy == ThreadChoice::RoundRobin),
      candidates_(config.core.threads),
      order_(config.core.threads),
      retiredLast_(config.core.threads) {}

std::uint32_t RetireUnit::chooseByPolicy(Cycle now) {
  const SharedCapacity& uopq = queues_[QueueKind::UopQueue];
  const SharedCapacity& iq = queues_[QueueKind::Iq];
  bool any = false;
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    ThreadCandidate& c = candidates_[t];
    c.eligible = canRetire(t, now);
    if (!c.eligible) continue;
    any = true;
    if (!policyNeedsCounters_) continue;
    const ThreadContext& th = threads_[t];
    c.frontEnd = th.pipeCount() + uopq.used(t) + iq.used(t);
    c.oldest = th.rob[th.cursor->retireSeq().value & th.robMask].age;
  }
  if (!any) return threadCount_;
  policy_->choose(candidates_.data(), threadCount_, now, order_.data());
  return order_[0];
}

bool RetireUnit::tick(Cycle now) {
  // Only the thread served last cycle can have the flag set.
  if (retiredLast_ != threadCount_) {
    threads_[retiredLast_].retiredThisCycle = false;
    retiredLast_ = threadCount_;
  }
  SharedCapacity& rob = queues_[QueueKind::Rob];
  std::uint32_t t = threadCount_;
  if (roundRobin_) {
    for (std::uint32_t i = 1; i <= threadCount_ && t == threadCount_; ++i) {
      const std::uint32_t u = (lastServed_ + i) % threadCount_;
      if (canRetire(u, now)) t = u;
    }
    if (t == threadCount_) return false;
    lastServed_ = t;
  } else {
    t = chooseByPolicy(now);
    if (t == threadCount_) return false;
  }
  {
    ThreadContext& th = threads_[t];
    std::uint32_t retired = 0;
    // retire_width counts uops (uopwindow; Pentium 4: 3 uops per clock). Retirement is uop-granular: an instruction
    // whose ROB entries exceed what is left of the cycle retires some of its uops now (their entries are freed) and
    // the rest at its thread's next turn; it counts as retired, and its effects happen, when its last uop retires.
    std::uint32_t budget = retireWidth_;
    while (budget > 0 && th.robTail != th.cursor->retireSeq() && th.stats.instructions < th.retireLimit) {
      Uop& u = th.robSlot(th.cursor->retireSeq());
      if (!u.issued || u.doneAt > now) break;
      if (u.robHeld > budget) {
        rob.release(t, budget);
        u.robHeld = static_cast<std::uint8_t>(u.robHeld - budget);
        budget = 0;
        break;
      }
      budget -= u.robHeld;
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
      rob.release(t, u.robHeld);
      u.robHeld = 0;
      // Physical registers: retiring a writer frees its architectural register's previous mapping, one entry per
      // destination (register_file.hpp says why that count is the one to keep).
      if (u.intRegs != 0 || u.fpRegs != 0) queues_.registers.release(t, RegNeed{u.intRegs, u.fpRegs});
      th.retiredStackDelta = u.stackDelta;
      u.valid = false;
      if (mlp_ != nullptr) mlp_->retired(t, u.seq, in.pc, u.hasLoad && u.level >= longLatency_);
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
    th.retiredThisCycle = true;  // an eligible thread retires at least its done head
    retiredLast_ = t;
  }
  return true;
}

void RetireUnit::visitState(StateIo& io) {
  io(lastServed_, retiredLast_);
  policy_->visitState(io);
}

}  // namespace smtlab
