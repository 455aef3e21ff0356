// Core construction, the cycle's order of stages, thread attach/detach, squashing, and the bookkeeping that lets the
// machine skip idle cycles without changing any statistic.
#include "smtlab/core/core.hpp"

#include <algorithm>
#include <bit>
#include <tuple>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {

namespace {
CoreQueues makeQueues(const Config& config) {
  const auto& c = config.core;
  const std::uint32_t threads = c.threads;
  if (threads < 1 || threads > kMaxThreads) {
    throw ConfigError(fmt::format("core.threads = {} is out of range 1..{}", threads, kMaxThreads));
  }
  CoreQueues q;
  q[QueueKind::UopQueue] = SharedCapacity("uop_queue", c.uop_queue, threads, c.recombine);
  q[QueueKind::Rob] = SharedCapacity("rob", c.rob, threads, c.recombine);
  q[QueueKind::Iq] = SharedCapacity("iq", c.iq, threads, c.recombine);
  q[QueueKind::Lq] = SharedCapacity("lq", c.lq, threads, c.recombine);
  q[QueueKind::Sq] = SharedCapacity("sq", c.sq, threads, c.recombine);
  q.registers = RegisterFiles(config);
  return q;
}
// STALL and FLUSH say what a long-latency load does to its thread; the load/store unit's hook does it.
LongLatencyAction longLatencyAction(const Config& config) {
  const auto policy = makeFetchPolicy(config.core.fetch_policy);
  if (policy->gatesAtMlpDistance()) return LongLatencyAction::MlpFlush;
  if (policy->flushesOnMemoryMiss()) return LongLatencyAction::Flush;
  return policy->gatesOnMemoryMiss() ? LongLatencyAction::Gate : LongLatencyAction::None;
}
}  // namespace

Core::Core(CoreId id, const Config& config, MemorySystem& memory)
    : id_(id),
      threadCount_(config.core.threads),
      recombineCycles_(config.core.recombine_cycles),
      recombine_(config.core.recombine),
      watchdogCycles_(config.core.watchdog_cycles),
      threads_(config.core.threads),  // sized once: the stage units hold a span of it
      queues_(makeQueues(config)),
      frontEnd_(id, config, memory, threads_, queues_),
      rename_(config, threads_, queues_),
      loadStore_(id, config, memory, threads_, queues_, longLatencyAction(config)),
      scheduler_(config, threads_, queues_, loadStore_, frontEnd_),
      retire_(config, threads_, queues_, loadStore_, events_, loadStore_.mlpPredictor(), loadStore_.longLatencyLevel()),
      allocation_(makeAllocationPolicy(config.core)),
      adaptiveAllocation_(allocation_->adaptive()),
      mlpGate_(loadStore_.mlpPredictor() != nullptr) {
  for (int q = 0; q < kQueueKinds; ++q) allocationStructures_[q] = &queues_.byKind[q];
  RegisterFiles& regs = queues_.registers;
  allocationStructures_[kQueueKinds] = regs.intLimited() ? &regs.intFile() : nullptr;
  allocationStructures_[kQueueKinds + 1] = regs.fpLimited() ? &regs.fpFile() : nullptr;
  const std::uint32_t robCap = std::bit_ceil(queue(QueueKind::Rob).total());
  const std::uint32_t frontCap =
      std::bit_ceil(queue(QueueKind::UopQueue).total() + frontEnd_.pipeCapacity() + config.core.fetch_width);
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    threads_[t].allocate(robCap, frontCap, queue(QueueKind::Lq).total(), frontEnd_.predictor().makeThreadState(t));
  }
}

