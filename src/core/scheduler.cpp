#include "smtlab/core/scheduler.hpp"

#include <algorithm>
#include <bit>

namespace smtlab {

namespace {
// The heap order of waiting_ (a function object, so that push_heap / pop_heap inline it).
struct LaterReady {
  bool operator()(const WaitEntry& a, const WaitEntry& b) const {
    return a.readyAt != b.readyAt ? a.readyAt > b.readyAt : a.age > b.age;
  }
};
}  // namespace

FuKind fuKindFor(OpClass op) {
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

Scheduler::Scheduler(const Config& config, std::span<ThreadContext> threads, CoreQueues& queues,
                     ILoadStorePort& loadStore, IBranchResolutionPort& branches)
    : threadCount_(config.core.threads),
      issueWidth_(config.core.issue_width),
      threads_(threads),
      queues_(queues),
      loadStore_(loadStore),
      branches_(branches),
      replay_(config) {
  const auto& c = config.core;
  const FuConfig* fu[kFuKinds] = {&c.fu.int_alu, &c.fu.int_mul, &c.fu.int_div, &c.fu.fp_add,
                                  &c.fu.fp_mul,  &c.fu.fp_div,  &c.fu.load,    &c.fu.store};
  for (int k = 0; k < kFuKinds; ++k) {
    fus_[k].count = fu[k]->count;
    fus_[k].latency = fu[k]->latency;
    fus_[k].interval = fu[k]->interval != 0 ? fu[k]->interval : (fu[k]->pipelined ? 1 : std::max(1u, fu[k]->latency));
    fus_[k].threadInterval = fu[k]->thread_interval;
    fus_[k].busyUntil.assign(fu[k]->count, Cycle{0});
  }
  // Every renamed instruction of every thread can wait here at once (twice: the entries of squashed wrong-path
  // uops stay until their turn comes).
  const std::size_t window =
      static_cast<std::size_t>(std::bit_ceil(queues_[QueueKind::Rob].total())) * threadCount_ * 2;
  waiting_.reserve(window);
  ready_.reserve(window);
  parked_.resize(threadCount_);
  for (auto& p : parked_) p.reserve(window / threadCount_);
  woken_.reserve(window);
  wokenNow_.reserve(window);
}

void Scheduler::pushWaiting(const WaitEntry& e) {
  waiting_.push_back(e);
  std::push_heap(waiting_.begin(), waiting_.end(), LaterReady{});
}

bool Scheduler::fuAvailable(FuKind fu, std::uint32_t thread, Cycle now) const {
  if (fu == FuKind::None) return true;
  const FuState& f = fus_[static_cast<int>(fu)];
  if (f.usedThisCycle >= f.count) return false;
  if (f.threadInterval > 0 && f.threadNext[thread] > now) return false;
  if (f.interval <= 1) return true;
  return std::any_of(f.busyUntil.begin(), f.busyUntil.end(), [&](Cycle c) { return c <= now; });
}

void Scheduler::fuTake(FuKind fu, std::uint32_t thread, Cycle now) {
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

bool Scheduler::issue(Cycle now) {
  if (now != fuCycle_) {
    for (auto& fu : fus_) fu.usedThisCycle = 0;
    fuCycle_ = now;
  }
  // Move everything whose operands are ready by now into the age-ordered ready list.
  while (!waiting_.empty() && waiting_.front().readyAt <= now) {
    std::pop_heap(waiting_.begin(), waiting_.end(), LaterReady{});
    const WaitEntry e = waiting_.back();
    waiting_.pop_back();
    ready_.insert(std::upper_bound(ready_.begin(), ready_.end(), e,
                                   [](const WaitEntry& a, const WaitEntry& b) { return a.age < b.age; }),
                  e);
  }
  if (ready_.empty()) return false;

  std::uint32_t issued = 0;
  // Issues e if it can: 0 = gone (squashed, parked, held by memory ordering, or replaying), 1 = issued, 2 = stays
  // ready.
  auto tryIssue = [&](const WaitEntry& e) -> int {
    if ((e.seq & kWrongPathTag) != 0) {
      const WrongPathIssue r = issueWrongPath(e, issued < issueWidth_, now);
      if (r == WrongPathIssue::Issued) {
        ++issued;
        return 1;
      }
      return r == WrongPathIssue::Waits ? 2 : 0;
    }
    ThreadContext& th = threads_[e.thread];
    Uop* u = th.cursor != nullptr ? &th.robSlot(e.seq) : nullptr;
    if (u == nullptr || !u->valid || u->age != e.age || u->issued) return 0;  // squashed meanwhile
    if (u->hasLoad && issued < issueWidth_) {
      // Memory ordering: a load that must wait for an older store is asked again at the cycle the unit names, or
      // when a store of its thread issues.
      const Cycle retry = loadStore_.loadMayIssueAt(e.thread, *u, now);
      if (retry == Cycle::never()) {
        parkLoad(e);
        return 0;
      }
      if (retry > now) {
        pushWaiting({retry, e.age, e.thread, e.seq});
        return 0;
      }
    }
    if (issued < issueWidth_) {
      const bool needLoadPort = u->hasLoad && u->fu != FuKind::Load;
      const bool needStorePort = u->hasStore && u->fu != FuKind::Store;
      if (fuAvailable(u->fu, e.thread, now) && (!needLoadPort || fuAvailable(FuKind::Load, e.thread, now)) &&
          (!needStorePort || fuAvailable(FuKind::Store, e.thread, now))) {
        fuTake(u->fu, e.thread, now);
        if (needLoadPort) fuTake(FuKind::Load, e.thread, now);
        if (needStorePort) fuTake(FuKind::Store, e.thread, now);
        if (u->readyAt > now) {  // only under replay: sent on an L1-hit guess that was wrong
          replayOne(e, now);
          ++issued;
          return 1;
        }
        issueOne(*u, e.thread, now);
        ++issued;
        return 1;
      }
    }
    return 2;
  };
  std::size_t keep = 0;
  for (std::size_t i = 0; i < ready_.size(); ++i) {
    const WaitEntry e = ready_[i];
    if (tryIssue(e) == 2) ready_[keep++] = e;
  }
  ready_.resize(keep);
  // Loads woken by a store's issue may go in this same cycle (the store's address is known from its issue on), oldest
  // first; a woken load's own issue never wakes more, but a store issued here might.
  while (!woken_.empty()) {
    std::sort(woken_.begin(), woken_.end(), [](const WaitEntry& a, const WaitEntry& b) { return a.age < b.age; });
    wokenNow_.swap(woken_);
    woken_.clear();
    for (const WaitEntry& e : wokenNow_) {
      if (tryIssue(e) == 2) {
        ready_.insert(std::upper_bound(ready_.begin(), ready_.end(), e,
                                       [](const WaitEntry& a, const WaitEntry& b) { return a.age < b.age; }),
                      e);
      }
    }
    wokenNow_.clear();
  }
  return issued > 0;
}

void Scheduler::issueOne(Uop& u, std::uint32_t t, Cycle now) {
  ThreadContext& th = threads_[t];
  u.issued = true;
  ++issuedByUnit_[static_cast<int>(u.fu)];
  if (u.hasLoad && u.fu != FuKind::Load) ++issuedByUnit_[static_cast<int>(FuKind::Load)];
  if (u.hasStore && u.fu != FuKind::Store) ++issuedByUnit_[static_cast<int>(FuKind::Store)];
  queues_[QueueKind::Iq].release(t);

  Cycle done = now;
  if (u.hasLoad) done = loadStore_.executeLoad(t, u, now);
  const Cycle dataReady = done;
  if (u.fu != FuKind::Load) done = done + (u.fu == FuKind::None ? 1 : fus_[static_cast<int>(u.fu)].latency);
  if (done <= now) done = now + 1;
  u.doneAt = done;

  if (u.hasStore) {
    loadStore_.executeStore(t, u, now);  // its address resolves: ordering checks
    // Loads that waited for a store address of this thread are asked again in this cycle (Scheduler::issue).
    woken_.insert(woken_.end(), parked_[t].begin(), parked_[t].end());
    parked_[t].clear();
  }
  if (u.instr->isBranch()) {
    --th.unresolvedBranches;
    if (u.mispredicted) branches_.mispredictResolved(t, u, done);
  }
  u.consumersScheduledAt = u.hasLoad ? replay_.scheduleDependents(now, dataReady, done) : done;
  wakeDependents(t, u, u.consumersScheduledAt);
}

void Scheduler::parkLoad(const WaitEntry& e) {
  auto& parked = parked_[e.thread];
  if (parked.size() == parked.capacity()) {
    // Squashed loads are dropped here rather than at the squash (the scheduler is not told of squashes).
    const ThreadContext& th = threads_[e.thread];
    std::erase_if(parked, [&](const WaitEntry& p) {
      if (th.cursor == nullptr) return true;
      const Uop& u = th.rob[p.seq & th.robMask];
      return !u.valid || u.age != p.age || u.issued;
    });
  }
  parked.push_back(e);
}

void Scheduler::wakeDependents(std::uint32_t t, Uop& producer, Cycle scheduled) {
  ThreadContext& th = threads_[t];
  for (std::uint32_t node = producer.depHead; node != kNoDep; node = th.depNext[node]) {
    Uop& c = th.rob[node / kMaxSrcRegs];
    c.readyAt = std::max(c.readyAt, producer.doneAt);
    c.scheduledAt = std::max(c.scheduledAt, scheduled);
    if (--c.pendingSrcs == 0) pushWaiting({c.scheduledAt, c.age, t, c.seq});
  }
  producer.depHead = kNoDep;
}

void Scheduler::replayOne(const WaitEntry& e, Cycle now) {
  ThreadContext& th = threads_[e.thread];
  Uop& u = th.robSlot(e.seq);
  ++issuedByUnit_[static_cast<int>(u.fu)];
  ++th.stats.replayed;
  pushWaiting({replay_.nextAttempt(now), e.age, e.thread, e.seq});
}

Scheduler::WrongPathIssue Scheduler::issueWrongPath(const WaitEntry& e, bool slotFree, Cycle now) {
  ThreadContext& th = threads_[e.thread];
  WrongPathState& wp = th.wrongPath;
  const std::uint64_t index = e.seq & ~kWrongPathTag;
  if (index < wp.head || index >= wp.renamed) return WrongPathIssue::Squashed;
  WrongPathUop& u = wp.at(index);
  if (u.age != e.age || u.issued) return WrongPathIssue::Squashed;
  const FuKind fu = fuKindFor(u.op);
  if (!slotFree || !fuAvailable(fu, e.thread, now)) return WrongPathIssue::Waits;
  // It takes its slot and unit; its result is never used (no dependents, never retires).
  fuTake(fu, e.thread, now);
  ++issuedByUnit_[static_cast<int>(fu)];
  u.issued = true;
  --wp.unissued;
  queues_[QueueKind::Iq].release(e.thread);
  ++th.stats.wrongPathIssued;
  return WrongPathIssue::Issued;
}

void Scheduler::earliestWake(Cycle now, Cycle& next) const {
  auto consider = [&](Cycle c) {
    if (c > now && c < next) next = c;
  };
  if (!waiting_.empty()) consider(waiting_.front().readyAt);
  if (!ready_.empty()) {
    // Ready instructions wait for a busy unit (a divider) or their thread's turn on a microcoded unit.
    for (const auto& fu : fus_) {
      if (fu.interval > 1) {
        for (Cycle c : fu.busyUntil) consider(c);
      }
      if (fu.threadInterval > 0) {
        for (std::uint32_t t = 0; t < threadCount_; ++t) consider(fu.threadNext[t]);
      }
    }
    consider(now + 1);
  }
}

}  // namespace smtlab
