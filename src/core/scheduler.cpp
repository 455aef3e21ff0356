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

Scheduler::Scheduler(const Config& config, std::span<ThreadContext> threads, CoreQueues& queues,
                     ILoadStorePort& loadStore, IBranchResolutionPort& branches)
    : threadCount_(config.core.threads),
      issueWidth_(config.core.issue_width),
      threads_(threads),
      queues_(queues),
      loadStore_(loadStore),
      branches_(branches),
      ports_(config.core) {
  const auto& c = config.core;
  const FuConfig* fu[kFuKinds] = {&c.fu.int_alu, &c.fu.int_mul, &c.fu.int_div, &c.fu.fp_add,
                                  &c.fu.fp_mul,  &c.fu.fp_div,  &c.fu.load,    &c.fu.store};
  for (int k = 0; k < kFuKinds; ++k) latency_[k] = fu[k]->latency;
  // Every renamed instruction of every thread can wait here at once.
  const std::size_t window = static_cast<std::size_t>(std::bit_ceil(queues_[QueueKind::Rob].total())) * threadCount_;
  waiting_.reserve(window);
  ready_.reserve(window);
}

void Scheduler::pushWaiting(const WaitEntry& e) {
  waiting_.push_back(e);
  std::push_heap(waiting_.begin(), waiting_.end(), LaterReady{});
}

bool Scheduler::issue(Cycle now) {
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
  std::size_t keep = 0;
  const std::size_t n = ready_.size();
  for (std::size_t i = 0; i < n; ++i) {
    const WaitEntry e = ready_[i];
    ThreadContext& th = threads_[e.thread];
    Uop* u = th.cursor != nullptr ? &th.robSlot(e.seq) : nullptr;
    if (u == nullptr || !u->valid || u->age != e.age || u->issued) continue;  // squashed meanwhile
    if (issued >= issueWidth_ || issueUops(*u, e, now, issued)) ready_[keep++] = e;
  }
  ready_.resize(keep);
  return issued > 0;
}

void Scheduler::releaseIq(Uop& u, std::uint32_t t) {
  // An instruction holds at most its thread's share of entries (rename_allocate.cpp); later uops hold none.
  if (u.iqHeld == 0) return;
  --u.iqHeld;
  queues_[QueueKind::Iq].release(t);
}

bool Scheduler::issueUops(Uop& u, const WaitEntry& e, Cycle now, std::uint32_t& issued) {
  const std::uint32_t t = e.thread;
  auto slot = [&](UnitClass cls) { return issued < issueWidth_ && ports_.take(cls, t, now); };
  auto done = [&](Uop& x, Cycle c) {
    releaseIq(x, t);
    ++issued;
    if (c <= now) c = now + 1;
    if (c > x.partsDoneAt) x.partsDoneAt = c;
    return c;
  };
  // Uops whose inputs are ready go in program order: load, store address, microcode helpers, op, store data.
  if (u.loadLeft && slot(UnitClass::Load)) {
    u.loadLeft = false;
    ++issuedByUnit_[static_cast<int>(FuKind::Load)];
    u.loadDataAt = done(u, loadStore_.executeLoad(t, u, now));
  }
  if (u.staLeft && slot(UnitClass::StoreAddress)) {
    u.staLeft = false;
    ++issuedByUnit_[static_cast<int>(FuKind::Store)];  // store_nj is charged once per store, at its address uop
    done(u, now + latency_[static_cast<int>(FuKind::Store)]);
  }
  // A microcode sequence's helper uops run on the integer ALUs; their energy is part of the op's (not counted).
  while (u.helpersLeft > 0 && slot(UnitClass::IntAlu)) {
    --u.helpersLeft;
    ++issuedByUnit_[kFuKinds];
    done(u, now + latency_[static_cast<int>(FuKind::IntAlu)]);
  }
  const bool loadReady = !u.loadLeft && u.loadDataAt <= now;
  if (u.opLeft && loadReady && (u.opNeedsPort ? slot(u.opClass) : issued < issueWidth_)) {
    u.opLeft = false;
    ++issuedByUnit_[static_cast<int>(u.fu)];
    u.opDoneAt = done(u, now + (u.fu == FuKind::None ? 1 : latency_[static_cast<int>(u.fu)]));
  }
  const bool valueReady = u.hasOp ? !u.opLeft && u.opDoneAt <= now : loadReady;
  if (u.stdLeft && valueReady && slot(UnitClass::StoreData)) {
    u.stdLeft = false;
    ++issuedByUnit_[kFuKinds];  // the data half of a store: no unit energy of its own
    done(u, now + latency_[static_cast<int>(FuKind::Store)]);
  }

  if (!u.loadLeft && !u.staLeft && u.helpersLeft == 0 && !u.opLeft && !u.stdLeft) {
    finish(u, t);
    return false;
  }
  // Still here: a uop that could go now lacks a port or issue slot (stay ready), or every one left waits for data.
  const bool canGoNow = u.loadLeft || u.staLeft || u.helpersLeft > 0 || (u.opLeft && loadReady) ||
                        (u.stdLeft && valueReady);
  if (canGoNow) return true;
  Cycle wake = Cycle::never();
  if (u.opLeft) wake = u.loadDataAt;                           // the op waits for the load's data
  if (u.stdLeft && !u.opLeft) wake = std::min(wake, u.hasOp ? u.opDoneAt : u.loadDataAt);
  pushWaiting({wake, e.age, t, e.seq});
  return false;
}

void Scheduler::finish(Uop& u, std::uint32_t t) {
  ThreadContext& th = threads_[t];
  u.issued = true;
  u.doneAt = u.partsDoneAt;
  if (u.instr->isBranch()) {
    --th.unresolvedBranches;
    if (u.mispredicted) branches_.mispredictResolved(t, u, u.hasOp ? u.opDoneAt : u.doneAt);
  }
  wakeDependents(t, u);
}

void Scheduler::wakeDependents(std::uint32_t t, Uop& producer) {
  ThreadContext& th = threads_[t];
  for (std::uint32_t node = producer.depHead; node != kNoDep; node = th.depNext[node]) {
    Uop& c = th.rob[node / kMaxSrcRegs];
    c.readyAt = std::max(c.readyAt, producer.doneAt);
    if (--c.pendingSrcs == 0) pushWaiting({c.readyAt, c.age, t, c.seq});
  }
  producer.depHead = kNoDep;
}

void Scheduler::earliestWake(Cycle now, Cycle& next) const {
  auto consider = [&](Cycle c) {
    if (c > now && c < next) next = c;
  };
  if (!waiting_.empty()) consider(waiting_.front().readyAt);
  if (!ready_.empty()) {
    // Ready uops wait for a port (a busy divider, a full port) or an issue slot: try again next cycle.
    consider(now + 1);
  }
}

}  // namespace smtlab