void Core::tick(Cycle now) {
  // The cycles since the last tick are charged by finishAndAccount() at the end of this one (one pass over the threads
  // per tick instead of two); the replay attempts booked in them are counted before anything reads or squashes.
  scheduler_.catchUpReplays(now);
  if (activeDirty_) {
    activeDirty_ = false;
    activeSetChanged(now);
  }
  if (adaptiveAllocation_) allocation_->cycleStart(allocationStructures_, now);
  // Progress of wrong-path resolution and retire (`early`), of the store drain and issue, and of the stages after
  // issue (`late`): see the wake-up rule at the end.
  bool early = frontEnd_.resolveWrongPaths(now);
  if (retire_.tick(now)) {
    early = true;
    lastRetire_ = now;
  }
  const bool drained = loadStore_.drainStores(now);  // retired stores write the L1D (post-retire store buffer)
  const bool issued = scheduler_.issue(now);
  if (loadStore_.hasPendingSquashes()) applyPendingFlushes();
  if (adaptiveAllocation_) observeAllocation(now);
  bool late = frontEnd_.deliver(now);
  late |= rename_.tick(now, draining(now));
  scheduler_.accept(rename_.dispatched());
  rename_.clearDispatched();
  late |= frontEnd_.fetch(now);
  bool anyRunning = false;
  const std::uint32_t starved = finishAndAccount(now, anyRunning);
  if (checking_) checkInvariants(now);

  anyRunning = anyRunning || loadStore_.hasBufferedStores();  // hasWork()
  if ((anyRunning && now - lastRetire_ > watchdogCycles_) || starved != threadCount_) watchdog(now, starved);
  if (early || late || !events_.empty()) {
    nextWake_ = now + 1;
  } else if (issued || drained) {
    // Only the scheduler issued or the store buffer wrote to the L1D. The stages after them in the cycle (issue, uop
    // queue, rename, fetch) have already seen what they freed and did nothing, and retire waits only for done times;
    // what they started shows at cycles computeNextWake names (the issued uops' done times, their dependents' ready
    // times, a branch's resolution, a FLUSH/STALL gate, the next buffered store's write), so the cycle after this
    // one, which always found nothing to do after an issue alone (39,936 of 139,871 ticks of the 64 MiB chase,
    // -n 20k), is not ticked. If nothing is scheduled at all, the next cycle is ticked, so that a deadlock is
    // reported at the same cycle as without skipping.
    const Cycle next = computeNextWake(now);
    nextWake_ = next == Cycle::never() ? now + 1 : next;
  } else {
    nextWake_ = computeNextWake(now);
    if (nextWake_ == Cycle::never() && anyRunning) {
      throw DeadlockError(fmt::format("deadlock: core {} can make no progress at cycle {}: {}", id_.value, now.value,
                                      describeStuck(now)));
    }
  }
}

void Core::attach(std::uint32_t t, std::shared_ptr<TraceCursor> cursor, Asid asid, Cycle now) {
  flushAccounting(now);
  threads_[t].bind(std::move(cursor), asid, now);
  threads_[t].lastRetire = now;
  loadStore_.threadBound(t);
  if (lastRetire_ < now) lastRetire_ = now;
  activeDirty_ = true;  // applied at the next tick, so a detach and an attach in one cycle are one change
  nextWake_ = now;
}

std::shared_ptr<TraceCursor> Core::detach(std::uint32_t t, Cycle now) {
  flushAccounting(now);
  ThreadContext& th = threads_[t];
  if (th.cursor == nullptr) return nullptr;
  squashFrom(t, th.cursor->retireSeq());
  auto cursor = std::move(th.cursorOwner);
  th.cursor = nullptr;
  th.state = ThreadState::Idle;
  activeDirty_ = true;  // applied at the next tick, so a detach and an attach in one cycle are one change
  nextWake_ = now;
  return cursor;
}

void Core::restartFinished(std::uint32_t t, Cycle now) {
  flushAccounting(now);
  ThreadContext& th = threads_[t];
  th.cursor->restart();
  loadStore_.threadBound(t);
  th.state = ThreadState::Running;
  th.fetchResumeAt = now;
  th.lastRetire = now;
  activeDirty_ = true;  // applied at the next tick, so a detach and an attach in one cycle are one change
  nextWake_ = now;
}

void Core::finishIfEnded(std::uint32_t t, Cycle now) {
  ThreadContext& th = threads_[t];
  if (!th.cursor->finished()) return;
  th.state = ThreadState::Finished;
  events_.push_back({CoreEventKind::SourceEnded, t, 0, now});
  activeDirty_ = true;  // applied at the next tick
}

