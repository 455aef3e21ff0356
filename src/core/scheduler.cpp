#include "smtlab/core/scheduler.hpp"

#include <algorithm>
#include <bit>
#include <utility>

namespace smtlab {

namespace {
bool olderFirst(const WaitEntry& a, const WaitEntry& b) { return a.age < b.age; }
}  // namespace

Scheduler::Scheduler(const Config& config, std::span<ThreadContext> threads, CoreQueues& queues,
                     ILoadStorePort& loadStore, IBranchResolutionPort& branches)
    : threadCount_(config.core.threads),
      issueWidth_(config.core.issue_width),
      threads_(threads),
      queues_(queues),
      loadStore_(loadStore),
      branches_(branches),
      ports_(config.core),
      replay_(config),
      deferReplays_(config.sim.replay_deferred),
      wrongPathLoadLatency_(config.core.fu.load.latency + config.mem.l1d.latency) {
  const auto& c = config.core;
  const FuConfig* fu[kFuKinds] = {&c.fu.int_alu, &c.fu.int_mul, &c.fu.int_div, &c.fu.fp_add,
                                  &c.fu.fp_mul,  &c.fu.fp_div,  &c.fu.load,    &c.fu.store};
  for (int k = 0; k < kFuKinds; ++k) latency_[k] = fu[k]->latency;
  // Every renamed instruction of every thread can wait here at once (twice: the entries of squashed wrong-path
  // uops stay until their turn comes).
  const std::size_t window =
      static_cast<std::size_t>(std::bit_ceil(queues_[QueueKind::Rob].total())) * threadCount_ * 2;
  waiting_.reserve(window);
  ready_.reserve(window);
  parked_.resize(threadCount_);
  for (auto& p : parked_) p.reserve(window / threadCount_);
  // One list head per ROB slot of each thread, indexed as the ROB is (Core sizes it to the same power of two).
  const std::uint32_t robSlots = std::bit_ceil(queues_[QueueKind::Rob].total());
  robSlotMask_ = robSlots - 1;
  realProducerParked_.assign(threadCount_, std::vector<ParkedOnReal>(robSlots));
  woken_.reserve(window);
  wokenNow_.reserve(window);
  if (replay_.enabled()) {
    // A train is a replaying uop in the window: the pool never needs more than the window.
    trainPool_.reserve(window);
    phaseHead_.assign(replay_.period(), kNoTrain);
    phaseNext_.assign(replay_.period(), Cycle{0});
  }
}

bool Scheduler::issue(Cycle now) {
  // NetBurst replay: the attempts booked for cycles skipped over, then this cycle's, which take their port slots
  // before anything the scheduler sends now (replay.hpp).
  catchUpReplays(now);
  std::uint32_t issued = 0;
  if (trainCount_ != 0) replayDue(now, issued);
  replaysCountedTo_ = now + 1;
  // Booked attempts are progress only when they are wake-up points (the reference mode).
  const std::uint32_t booked = deferReplays_ ? issued : 0;
  // Move everything whose operands are ready by now into the age-ordered ready list.
  // Ages are unique (one per rename in the core), so the order in which due entries arrive does not matter.
  // A squashed wrong-path uop's entry is dropped here rather than sorted into the list only to be found squashed
  // (nothing squashes during issue, so it would be gone by its turn too): a mispredict squashes a ROB's worth.
  waiting_.popDue(now, [&](const WaitEntry& e) {
    if (e.uop.isWrongPath() && wrongPathGone(e)) return;
    ready_.insert(std::upper_bound(ready_.begin(), ready_.end(), e, olderFirst), e);
  });
  if (ready_.empty()) return issued > booked;

  // Issues what it can of e: false = gone (squashed, parked, held by memory ordering, replaying, or every uop issued
  // or waiting for data), true = stays ready (a uop lacks a port or an issue slot).
  auto tryIssue = [&](const WaitEntry& e) -> bool {
    if (e.uop.isWrongPath()) {
      const WrongPathIssue r = issueWrongPath(e, issued < issueWidth_, now);
      if (r == WrongPathIssue::Issued) ++issued;
      return r == WrongPathIssue::Waits;
    }
    ThreadContext& th = threads_[e.thread];
    Uop* u = th.cursor != nullptr ? &th.robSlot(e.uop.seq()) : nullptr;
    if (u == nullptr || !u->valid || u->age != e.age || u->issued) return false;  // squashed meanwhile
    if (issued >= issueWidth_) return true;
    if (u->loadLeft) {
      // Memory ordering, asked before the load uop issues (of a load-op too): a load that must wait for an older
      // store is asked again at the cycle the unit names, or when a store uop of its thread issues.
      const Cycle retry = loadStore_.loadMayIssueAt(e.thread, *u, now);
      if (retry == Cycle::never()) {
        parkLoad(e);
        return false;
      }
      if (retry > now) {
        pushWaiting({retry, e.age, e.thread, e.uop});
        return false;
      }
    }
    // Only under replay: sent on an L1-hit guess that was wrong (no uop of it has issued yet).
    if (u->readyAt > now) return replayFirstUop(*u, e, now, issued);
    return issueUops(*u, e, now, issued);
  };
  std::size_t keep = 0;
  const std::size_t n = ready_.size();
  for (std::size_t i = 0; i < n; ++i) {
    // By reference: nothing in tryIssue touches the ready list. A copy on the stack was read back in part right after
    // its 16-byte stores (e.uop), a store-forwarding stall of the CPU at every entry (5 % of issue()'s time).
    const WaitEntry& e = ready_[i];
    if (!tryIssue(e)) continue;
    if (keep != i) ready_[keep] = e;
    ++keep;
  }
  ready_.resize(keep);
  // Loads woken by a store uop's issue may go in this same cycle (the store's address is known from its issue on),
  // oldest first; a woken load's own issue never wakes more, but a store uop issued here might.
  while (!woken_.empty()) {
    std::sort(woken_.begin(), woken_.end(), olderFirst);
    wokenNow_.swap(woken_);
    woken_.clear();
    for (const WaitEntry& e : wokenNow_) {
      if (tryIssue(e)) ready_.insert(std::upper_bound(ready_.begin(), ready_.end(), e, olderFirst), e);
    }
    wokenNow_.clear();
  }
  return issued > booked;
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
    u.loadIssuedAt = now;
    ++issuedByUnit_[static_cast<int>(FuKind::Load)];
    u.loadDataAt = done(u, loadStore_.executeLoad(t, u, now));
  }
  if (u.staLeft && slot(UnitClass::StoreAddress)) {
    u.staLeft = false;
    ++issuedByUnit_[static_cast<int>(FuKind::Store)];  // store_nj is charged once per store, at its address uop
    done(u, now + latency_[static_cast<int>(FuKind::Store)]);
    // The store's address is known from now on: ordering checks, and the loads parked behind it are asked again.
    loadStore_.executeStore(t, u, now);
    wakeParked(t);
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
    const Cycle dataAt = done(u, now + latency_[static_cast<int>(FuKind::Store)]);
    // Its data is known: loads that would forward from it may go (asked again in this cycle).
    loadStore_.storeDataReady(t, u, dataAt);
    wakeParked(t);
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
  pushWaiting({wake, e.age, t, e.uop});
  return false;
}

void Scheduler::finish(Uop& u, std::uint32_t t) {
  ThreadContext& th = threads_[t];
  u.issued = true;
  u.doneAt = u.partsDoneAt;
  // Asked at every finish: the head alone first (almost always empty), the episode only behind it.
  if (realProducerParked_[t][u.seq.value & robSlotMask_].head != kNoParked) {
    wakeWrongPathConsumers(t, parkedOnReal(t, u.seq));
  }
  if (u.instr->isBranch()) {
    --th.unresolvedBranches;
    if (u.mispredicted) branches_.mispredictResolved(t, u, u.hasOp ? u.opDoneAt : u.doneAt);
  }
  // Replay: a load's dependents are scheduled for its L1-hit time (plus what follows the data, a load-op's op).
  u.consumersScheduledAt =
      u.hasLoad ? replay_.scheduleDependents(u.loadIssuedAt, u.loadDataAt, u.doneAt) : u.doneAt;
  wakeDependents(t, u, u.consumersScheduledAt);
}

void Scheduler::parkLoad(const WaitEntry& e) {
  auto& parked = parked_[e.thread];
  if (parked.size() == parked.capacity()) {
    // Squashed loads are dropped here rather than at the squash (the scheduler is not told of squashes).
    const ThreadContext& th = threads_[e.thread];
    std::erase_if(parked, [&](const WaitEntry& p) {
      if (th.cursor == nullptr) return true;
      const Uop& u = th.rob[p.uop.seq().value & th.robMask];
      return !u.valid || u.age != p.age || u.issued;
    });
  }
  parked.push_back(e);
}

void Scheduler::wakeParked(std::uint32_t t) {
  auto& parked = parked_[t];
  if (parked.empty()) return;
  woken_.insert(woken_.end(), parked.begin(), parked.end());
  parked.clear();
}

void Scheduler::wakeDependents(std::uint32_t t, Uop& producer, Cycle scheduled) {
  ThreadContext& th = threads_[t];
  for (std::uint32_t node = producer.depHead; node != kNoDep; node = th.depNext[node]) {
    Uop& c = th.rob[node / kMaxSrcRegs];
    c.readyAt = std::max(c.readyAt, producer.doneAt);
    c.scheduledAt = std::max(c.scheduledAt, scheduled);
    if (--c.pendingSrcs == 0) pushWaiting({c.scheduledAt, c.age, t, UopRef::real(c.seq)});
  }
  producer.depHead = kNoDep;
}

bool Scheduler::replayFirstUop(Uop& u, const WaitEntry& e, Cycle now, std::uint32_t& issued) {
  // The uop that goes first in program order (issueUops) is the one sent too early; it takes its port each time.
  FuKind fu = FuKind::None;
  UnitClass cls = UnitClass::StoreData;
  bool needsPort = true;
  if (u.loadLeft) {
    fu = FuKind::Load;
    cls = UnitClass::Load;
  } else if (u.staLeft) {
    fu = FuKind::Store;
    cls = UnitClass::StoreAddress;
  } else if (u.helpersLeft > 0) {
    cls = UnitClass::IntAlu;
  } else if (u.opLeft) {
    fu = u.fu;
    cls = u.opClass;
    needsPort = u.opNeedsPort;
  }
  if (needsPort && !ports_.take(cls, e.thread, now)) return true;
  const std::uint32_t port = needsPort ? ports_.lastPort() : kNoReplayPort;
  const auto unit = static_cast<std::uint8_t>(fu == FuKind::None ? kFuKinds : static_cast<int>(fu));
  ++issued;
  ++issuedByUnit_[unit];
  ++threads_[e.thread].stats.replayed;
  // Every attempt before the operands arrive fails; the loop brings the uop back each period, so they are all known
  // now: book the ones after this (replayDue counts each in its cycle) and send the uop again at the first
  // attempt that finds its data (there it competes as any uop does, and the memory-ordering check is asked again).
  const std::uint64_t attempts = replay_.failingAttempts(now, u.readyAt);
  const Cycle last = now + (attempts - 1) * replay_.period();
  if (attempts > 1) {
    // Its phase was stepped at the top of this cycle (replayDue), so its trains, this one too, are next due now +
    // period.
    const auto phase = static_cast<std::uint32_t>(now.value % replay_.period());
    std::uint32_t node = freeTrain_;
    if (node != kNoTrain) {
      freeTrain_ = trainPool_[node].link;
    } else {
      node = static_cast<std::uint32_t>(trainPool_.size());
      trainPool_.emplace_back();
    }
    trainPool_[node] = {last, e.age, e.uop.seq(), e.thread, port, cls, unit, phaseHead_[phase]};
    phaseHead_[phase] = node;
    phaseNext_[phase] = now + replay_.period();
    ++trainCount_;
  }
  pushWaiting({last + replay_.period(), e.age, e.thread, e.uop});
  return false;
}

bool Scheduler::trainSquashed(const ReplayTrain& r) const {
  const ThreadContext& th = threads_[r.thread];
  if (th.cursor == nullptr) return true;
  const Uop& u = th.rob[r.seq.value & th.robMask];
  return !u.valid || u.age != r.age || u.issued;  // squashed (its loop is emptied) or already sent again
}

template <class Step>
void Scheduler::stepTrains(std::uint32_t phase, Step step) {
  std::uint32_t* link = &phaseHead_[phase];
  while (*link != kNoTrain) {
    const std::uint32_t node = *link;
    ReplayTrain& r = trainPool_[node];
    if (!step(std::as_const(r))) {
      link = &r.link;
      continue;
    }
    // Done: unlinked from its phase, its node back to the free list.
    *link = r.link;
    r.link = freeTrain_;
    freeTrain_ = node;
    --trainCount_;
  }
}

void Scheduler::replayDue(Cycle now, std::uint32_t& issued) {
  const auto phase = static_cast<std::uint32_t>(now.value % replay_.period());
  // After catchUpReplays(now) every phase is next due in [now, now + period): this one exactly now, if it has trains.
  if (phaseHead_[phase] == kNoTrain) return;
  stepTrains(phase, [&](const ReplayTrain& r) {
    if (trainSquashed(r)) return true;
    if (r.port != kNoReplayPort) ports_.reserve(r.port, r.cls, r.thread, now);
    ++issued;
    ++issuedByUnit_[r.unit];
    ++threads_[r.thread].stats.replayed;
    return now >= r.last;
  });
  phaseNext_[phase] = now + replay_.period();
}

void Scheduler::countSkippedReplays(Cycle now) {
  const std::uint64_t period = replay_.period();
  for (std::uint32_t phase = 0; trainCount_ != 0 && phase < phaseHead_.size(); ++phase) {
    const Cycle first = phaseNext_[phase];
    if (phaseHead_[phase] == kNoTrain || first >= now) continue;
    stepTrains(phase, [&](const ReplayTrain& r) {
      if (trainSquashed(r)) return true;  // the same answer at every skipped attempt: nothing ran in between
      // Its attempts at first, first + period, ... up to its last or now - 1.
      const std::uint64_t attempts = (std::min(r.last, Cycle{now.value - 1}) - first) / period + 1;
      const Cycle lastTaken = first + (attempts - 1) * period;
      if (r.port != kNoReplayPort) ports_.reservePast(r.port, r.cls, r.thread, lastTaken, attempts);
      issuedByUnit_[r.unit] += attempts;
      threads_[r.thread].stats.replayed += attempts;
      return lastTaken >= r.last;
    });
    phaseNext_[phase] = first + (now - first + period - 1) / period * period;  // its first cycle from now on
  }
  replaysCountedTo_ = now;
}

bool Scheduler::wrongPathGone(const WaitEntry& e) const {
  const WrongPathState& wp = threads_[e.thread].wrongPath;
  const std::uint64_t index = e.uop.wrongPathIndex();
  if (index < wp.head || index >= wp.renamed) return true;  // squashed, and its slot not renamed again
  const WrongPathUop& u = wp.at(index);
  return u.age != e.age || u.issued;  // its slot holds a younger uop, or it issued (a stale entry)
}

Scheduler::WrongPathIssue Scheduler::issueWrongPath(const WaitEntry& e, bool slotFree, Cycle now) {
  ThreadContext& th = threads_[e.thread];
  WrongPathState& wp = th.wrongPath;
  if (wrongPathGone(e)) return WrongPathIssue::Squashed;
  WrongPathUop& u = wp.at(e.uop.wrongPathIndex());
  // Its operands: every producer named at rename that is still the same uop must have issued (its result time is
  // then known); one that has not parks this uop until it issues. A real producer whose slot holds another uop has
  // retired (its value is in the register file).
  Cycle ready = now;
  for (std::uint32_t k = 0; k < u.producers; ++k) {
    const UopRef p = u.producer[k];
    const bool wrong = p.isWrongPath();
    bool issued = true;
    Cycle doneAt{0};
    if (wrong) {
      const WrongPathUop& q = wp.at(p.wrongPathIndex());
      if (q.age != u.producerAge[k]) continue;
      issued = q.issued;
      doneAt = q.doneAt;
    } else {
      const Uop& q = th.robSlot(p.seq());
      if (!q.valid || q.age != u.producerAge[k]) continue;
      issued = q.issued;
      doneAt = q.doneAt;
    }
    if (!issued) {
      parkWrongPath(e, p);
      return WrongPathIssue::Parked;
    }
    ready = std::max(ready, doneAt);
  }
  if (ready > now) {
    pushWaiting({ready, e.age, e.thread, e.uop});
    return WrongPathIssue::Parked;
  }
  // One uop, through a port of its op's unit class (a nop or marker needs none, as on the right path).
  const FuKind fu = fuKindFor(u.op);
  if (!slotFree || (fu != FuKind::None && !ports_.take(unitClassFor(u.op), e.thread, now))) {
    return WrongPathIssue::Waits;
  }
  // It takes its slot and port; its result feeds only younger wrong-path uops (it never retires). A load's result
  // comes at the L1-hit time (it has no address: chosen, docs/model.md "Wrong path").
  ++issuedByUnit_[fu == FuKind::None ? kFuKinds : static_cast<int>(fu)];
  u.issued = true;
  u.doneAt = now + (fu == FuKind::None    ? 1
                    : fu == FuKind::Load ? wrongPathLoadLatency_
                                         : latency_[static_cast<int>(fu)]);
  --wp.unissued;
  queues_[QueueKind::Iq].release(e.thread);
  ++th.stats.wrongPathIssued;
  if (u.parkedConsumers != kNoParked) wakeWrongPathConsumers(e.thread, u.parkedConsumers);
  return WrongPathIssue::Issued;
}

void Scheduler::parkWrongPath(const WaitEntry& e, UopRef producer) {
  WrongPathState& wp = threads_[e.thread].wrongPath;
  std::uint64_t& head = producer.isWrongPath() ? wp.at(producer.wrongPathIndex()).parkedConsumers
                                               : parkedOnReal(e.thread, producer.seq());
  const std::uint64_t index = e.uop.wrongPathIndex();
  WrongPathUop& u = wp.at(index);
  u.parkedNext = head;
  u.parkedReadyAt = e.readyAt;
  head = index;
}

std::uint64_t& Scheduler::parkedOnReal(std::uint32_t t, SeqNum seq) {
  // The scheduler is not told of a squash; a list set before one is all of the squashed wrong path (a squash takes
  // every wrong-path uop of the thread, and the real instructions after the branch with them), so it is dropped at
  // the first look after it. Waking its uops would only find them squashed (issueWrongPath).
  ParkedOnReal& p = realProducerParked_[t][seq.value & robSlotMask_];
  const std::uint64_t episode = threads_[t].wrongPath.episode;
  if (p.episode != episode) {
    p.head = kNoParked;
    p.episode = episode;
  }
  return p.head;
}

void Scheduler::wakeWrongPathConsumers(std::uint32_t t, std::uint64_t& head) {
  // The parked wrong-path uops waiting for this producer are asked again in this cycle (they see its result time);
  // woken_ is put in age order before it is read, so the list's order does not matter.
  const WrongPathState& wp = threads_[t].wrongPath;
  for (std::uint64_t i = head; i != kNoParked;) {
    const WrongPathUop& u = wp.at(i);
    woken_.push_back({u.parkedReadyAt, u.age, t, UopRef::wrongPath(i)});
    i = u.parkedNext;
  }
  head = kNoParked;
}

void Scheduler::earliestWake(Cycle now, Cycle& next) const {
  auto consider = [&](Cycle c) {
    if (c > now && c < next) next = c;
  };
  if (!waiting_.empty()) consider(waiting_.earliest());
  // Booked replay attempts wake the core only in the reference mode (sim.replay_deferred = false).
  if (!deferReplays_ && trainCount_ != 0) {
    for (std::size_t phase = 0; phase < phaseHead_.size(); ++phase) {
      if (phaseHead_[phase] != kNoTrain) consider(phaseNext_[phase]);
    }
  }
  if (!ready_.empty()) {
    // Ready uops wait for a port (a busy divider, a full port) or an issue slot: try again next cycle.
    consider(now + 1);
  }
}

void Scheduler::visitState(StateIo& io) {
  io(ports_, trainPool_, freeTrain_, phaseHead_, phaseNext_, trainCount_, replaysCountedTo_, waiting_, ready_, parked_,
     woken_, wokenNow_, issuedByUnit_, realProducerParked_, robSlotMask_);
}

}  // namespace smtlab
