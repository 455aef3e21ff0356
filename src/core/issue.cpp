// Schedule and execute: instructions whose operands are ready issue oldest first, up to issue_width per cycle and
// the count of each functional unit (an unpipelined unit stays busy for its latency). Loads and stores go to the
// memory system when they issue; a mispredicted branch resolves here and tells fetch when to resume.
#include <algorithm>

#include "smtlab/core/core.hpp"

namespace smtlab {

namespace {
bool laterReady(const auto& a, const auto& b) {
  return a.readyAt != b.readyAt ? a.readyAt > b.readyAt : a.age > b.age;
}
FuKind fuFor(OpClass op) {
  switch (op) {
    case OpClass::IMul:
      return FuKind::IntMul;
    case OpClass::IDiv:
      return FuKind::IntDiv;
    case OpClass::FAdd:
      return FuKind::FpAdd;
    case OpClass::FMul:
      return FuKind::FpMul;
    case OpClass::FDiv:
      return FuKind::FpDiv;
    case OpClass::Load:
      return FuKind::Load;
    case OpClass::Store:
      return FuKind::Store;
    case OpClass::Nop:
    case OpClass::Mark:
    case OpClass::Pause:
      return FuKind::None;
    default:
      return FuKind::IntAlu;
  }
}
}  // namespace

FuKind fuKindFor(OpClass op) { return fuFor(op); }

void Core::pushWaiting(const WaitEntry& e) {
  waiting_.push_back(e);
  std::push_heap(waiting_.begin(), waiting_.end(), [](const WaitEntry& a, const WaitEntry& b) { return laterReady(a, b); });
}

bool Core::fuAvailable(FuKind fu, std::uint32_t thread, Cycle now) const {
  if (fu == FuKind::None) return true;
  const FuState& f = fus_[static_cast<int>(fu)];
  if (f.usedThisCycle >= f.count) return false;
  if (f.threadInterval > 0 && f.threadNext[thread] > now) return false;
  if (f.interval <= 1) return true;
  return std::any_of(f.busyUntil.begin(), f.busyUntil.end(), [&](Cycle c) { return c <= now; });
}

void Core::fuTake(FuKind fu, std::uint32_t thread, Cycle now) {
  if (fu == FuKind::None) return;
  FuState& f = fus_[static_cast<int>(fu)];
  ++f.usedThisCycle;
  if (f.threadInterval > 0) f.threadNext[thread] = now + f.threadInterval;
  if (f.interval > 1) {
    for (Cycle& c : f.busyUntil) {
      if (c <= now) {
        c = now + f.interval;
        break;
      }
    }
  }
}

bool Core::issueStage(Cycle now) {
  // Move everything whose operands are ready by now into the age-ordered ready list.
  auto later = [](const WaitEntry& a, const WaitEntry& b) { return laterReady(a, b); };
  while (!waiting_.empty() && waiting_.front().readyAt <= now) {
    std::pop_heap(waiting_.begin(), waiting_.end(), later);
    const WaitEntry e = waiting_.back();
    waiting_.pop_back();
    ready_.insert(std::upper_bound(ready_.begin(), ready_.end(), e,
                                   [](const WaitEntry& a, const WaitEntry& b) { return a.age < b.age; }),
                  e);
  }
  if (ready_.empty()) return false;

  std::uint32_t issued = 0;
  std::size_t keep = 0;
  for (std::size_t i = 0; i < ready_.size(); ++i) {
    const WaitEntry e = ready_[i];
    ThreadContext& th = threads_[e.thread];
    Uop* u = th.cursor != nullptr ? &th.robSlot(e.seq) : nullptr;
    if (u == nullptr || !u->valid || u->age != e.age || u->issued) continue;  // squashed meanwhile
    if (issued < issueWidth_) {
      const bool needLoadPort = u->hasLoad && u->fu != FuKind::Load;
      const bool needStorePort = u->hasStore && u->fu != FuKind::Store;
      if (fuAvailable(u->fu, e.thread, now) && (!needLoadPort || fuAvailable(FuKind::Load, e.thread, now)) &&
          (!needStorePort || fuAvailable(FuKind::Store, e.thread, now))) {
        fuTake(u->fu, e.thread, now);
        if (needLoadPort) fuTake(FuKind::Load, e.thread, now);
        if (needStorePort) fuTake(FuKind::Store, e.thread, now);
        issueOne(*u, e.thread, now);
        ++issued;
        continue;
      }
    }
    ready_[keep++] = e;
  }
  ready_.resize(keep);

  for (const auto& [t, seq] : pendingFlushes_) {
    ThreadContext& th = threads_[t];
    if (th.cursor != nullptr && seq + 1 < th.cursor->fetchSeq() && seq >= th.cursor->retireSeq()) {
      ++th.stats.flushes;
      squashFrom(t, seq + 1);
    }
  }
  pendingFlushes_.clear();
  return issued > 0;
}

void Core::issueOne(Uop& u, std::uint32_t t, Cycle now) {
  ThreadContext& th = threads_[t];
  const Instr& in = *u.instr;
  u.issued = true;
  ++issuedByUnit_[static_cast<int>(u.fu)];
  if (u.hasLoad && u.fu != FuKind::Load) ++issuedByUnit_[static_cast<int>(FuKind::Load)];
  if (u.hasStore && u.fu != FuKind::Store) ++issuedByUnit_[static_cast<int>(FuKind::Store)];
  queues_[static_cast<int>(QueueKind::Iq)].release(t);

  Cycle done = now;
  if (u.hasLoad) {
    Cycle dataReady = now;
    MemLevel level = MemLevel::L1;
    for (const MemRef& ld : in.loads) {
      if (!ld.valid()) continue;
      const MemResult r = memory_.load(id_, th.asid, ld.addr, ld.size, now + loadAgu_);
      dataReady = std::max(dataReady, r.ready);
      level = std::max(level, r.level);
    }
    u.level = level;
    done = dataReady;
    if (level != MemLevel::L1) {
      // Remember the miss for MISSCOUNT; drop the ones that have returned.
      std::erase_if(th.missDone, [&](Cycle c) { return c <= now; });
      th.missDone.push_back(dataReady);
    }
    if (level == MemLevel::Dram && fetchPolicy_->gatesOnMemoryMiss()) {
      th.gatedUntil = std::max(th.gatedUntil, dataReady);
      if (fetchPolicy_->flushesOnMemoryMiss()) pendingFlushes_.emplace_back(t, u.seq);
    }
  }
  if (u.fu != FuKind::Load) done = done + (u.fu == FuKind::None ? 1 : fus_[static_cast<int>(u.fu)].latency);
  if (done <= now) done = now + 1;
  u.doneAt = done;

  if (in.isBranch()) {
    --th.unresolvedBranches;
    if (u.mispredicted && th.waitingBranch && th.waitingBranchSeq == u.seq) {
      th.waitingBranch = false;
      th.fetchBlock = FetchBlock::Mispredict;
      th.fetchResumeAt = done + mispredictPenalty_;
    }
  }
  wakeDependents(th, u);
}

void Core::wakeDependents(ThreadContext& th, Uop& producer) {
  for (std::uint32_t node = producer.depHead; node != kNoDep; node = th.depNext[node]) {
    Uop& c = th.rob[node / kMaxSrcRegs];
    c.readyAt = std::max(c.readyAt, producer.doneAt);
    if (--c.pendingSrcs == 0) {
      pushWaiting({c.readyAt, c.age, static_cast<std::uint32_t>(&th - threads_.data()), c.seq});
    }
  }
  producer.depHead = kNoDep;
}

}  // namespace smtlab