void Core::activeSetChanged(Cycle now) {
  std::uint32_t mask = 0;
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    if (threads_[t].state == ThreadState::Running) mask |= 1u << t;
  }
  if (mask == activeMask_) return;
  // Changing how many threads share the partitions drains the pipeline (Pentium 4: "around 100 clocks"). Starting
  // from an idle core, stopping the last thread, or one thread replacing another in the same cycle does not.
  const int before = std::popcount(activeMask_);
  const int after = std::popcount(mask);
  activeMask_ = mask;
  for (auto& q : queues_.byKind) q.setActive(mask);
  queues_.registers.setActive(mask);
  if (threadCount_ > 1 && recombine_ && before != 0 && after != 0 && before != after && recombineCycles_ > 0) {
    drainUntil_ = std::max(drainUntil_, now + recombineCycles_);
    drainToShares_ = true;
    ++drains_;
  }
}

void Core::observeAllocation(Cycle now) {
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    const ThreadContext& th = threads_[t];
    AllocationSample& s = allocationSamples_[t];
    s.running = th.state == ThreadState::Running;
    // ThreadContext::missDone keeps returned misses until the next one: those whose data is back are not pending.
    s.pendingDataMisses = 0;
    s.lastPendingMissDone = Cycle{0};
    for (const Cycle c : th.missDone) {
      if (c > now) {
        ++s.pendingDataMisses;
        s.lastPendingMissDone = std::max(s.lastPendingMissDone, c);
      }
    }
    s.retired = th.stats.instructions;
  }
  allocation_->observe(std::span<const AllocationSample>(allocationSamples_.data(), threadCount_),
                       allocationStructures_, now);
}

bool Core::draining(Cycle now) const {
  if (drainUntil_ > now) return true;
  if (!drainToShares_) return false;
  for (QueueKind q : {QueueKind::Rob, QueueKind::Iq, QueueKind::Lq, QueueKind::Sq}) {
    const SharedCapacity& cap = queues_[q];
    for (std::uint32_t t = 0; t < threadCount_; ++t) {
      if (cap.used(t) > cap.limit(t)) return true;
    }
  }
  drainToShares_ = false;
  return false;
}

void Core::squashFrom(std::uint32_t t, SeqNum from) {
  ThreadContext& th = threads_[t];
  TraceCursor& cur = *th.cursor;
  const SeqNum fetchEnd = cur.fetchSeq();
  // Wrong-path uops are younger than every fetched instruction: any squash takes them (the wrong path restarts if its
  // branch survives and has not resolved).
  if (!th.wrongPath.empty()) th.wrongPath.squash(t, queues_);
  if (from < th.robTail) rename_.squashed(t);  // the youngest renamed instruction goes, with its uops still in rename
  if (from >= fetchEnd) return;
  th.wrongPath.code.breakChain();  // fetch goes back to `from`: it does not follow the last instruction fetched
  SharedCapacity& uopq = queues_[QueueKind::UopQueue];
  SharedCapacity& rob = queues_[QueueKind::Rob];
  SharedCapacity& iq = queues_[QueueKind::Iq];
  SharedCapacity& lq = queues_[QueueKind::Lq];
  SharedCapacity& sq = queues_[QueueKind::Sq];
  for (SeqNum seq = fetchEnd; seq > from;) {
    --seq;  // youngest first
    const Instr& in = cur.at(seq);
    if (seq >= th.robTail) {
      if (seq < th.enteredSeq) uopq.release(t, th.front[seq.value & th.frontMask].uopqHeld);  // its uops (uopwindow)
      if (in.isBranch()) --th.unresolvedBranches;
    } else {
      Uop& u = th.robSlot(seq);
      if (!u.issued) {
        iq.release(t, u.iqHeld);  // the uops not yet issued
        if (in.isBranch()) --th.unresolvedBranches;
      }
      rob.release(t, u.robHeld);  // its uops not yet retired (uopwindow)
      if (u.intRegs != 0 || u.fpRegs != 0) queues_.registers.release(t, RegNeed{u.intRegs, u.fpRegs});
      if (u.hasLoad) lq.release(t);
      if (u.hasStore) sq.release(t);
      u.valid = false;
    }
    ++th.stats.squashed;
  }
  th.stats.fetched -= fetchEnd - from;
  // Surviving producers may list squashed consumers; those were linked last, so they sit at the head of each list.
  const SeqNum keepEnd = std::min(th.robTail, from);
  for (SeqNum seq = cur.retireSeq(); seq < keepEnd; ++seq) {
    Uop& p = th.robSlot(seq);
    if (p.issued) continue;
    while (p.depHead != kNoDep) {
      const Uop& consumer = th.rob[p.depHead / kMaxSrcRegs];
      if (consumer.valid && consumer.seq < from) break;
      p.depHead = th.depNext[p.depHead];
    }
  }
  // Rebuild the rename map from the surviving instructions (a stack update under the stack engine wrote no
  // stack-pointer mapping), and the stack engine's offset state as of the youngest survivor.
  th.renameMap.fill(kNoProducer);
  for (SeqNum seq = cur.retireSeq(); seq < keepEnd; ++seq) {
    const bool stackUpdate = th.robSlot(seq).stackUpdate;
    for (RegId d : cur.at(seq).dst) {
      if (d != kNoReg && !(stackUpdate && d == kStackPointerReg)) th.renameMap[d] = seq;
    }
  }
  th.stackDelta = keepEnd > cur.retireSeq() ? th.robSlot(keepEnd.prev()).stackDelta : th.retiredStackDelta;
  th.robTail = keepEnd;
  th.enteredSeq = std::min(th.enteredSeq, from);
  if (th.waitingBranch && th.waitingBranchSeq >= from) {
    th.wrongPath.resolveAt = Cycle::never();  // the branch itself is gone (a surviving one keeps its redirect)
    th.waitingBranch = false;
    th.fetchBlock = FetchBlock::None;
  }
  th.lastFetchLine = ~Addr{0};
  th.building = false;  // the next line's access decides again
  th.streamLine = ThreadContext::kNoStreamLine;  // the fetcher restarts at the redirect
  th.microcodeSlots = 0;  // a squashed microcoded instruction's sequence stops streaming
  loadStore_.squashFrom(t, from);
  cur.rewindTo(from);
}

