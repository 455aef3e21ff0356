// Fetch: the fetch policy orders the threads that can fetch; the first gets up to fetch_width instructions (and with
// fetch_threads > 1 the next ones get what is left). Branches are predicted here; a mispredicted one stops its
// thread's fetch until it resolves (trace-driven: no wrong path is simulated), so the sibling gets the front end.
#include <algorithm>

#include "smtlab/core/core.hpp"

namespace smtlab {

bool Core::fetchStage(Cycle now) {
  const SharedCapacity& uopq = queues_[static_cast<int>(QueueKind::UopQueue)];
  const SharedCapacity& iq = queues_[static_cast<int>(QueueKind::Iq)];
  const bool wantMisses = fetchPolicy_->needsDataMisses();
  bool anyEligible = false;
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    ThreadContext& th = threads_[t];
    FetchCandidate& c = candidates_[t];
    c.eligible = false;
    if (th.state != ThreadState::Running) continue;
    if (th.waitingBranch || th.fetchResumeAt > now) continue;
    if (th.gatedUntil > now) continue;  // counted in fetchGatedCycles by account(), skipped cycles included
    if (th.pipeCount() >= pipeCapacity_) continue;
    if (th.cursor->peek() == nullptr) continue;
    c.eligible = true;
    anyEligible = true;
    c.frontEnd = th.pipeCount() + uopq.used(t) + iq.used(t);
    c.branches = th.unresolvedBranches;
    if (wantMisses) {
      std::erase_if(th.missDone, [&](Cycle d) { return d <= now; });
      c.dataMisses = static_cast<std::uint32_t>(th.missDone.size());
    }
  }
  if (!anyEligible) return false;
  const std::uint32_t n = fetchPolicy_->choose(candidates_.data(), threadCount_, now, fetchOrder_.data());
  std::uint32_t budget = fetchWidth_;
  for (std::uint32_t i = 0; i < n && i < fetchThreads_ && budget > 0; ++i) {
    budget -= fetchThread(fetchOrder_[i], budget, now);
  }
  // A thread that could fetch either fetched or started an I-cache miss, and a sibling that could fetch but did not
  // get the slot may get it next cycle: either way the next cycle can differ, so it must not be skipped.
  return true;
}

std::uint32_t Core::fetchThread(std::uint32_t t, std::uint32_t budget, Cycle now) {
  ThreadContext& th = threads_[t];
  std::uint32_t got = 0;
  while (got < budget) {
    const Instr* in = th.cursor->peek();
    if (in == nullptr) break;
    const Addr line = in->pc >> lineShift_;
    if (line != th.lastFetchLine) {
      const MemResult r = memory_.fetch(id_, ThreadId{t}, th.asid, in->pc, now);
      th.lastFetchLine = line;
      // An L1I hit is part of the front-end depth; anything slower holds this thread's fetch until the line arrives.
      if (r.ready > now + l1iLatency_) {
        th.fetchResumeAt = r.ready;
        th.fetchBlock = FetchBlock::ICache;
        th.stats.fetchIcacheStallCycles += r.ready - now;
        return got;
      }
    }
    if (th.pipeCount() >= pipeCapacity_) break;
    const std::uint64_t seq = th.cursor->fetchSeq();
    FrontEntry& fe = th.front[seq & th.frontMask];
    fe.availableAt = now + frontendDepth_;
    fe.mispredicted = false;
    th.cursor->advanceFetch();
    ++th.stats.fetched;
    ++got;
    if (in->isBranch()) {
      ++th.stats.branches;
      ++th.unresolvedBranches;
      const BranchOutcome outcome = predictor_.predictAndTrain(*in, th.asidTag, th.branch);
      if (outcome == BranchOutcome::Mispredict) {
        ++th.stats.mispredicts;
        fe.mispredicted = true;
        th.waitingBranch = true;
        th.waitingBranchSeq = seq;
        th.fetchBlock = FetchBlock::Mispredict;
        break;
      }
      if (outcome == BranchOutcome::BtbMiss) {
        ++th.stats.btbMisses;
        th.fetchResumeAt = now + btbMissPenalty_;
        th.fetchBlock = FetchBlock::BtbMiss;
        break;
      }
      if (in->taken && breakOnTaken_) break;
    }
    if (in->op == OpClass::Pause) {
      th.fetchResumeAt = now + pauseCycles_;
      th.fetchBlock = FetchBlock::Pause;
      break;
    }
  }
  return got;
}

}  // namespace smtlab