void Core::applyPendingFlushes() {
  for (const auto& [t, seq] : loadStore_.pendingFlushes()) {
    ThreadContext& th = threads_[t];
    if (th.cursor != nullptr && seq.next() < th.cursor->fetchSeq() && seq >= th.cursor->retireSeq()) {
      ++th.stats.flushes;
      squashFrom(t, seq.next());
    }
  }
  loadStore_.clearPendingFlushes();
  // Squashes from each listed (thread, seq) still in flight (an earlier squash of this call may have taken it).
  auto squashEach = [&](const std::vector<std::pair<std::uint32_t, SeqNum>>& list, std::uint64_t ThreadStats::*count) {
    for (const auto& [t, seq] : list) {
      ThreadContext& th = threads_[t];
      if (th.cursor != nullptr && seq < th.cursor->fetchSeq() && seq >= th.cursor->retireSeq()) {
        ++(th.stats.*count);
        squashFrom(t, seq);
      }
    }
  };
  // A load that read before a conflicting older store's address was known executes again, from the load on.
  squashEach(loadStore_.orderViolations(), &ThreadStats::memoryOrderFlushes);
  loadStore_.clearOrderViolations();
  // A sibling's store wrote a line this thread had read out of order: the memory-ordering machine clear restarts it
  // after its last retired instruction (core.lsu.sibling_order_clears).
  squashEach(loadStore_.siblingClears(), &ThreadStats::siblingOrderClears);
  loadStore_.clearSiblingClears();
}

void Core::resetStats() {
  for (auto& th : threads_) th.stats = ThreadStats{};
  cyclesActive_ = 0;
  drains_ = 0;
  rename_.resetStats();
  scheduler_.resetStats();
}

void Core::flushAccounting(Cycle now) {
  // NetBurst replay attempts of skipped cycles are counted before anyone reads or squashes what they touch.
  scheduler_.catchUpReplays(now);
  chargeSinceAccounted(now);
}

void Core::chargeSinceAccounted(Cycle now) {
  if (now <= accountedUpTo_) return;
  const std::uint64_t n = now - accountedUpTo_;
  accountedUpTo_ = now;
  if (accountedMask_ == 0) return;
  cyclesActive_ += n;
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    if ((accountedMask_ & (1u << t)) != 0) chargeThread(threads_[t], n);
  }
}

std::uint32_t Core::finishAndAccount(Cycle now, bool& anyRunning) {
  // The cycles from the last account (or flush) up to now are charged with the causes seen then, for the threads
  // that ran then (a thread that finished in this tick included); cycles from `now` on are charged at the next
  // account or flush with the causes seen now. One pass: each thread's charge and new sample touch the same lines.
  // The same pass ends a thread whose trace is done (before its sample, as it ends before the cycle is charged) and
  // keeps the per-thread watchdog's last retirement: a thread's end, charge, sample and watchdog read only its own
  // state, the queues and the drain, which no other thread's step changes.
  std::uint64_t n = 0;
  if (now > accountedUpTo_) {
    n = now - accountedUpTo_;
    if (accountedMask_ != 0) cyclesActive_ += n;
  }
  const std::uint32_t chargeMask = n != 0 ? accountedMask_ : 0;
  accountedUpTo_ = now;
  accountedMask_ = 0;
  bool drainKnown = false;
  bool drain = false;
  std::uint32_t starved = threadCount_;
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    finishIfDone(t, now);
    ThreadContext& th = threads_[t];
    if ((chargeMask & (1u << t)) != 0) chargeThread(th, n);
    if (th.state != ThreadState::Running || th.retiredThisCycle || th.stats.instructions >= th.retireLimit) {
      th.lastRetire = now;
    } else if (now - th.lastRetire > watchdogCycles_) {
      // Asked only past the limit (not on the hot path): a thread waiting for a known completion starts again.
      if (waitsForCompletion(t, now)) {
        th.lastRetire = now;
      } else if (starved == threadCount_) {
        starved = t;
      }
    }
    if (th.state != ThreadState::Running) continue;
    anyRunning = true;
    accountedMask_ |= 1u << t;
    for (int q = 0; q < kQueueKinds; ++q) {
      const std::uint32_t used = queues_.byKind[q].used(t);
      th.lastOccupancy[q] = used;
      // A branch, not std::max: the maximum rarely changes, and the unconditional store of it made this line 1.5 %
      // of a two-thread gen:mix run (it runs for every thread and queue at every tick; the branch saves half).
      if (used > th.stats.occupancy[q].max) th.stats.occupancy[q].max = used;
    }
    if (!drainKnown && !th.retiredThisCycle) {  // classify asks only then
      drain = draining(now);
      drainKnown = true;
    }
    th.lastCause = classify(t, now, drain);
    // Gated as the fetch stage sees it; gatedUntil and fetchResumeAt are wake-up points, so this holds unchanged
    // over any cycles skipped after this one (no instruction is fetched in them). (The gate, set only by STALL, FLUSH
    // and MLP-aware fetch, is asked first.)
    th.lastGated = th.fetchGated(now, mlpGate_) && !th.waitingBranch && th.fetchResumeAt <= now;
  }
  return starved;
}

CpiCause Core::classify(std::uint32_t t, Cycle now, bool draining) const {
  const ThreadContext& th = threads_[t];
  if (th.retiredThisCycle) return CpiCause::Base;
  if (th.robTail == th.cursor->retireSeq()) {  // nothing renamed in flight
    if (draining) return CpiCause::Drain;
    const CpiCause block = rename_.blockCause(t);
    if (block != CpiCause::Base) return block;
    if (th.waitingBranch || th.fetchBlock == FetchBlock::Mispredict) return CpiCause::BranchMispredict;
    if (th.fetchBlock == FetchBlock::Pause) return CpiCause::Pause;
    return CpiCause::Frontend;
  }
  const Uop& head = th.rob[th.cursor->retireSeq().value & th.robMask];
  if (head.issued && head.doneAt <= now) return CpiCause::SiblingRetire;
  if (head.issued && head.hasLoad) return static_cast<CpiCause>(static_cast<int>(CpiCause::MemL1) + static_cast<int>(head.level));
  const CpiCause block = rename_.blockCause(t);
  if (block != CpiCause::Base) return block;
  if (draining) return CpiCause::Drain;
  return CpiCause::Execute;
}

Cycle Core::computeNextWake(Cycle now) const {
  Cycle next = Cycle::never();
  auto consider = [&](Cycle c) {
    if (c > now && c < next) next = c;
  };
  scheduler_.earliestWake(now, next);
  loadStore_.earliestWake(now, next);
  consider(drainUntil_);
  if (adaptiveAllocation_) consider(allocation_->nextChange(allocationStructures_, now));
  for (const auto& th : threads_) {
    if (th.state != ThreadState::Running) continue;
    const SeqNum head = th.cursor->retireSeq();
    if (th.robTail != head) {
      const Uop& u = th.rob[head.value & th.robMask];
      if (u.issued) consider(u.doneAt);
    }
    if (th.pipeCount() != 0) consider(th.front[th.enteredSeq.value & th.frontMask].availableAt);
    if (th.wrongPath.pipeCount() != 0) consider(th.wrongPath.at(th.wrongPath.entered).availableAt);
    if (th.waitingBranch) consider(th.wrongPath.resolveAt);
    consider(th.fetchResumeAt);
    consider(th.gatedUntil);
    for (Cycle c : th.missDone) consider(c);
  }
  return next;
}

void Core::watchdog(Cycle now, std::uint32_t starved) {
  // A core whose threads wait for a known completion (a long access, an instruction fetch from DRAM) is not stuck:
  // the watchdog starts counting again from here.
  if (now - lastRetire_ > watchdogCycles_) {
    if (anyWaitsForCompletion(now)) {
      lastRetire_ = now;
    } else {
      throw DeadlockError(fmt::format("watchdog: core {} retired nothing for {} cycles (cycle {}): {}", id_.value,
                                      now - lastRetire_, now.value, describeStuck(now)));
    }
  }
  // A thread whose sibling retires never trips the test above: a starved thread (a sibling holding a shared
  // structure it needs for ever) would run for ever without this one.
  if (starved != threadCount_) {
    throw DeadlockError(fmt::format("watchdog: core {} thread {} retired nothing for {} cycles while a sibling "
                                    "retired (cycle {}): {}",
                                    id_.value, starved, now - threads_[starved].lastRetire, now.value,
                                    describeStuck(now)));
  }
}

bool Core::waitsForCompletion(std::uint32_t t, Cycle now) const {
  const ThreadContext& th = threads_[t];
  if (th.state != ThreadState::Running || th.cursor == nullptr) return false;
  const SeqNum head = th.cursor->retireSeq();
  if (th.robTail == head) {
    // Nothing renamed: the front end waits for its next instruction (an ITLB walk or instruction-cache miss).
    return !th.waitingBranch && th.fetchResumeAt >= now && th.fetchResumeAt != Cycle::never();
  }
  // A load served beyond the L1: the memory system's latency and queueing (mem.dram.latency goes up to 1,000,000
  // cycles) can outlast the watchdog with nothing wrong. Other long operations (a 3000-cycle divide in a test) are
  // not excused: the watchdog is for the core's own waits.
  const Uop& u = th.rob[head.value & th.robMask];
  return u.valid && u.issued && u.hasLoad && u.level != MemLevel::L1 && u.doneAt > now && u.doneAt != Cycle::never();
}

bool Core::anyWaitsForCompletion(Cycle now) const {
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    if (waitsForCompletion(t, now)) return true;
  }
  return false;
}

std::string Core::describeStuck(Cycle /*now*/) const {
  std::string out;
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    const ThreadContext& th = threads_[t];
    if (th.state != ThreadState::Running) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("thread {} ('{}'): ", t, th.cursor->describe());
    const SeqNum head = th.cursor->retireSeq();
    if (th.robTail == head) {
      out += fmt::format("ROB empty, {} in the uop queue, fetch {}", th.frontCount(),
                         th.waitingBranch ? "waits for a mispredicted branch"
                                          : fmt::format("resumes at cycle {}", th.fetchResumeAt.value));
    } else {
      const Uop& u = th.rob[head.value & th.robMask];
      out += fmt::format("oldest instruction #{} pc {:#x} op {} is {}", u.seq.value, u.instr->pc,
                         opClassName(u.instr->op),
                         u.issued ? fmt::format("executing until cycle {}", u.doneAt.value)
                                  : fmt::format("waiting for {} operand(s)", u.pendingSrcs));
    }
    const CpiCause block = rename_.blockCause(t);
    if (block != CpiCause::Base) out += fmt::format(", allocation blocked: {}", cpiCauseName(block));
    for (int q = 0; q < kQueueKinds; ++q) {
      const auto& cap = queues_.byKind[q];
      out += fmt::format(", {} {}/{} (own {}/{})", cap.name(), cap.usedTotal(), cap.total(), cap.used(t), cap.limit(t));
    }
    // Physical register files: renaming entries in use / beyond the architectural ones.
    const RegisterFiles& regs = queues_.registers;
    for (const SharedCapacity* f :
         {regs.intLimited() ? &regs.intFile() : nullptr, regs.fpLimited() ? &regs.fpFile() : nullptr}) {
      if (f == nullptr) continue;
      out += fmt::format(", {} renaming {}/{} (own {}/{})", f->name(), f->usedTotal(), f->total(), f->used(t),
                         f->limit(t));
    }
  }
  return out.empty() ? "no thread running" : out;
}

void Core::checkInvariants(Cycle now) const {
  auto fail = [&](std::uint32_t t, const std::string& what) {
    throw Error(fmt::format("invariant broken on core {} thread {} at cycle {}: {}", id_.value, t, now.value, what));
  };
  std::array<std::uint32_t, kQueueKinds> totals{};
  std::array<std::uint32_t, kMaxThreads> intRegs{}, fpRegs{};  // physical registers held by renamed writers
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    const ThreadContext& th = threads_[t];
    std::array<std::uint32_t, kQueueKinds> count{};
    // Retired stores not yet written to the L1D keep their SQ entries (post-retire store buffer).
    count[static_cast<int>(QueueKind::Sq)] = loadStore_.bufferedStores(t);
    if (th.cursor != nullptr) {
      const TraceCursor& cur = *th.cursor;
      if (!(cur.retireSeq() <= th.robTail && th.robTail <= th.enteredSeq && th.enteredSeq <= cur.fetchSeq() &&
            cur.fetchSeq() <= cur.loadedEnd())) {
        fail(t, fmt::format("sequence order retire {} <= rob tail {} <= queue end {} <= fetch {} <= loaded {} broken",
                            cur.retireSeq().value, th.robTail.value, th.enteredSeq.value, cur.fetchSeq().value,
                            cur.loadedEnd().value));
      }
      std::uint64_t lastAge = 0;
      for (SeqNum seq = cur.retireSeq(); seq < th.robTail; ++seq) {
        const Uop& u = th.rob[seq.value & th.robMask];
        if (!u.valid || u.seq != seq) {
          fail(t, fmt::format("ROB slot of instruction #{} holds #{} (valid {})", seq.value, u.seq.value, u.valid));
        }
        if (u.age <= lastAge) fail(t, fmt::format("ROB out of program order at #{}", seq.value));
        lastAge = u.age;
        if (u.instr != &cur.at(seq)) {
          fail(t, fmt::format("instruction #{} points at the wrong trace record", seq.value));
        }
        if (u.robHeld == 0) fail(t, fmt::format("instruction #{} in the ROB holds no ROB entry", seq.value));
        count[static_cast<int>(QueueKind::Rob)] += u.robHeld;  // one entry per uop not yet retired (uopwindow)
        count[static_cast<int>(QueueKind::Iq)] += u.iqHeld;  // one entry per uop not yet issued
        if (u.hasLoad) ++count[static_cast<int>(QueueKind::Lq)];
        if (u.hasStore) ++count[static_cast<int>(QueueKind::Sq)];
        intRegs[t] += u.intRegs;
        fpRegs[t] += u.fpRegs;
      }
      for (SeqNum seq = th.robTail; seq < th.enteredSeq; ++seq) {
        // its uops (uopwindow)
        count[static_cast<int>(QueueKind::UopQueue)] += th.front[seq.value & th.frontMask].uopqHeld;
      }
      if (th.pipeCount() + th.wrongPath.pipeCount() > frontEnd_.pipeCapacity()) {
        fail(t, fmt::format("front-end pipe holds {} + {} wrong-path > {}", th.pipeCount(), th.wrongPath.pipeCount(),
                            frontEnd_.pipeCapacity()));
      }
      // Wrong-path uops: in the uop queue, the ROB and (until issued) the IQ, after every real instruction.
      const WrongPathState& wp = th.wrongPath;
      std::uint32_t unissued = 0;
      for (std::uint64_t i = wp.head; i < wp.renamed; ++i) unissued += wp.at(i).issued ? 0 : 1;
      if (unissued != wp.unissued) fail(t, fmt::format("wrong path counts {} unissued, holds {}", wp.unissued, unissued));
      if (!wp.empty() && !th.waitingBranch) fail(t, "wrong-path uops in flight without an unresolved mispredict");
      if (wp.queued() != 0 && th.enteredSeq != cur.fetchSeq()) fail(t, "wrong-path uops queued before real ones");
      count[static_cast<int>(QueueKind::UopQueue)] += wp.queued();
      // Rename's quick answer and the reason the CPI stack is given must agree.
      if (rename_.canAllocate(t) != (rename_.hasRenamable(t) && rename_.blockCause(t) == CpiCause::Base)) {
        fail(t, fmt::format("rename can allocate {}, but the allocation block is {}", rename_.canAllocate(t),
                            cpiCauseName(rename_.blockCause(t))));
      }
      count[static_cast<int>(QueueKind::Rob)] += wp.inRob();
      count[static_cast<int>(QueueKind::Iq)] += unissued;
    }
    for (int q = 0; q < kQueueKinds; ++q) {
      if (queues_.byKind[q].used(t) != count[q]) {
        fail(t, fmt::format("{} counts {} entries for the thread but holds {}", queues_.byKind[q].name(), queues_.byKind[q].used(t), count[q]));
      }
      totals[q] += count[q];
    }
  }
  // Physical register files: each thread holds one renaming entry per destination register of its in-flight writers.
  const RegisterFiles& regs = queues_.registers;
  for (const auto& [limited, file, held] : {std::tuple{regs.intLimited(), &regs.intFile(), &intRegs},
                                            std::tuple{regs.fpLimited(), &regs.fpFile(), &fpRegs}}) {
    if (!limited) continue;
    std::uint32_t sum = 0;
    for (std::uint32_t t = 0; t < threadCount_; ++t) {
      if (file->used(t) != (*held)[t]) {
        fail(t, fmt::format("{} counts {} renaming registers for the thread but its writers in flight hold {}",
                            file->name(), file->used(t), (*held)[t]));
      }
      sum += (*held)[t];
    }
    if (file->overTakes() != 0) fail(0, fmt::format("{} was taken past a thread's share or its size", file->name()));
    if (file->usedTotal() != sum || sum > file->total()) {
      fail(0, fmt::format("{} holds {} renaming registers, counts {}, has {}", file->name(), sum, file->usedTotal(),
                          file->total()));
    }
  }
  for (int q = 0; q < kQueueKinds; ++q) {
    if (queues_.byKind[q].overTakes() != 0) fail(0, fmt::format("{} was taken past a thread's share or its size", queues_.byKind[q].name()));
    if (queues_.byKind[q].usedTotal() != totals[q] || totals[q] > queues_.byKind[q].total()) {
      fail(0, fmt::format("{} holds {} entries, counts {}, capacity {}", queues_.byKind[q].name(), totals[q], queues_.byKind[q].usedTotal(),
                          queues_.byKind[q].total()));
    }
  }
}

void Core::visitState(StateIo& io) {
  io.mark("core");
  io(threads_, queues_, events_);
  io.mark("front end");
  frontEnd_.visitState(io);
  io.mark("rename");
  rename_.visitState(io);
  io.mark("load/store");
  loadStore_.visitState(io);
  io.mark("scheduler");
  scheduler_.visitState(io);
  io.mark("retire");
  retire_.visitState(io);
  io.mark("allocation policy");
  allocation_->visitState(io);
  io(activeMask_, drainUntil_, drainToShares_, activeDirty_, nextWake_, accountedUpTo_, lastRetire_, cyclesActive_,
     drains_, accountedMask_);
}

}  // namespace smtlab
