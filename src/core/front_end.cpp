#include "smtlab/core/front_end.hpp"

#include <algorithm>
#include <bit>

namespace smtlab {

namespace {
std::array<std::uint8_t, kOpClassCount> microcodeCycles(const UopDecoder& decoder, std::uint32_t fetchWidth) {
  std::array<std::uint8_t, kOpClassCount> cycles{};
  for (int i = 0; i < kOpClassCount; ++i) {
    Instr in;
    in.op = static_cast<OpClass>(i);  // a wrong-path instruction has its op class only (no addresses, no uop count)
    const UopPlan plan = decoder.decode(in);
    if (plan.microcoded) cycles[i] = static_cast<std::uint8_t>((plan.total + fetchWidth - 1) / fetchWidth);
  }
  return cycles;
}
}  // namespace

namespace {
// Whether the order in which the threads enter the uop queue can never change what enters (FrontEnd::deliver's fast
// path). So with two threads and a partitioned or replicated queue whose shares only the static allocation policy
// sets: while both are within their shares, the shares add up to the queue, so neither can take the other's; while
// one holds more than a shrunk share, only the other can take. Shared and capped queues, an adaptive policy's shares
// and three or more threads (two under their shares competing for what a third frees) take the ordered path.
bool deliveryOrderFree(const Config& config) {
  const Sharing sharing = config.core.uop_queue.sharing;
  return (sharing == Sharing::Partitioned || sharing == Sharing::Replicated) && config.core.threads <= 2 &&
         config.core.allocation_policy == AllocationPolicy::Static;
}
}  // namespace

FrontEnd::FrontEnd(CoreId core, const Config& config, MemorySystem& memory, std::span<ThreadContext> threads,
                   CoreQueues& queues)
    : core_(core),
      threadCount_(config.core.threads),
      fetchWidth_(config.core.fetch_width),
      fetchThreads_(std::clamp(config.core.fetch_threads, 1u, std::max(1u, config.core.threads))),
      frontendDepth_(config.core.frontend_depth),
      mispredictPenalty_(config.core.branch.mispredict_penalty),
      btbMissPenalty_(config.core.branch.btb_miss_penalty),
      pauseCycles_(config.core.pause_cycles),
      breakOnTaken_(config.core.fetch_break_on_taken),
      microcodeSharesFetch_(config.core.microcode_shares_fetch),
      lineShift_(static_cast<std::uint32_t>(std::countr_zero(config.mem.line_bytes))),
      l1iLatency_(config.mem.l1i.latency),
      buildWidth_(config.core.build_width),
      fetchPrefetch_(config.core.fetch_prefetch),
      pipeCapacity_(std::max(1u, config.core.fetch_width) * std::max(1u, config.core.frontend_depth)),
      wrongPath_(config.core.wrong_path),
      deliveryOrderFree_(deliveryOrderFree(config)),
      memory_(memory),
      threads_(threads),
      queues_(queues),
      policy_(makeFetchPolicy(config.core.fetch_policy)),
      policyNeedsCounters_(policy_->needsCounters()),
      policyNeedsMisses_(policy_->needsDataMisses()),
      mlpGate_(policy_->gatesAtMlpDistance()),
      predictor_(config.core.branch),
      fetchOrder_(config.core.threads),
      candidates_(config.core.threads),
      decoder_(config.core),
      wrongPathMicrocodeCycles_(microcodeCycles(decoder_, std::max(1u, config.core.fetch_width))) {}

bool FrontEnd::fetch(Cycle now) {
  const SharedCapacity& uopq = queues_[QueueKind::UopQueue];
  const SharedCapacity& iq = queues_[QueueKind::Iq];
  bool anyEligible = false;
  bool anyBuilding = false;  // a thread fetches through the decoder this cycle (decode() below has work)
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    ThreadContext& th = threads_[t];
    FetchCandidate& c = candidates_[t];
    c.eligible = false;
    if (th.state != ThreadState::Running) continue;
    if ((th.waitingBranch && !wrongPath_) || th.fetchResumeAt > now) continue;
    if (th.fetchGated(now, mlpGate_)) continue;  // counted in fetchGatedCycles by the core's accounting
    // Wrong-path uops share the thread's front-end pipe (and so count for ICOUNT, like everything in the queues).
    const std::uint32_t inPipe = th.pipeCount() + th.wrongPath.pipeCount();
    // A microcode sequence still streaming asks for the slot whatever the pipe holds (it was fetched already).
    if (th.microcodeSlots == 0) {
      if (inPipe >= pipeCapacity_) continue;
      if (!th.waitingBranch && th.cursor->peek() == nullptr) continue;
    }
    anyEligible = true;
    if (th.building) {  // fetches through the decoder (below), not from the trace cache
      anyBuilding = true;
      continue;
    }
    c.eligible = true;
    if (!policyNeedsCounters_) continue;
    c.frontEnd = inPipe + uopq.used(t) + iq.used(t);
    c.branches = th.unresolvedBranches;
    if (policyNeedsMisses_) {
      std::erase_if(th.missDone, [&](Cycle d) { return d <= now; });
      c.dataMisses = static_cast<std::uint32_t>(th.missDone.size());
    }
  }
  if (!anyEligible) return false;
  std::uint32_t budget = fetchWidth_;
  const std::uint32_t n = policy_->choose(candidates_.data(), threadCount_, now, fetchOrder_.data());
  for (std::uint32_t i = 0; i < n && i < fetchThreads_ && budget > 0; ++i) {
    budget -= fetchThread(fetchOrder_[i], budget, now);
  }
  // A thread the decoder can serve was found above, and fetching from the trace cache never makes one (a thread that
  // starts building waits for its line first).
  if (anyBuilding) decode(now);
  // A thread that could fetch either fetched or started an I-cache miss, and a sibling that could fetch but did not
  // get the slot may get it next cycle: either way the next cycle can differ, so it must not be skipped.
  return true;
}

void FrontEnd::decode(Cycle now) {
  // Trace-cache build mode (NetBurst): a thread whose code line missed the trace cache gets its instructions from the
  // one decoder, build_width per cycle, which the threads share: one thread per cycle, in turn (Marr et al. 2002:
  // "several instructions" for one logical processor before switching; chosen: one cycle's worth). The trace-cache
  // slot above is a separate path: a sibling that hits keeps fetching from it meanwhile. A building thread's wrong path
  // (core.wrong_path) comes through the decoder too (chosen: it starts in code near the line that missed).
  std::uint32_t chosen = threadCount_;
  for (std::uint32_t k = 0; k < threadCount_; ++k) {
    const std::uint32_t t = (decodeNext_ + k) % threadCount_;
    const ThreadContext& th = threads_[t];
    if (!th.building || th.state != ThreadState::Running) continue;
    if ((th.waitingBranch && !wrongPath_) || th.fetchResumeAt > now || th.fetchGated(now, mlpGate_)) continue;
    if (th.microcodeSlots == 0) {
      if (th.pipeCount() + th.wrongPath.pipeCount() >= pipeCapacity_) continue;
      if (!th.waitingBranch && th.cursor->peek() == nullptr) continue;
    }
    if (chosen == threadCount_) {
      chosen = t;
    } else {
      ++threads_[t].stats.fetchBuildWaitCycles;
    }
  }
  if (chosen == threadCount_) return;
  decodeNext_ = (chosen + 1) % threadCount_;
  fetchThread(chosen, buildWidth_, now);
}

void FrontEnd::holdForMicrocode(ThreadContext& th, std::uint32_t cycles, Cycle now) {
  th.fetchBlock = FetchBlock::Microcode;
  if (microcodeSharesFetch_) {
    th.microcodeSlots = cycles - 1;  // this cycle's slot was the first
  } else {
    th.fetchResumeAt = now + cycles;
  }
}

std::uint32_t FrontEnd::fetchThread(std::uint32_t t, std::uint32_t budget, Cycle now) {
  ThreadContext& th = threads_[t];
  if (th.microcodeSlots > 0) {
    // The slot goes to the microcode sequencer's uops of the instruction fetched last (their queue entries and
    // timing were booked at its fetch): the whole delivery width for this cycle.
    --th.microcodeSlots;
    return budget;
  }
  if (th.waitingBranch) return fetchWrongPath(t, budget, now);
  std::uint32_t got = 0;
  while (got < budget) {
    const Instr* in = th.cursor->peek();
    if (in == nullptr) break;
    if (mlpGate_ && th.fetchGated(now, true)) break;  // MLP-aware fetch reached gateAfter
    const Addr line = in->pc >> lineShift_;
    if (line != th.lastFetchLine) {
      // A line the instruction fetcher read ahead (core.fetch_prefetch) comes from the streaming buffer: not in the
      // trace cache, so it is built, but its bytes may be there already.
      const bool streamed = line == th.streamLine;
      const MemResult r = streamed ? memory_.fetchStreamed(core_, ThreadId{t}, th.asid, in->pc, th.streamReady,
                                                           th.streamLevel)
                                   : memory_.fetch(core_, ThreadId{t}, th.asid, in->pc, now);
      th.lastFetchLine = line;
      th.streamLine = ThreadContext::kNoStreamLine;
      th.stats.fetchStreamedLines += streamed;
      if (fetchPrefetch_ && (streamed || r.ready > now + l1iLatency_)) prefetchNextLine(th, t, line, now);
      // An L1I hit is part of the front-end depth; anything slower holds this thread's fetch until the line arrives,
      // and then (build_width > 0) its instructions come from the decoder until a line hits again.
      if (r.ready > now + l1iLatency_) {
        th.fetchResumeAt = r.ready;
        th.fetchBlock = FetchBlock::ICache;
        th.stats.fetchIcacheStallCycles += r.ready - now;
        th.building = buildWidth_ > 0;
        return got;
      }
      // A streamed line whose bytes are in the buffer: the decoder goes straight on with them (the buffer is filled
      // only while the thread builds, and dropped on a mispredict or squash).
      if (!streamed && th.building) {
        th.building = false;  // back on the trace cache: the rest of this cycle's decode slot goes unused
        return got;
      }
    }
    if (th.pipeCount() >= pipeCapacity_) break;
    const SeqNum seq = th.cursor->fetchSeq();
    FrontEntry& fe = th.front[seq.value & th.frontMask];
    fe.availableAt = now + frontendDepth_;
    fe.mispredicted = false;
    fe.btbMiss = false;
    fe.plan = decoder_.decode(*in);
    th.cursor->advanceFetch();
    ++th.stats.fetched;
    th.stats.fetchBuilt += th.building;
    ++got;
    if (wrongPath_) th.wrongPath.noteFetched(*in);
    if (in->isBranch()) {
      ++th.stats.fetchedBranches;
      ++th.unresolvedBranches;
      const BranchOutcome outcome = predictor_.predictAndTrain(*in, th.asidTag, th.branch);
      th.stats.fetchedPhtTagMisses += th.branch.lastTagMiss;
      if (outcome == BranchOutcome::Mispredict) {
        ++th.stats.fetchedMispredicts;
        fe.mispredicted = true;
        th.waitingBranch = true;
        th.waitingBranchSeq = seq;
        th.waitingBranchFetchedAt = now;
        th.fetchBlock = FetchBlock::Mispredict;
        th.streamLine = ThreadContext::kNoStreamLine;  // the fetcher follows the prediction: its buffer is wrong-path
        if (wrongPath_) th.wrongPath.startWalk(*in);
        break;
      }
      if (outcome == BranchOutcome::BtbMiss) {
        ++th.stats.fetchedBtbMisses;
        fe.btbMiss = true;
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
    if (const UopPlan& plan = fe.plan; plan.microcoded) {
      // The microcode sequencer delivers the instruction's uops, fetch_width per cycle, for this thread only, for
      // ceil(uops / fetch_width) cycles: either cycles the thread wins the fetch choice (core.microcode_shares_fetch)
      // or a hold of its fetch while a sibling fetches every cycle.
      holdForMicrocode(th, (plan.total + fetchWidth_ - 1) / fetchWidth_, now);
      break;
    }
  }
  return got;
}

void FrontEnd::prefetchNextLine(ThreadContext& th, std::uint32_t t, Addr line, Cycle now) {
  // NetBurst's instruction fetcher reads code along the path the BTB predicts into each logical processor's two
  // 64-byte streaming buffers, ahead of the one decoder (IA-32 optimization manual 248966-013: p.1-11, "prefetches
  // IA-32 instructions that are likely to be executed"; p.1-14; p.1-36, the 2-entry buffers are per logical
  // processor; p.2-55, 64-byte). One buffer holds the line being decoded, the other the next line on the path: here
  // the first record after the fetch position that lies in another line (the trace's own path, which is the predicted
  // one until a mispredict; a mispredicted branch drops the buffer when it is fetched). Chosen: at most 64 records
  // ahead (a line holds at most 64 instructions; code that stays longer in one line loops there and is built once);
  // past them or the trace's end, the next line in address order, where fetch goes unless a taken branch sends it
  // elsewhere.
  TraceCursor& cur = *th.cursor;
  Addr next = line + 1;
  for (std::uint64_t k = 1; k <= 64; ++k) {
    const Instr* in = cur.ahead(k);
    if (in == nullptr) break;
    if ((in->pc >> lineShift_) != line) {
      next = in->pc >> lineShift_;
      break;
    }
  }
  const MemResult r = memory_.prefetchCode(core_, ThreadId{t}, th.asid, next << lineShift_, now);
  if (r.level == MemLevel::L1) return;  // the trace cache holds it: nothing to read
  th.streamLine = next;
  th.streamReady = r.ready;
  th.streamLevel = r.level;
}

std::uint32_t FrontEnd::fetchWrongPath(std::uint32_t t, std::uint32_t budget, Cycle now) {
  // No I-cache access (chosen): the code walked from the table was fetched lately and the synthetic uops have no
  // addresses; the trace cache / decoders deliver them at the thread's fetch slot like any other uops. A taken branch
  // among them does not end the fetch block (chosen: a trace-cache line runs on past taken branches).
  ThreadContext& th = threads_[t];
  WrongPathState& wp = th.wrongPath;
  std::uint32_t got = 0;
  while (got < budget && th.pipeCount() + wp.pipeCount() < pipeCapacity_) {
    wp.fetchOne(now + frontendDepth_);
    ++th.stats.wrongPathFetched;
    const WrongPathUop& u = wp.at(wp.tail - 1);
    if (u.fromCode) ++th.stats.wrongPathFromCode;
    ++got;
    // A microcoded instruction on the wrong path (sysbench's loop runs into DIV r64, 36 uops) comes from the
    // microcode sequencer as on the right path: the thread's fetch is held while it streams. It stays one uop in the
    // queues (chosen: a wrong-path uop has one ring slot; its other uops' ROB and IQ entries are not modelled).
    if (const std::uint32_t hold = wrongPathMicrocodeCycles_[static_cast<int>(u.op)]; hold != 0) {
      holdForMicrocode(th, hold, now);
      break;
    }
  }
  return got;
}

bool FrontEnd::squashResolvedWrongPaths(Cycle now) {
  bool changed = false;
  earliestResolve_ = Cycle::never();
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    ThreadContext& th = threads_[t];
    if (!th.waitingBranch) continue;
    if (th.wrongPath.resolveAt > now) {
      earliestResolve_ = std::min(earliestResolve_, th.wrongPath.resolveAt);
      continue;
    }
    const Cycle redirect = th.wrongPath.resolveAt + mispredictPenalty_;
    th.wrongPath.squash(t, queues_);
    th.wrongPath.resolveAt = Cycle::never();
    th.waitingBranch = false;
    th.fetchBlock = FetchBlock::Mispredict;
    th.fetchResumeAt = redirect;  // the right path: the result + mispredict_penalty, as without a wrong path
    th.microcodeSlots = 0;        // a wrong-path microcode sequence ends with its path
    changed = true;
  }
  return changed;
}

inline Cycle FrontEnd::pipeHeadArrival(std::uint32_t t) const {
  const ThreadContext& th = threads_[t];
  if (th.state != ThreadState::Running) return Cycle::never();
  if (th.enteredSeq < th.cursor->fetchSeq()) return th.front[th.enteredSeq.value & th.frontMask].availableAt;
  // Wrong-path uops follow the real ones in order (they were fetched after the mispredicted branch).
  const WrongPathState& wp = th.wrongPath;
  return wp.entered < wp.tail ? wp.at(wp.entered).availableAt : Cycle::never();
}

inline bool FrontEnd::enterUopQueue(std::uint32_t t) {
  SharedCapacity& uopq = queues_[QueueKind::UopQueue];
  ThreadContext& th = threads_[t];
  if (th.enteredSeq < th.cursor->fetchSeq()) {
    // The uop queue holds uops (uopwindow): an instruction takes one entry per fused-domain uop. A microcode
    // sequence streams through from the sequencer, so it never needs more at once than the thread is guaranteed
    // (chosen, as the issue queue: SharedCapacity::guaranteed).
    FrontEntry& fe = th.front[th.enteredSeq.value & th.frontMask];
    const std::uint32_t slots = std::max<std::uint32_t>(1, std::min<std::uint32_t>(fe.plan.fused, uopq.guaranteed(t)));
    if (uopq.check(t, slots) != CapacityVerdict::Ok) return false;
    uopq.take(t, slots);
    fe.uopqHeld = static_cast<std::uint8_t>(slots);
    ++th.enteredSeq;
    return true;
  }
  if (uopq.check(t) != CapacityVerdict::Ok) return false;
  uopq.take(t);
  ++th.wrongPath.entered;
  return true;
}

bool FrontEnd::deliver(Cycle now) {
  // The front end is one pipeline feeding one uop queue: what it fetched first reaches the queue first. So the
  // instructions at the end of the threads' pipes enter in fetch order (the earliest availableAt first), and a thread
  // whose next one does not fit is done for the cycle (its younger ones stay behind it). In a partitioned or
  // replicated queue the order changes nothing; in a shared one each free entry goes to the thread that fetched
  // first, so the fetch policy, never the thread's number, decides the threads' shares (chosen: Marr et al. 2002
  // describe the Pentium 4's queue as partitioned, and no shared one). Served by number instead, the lower thread
  // would take every entry the other frees and shut it out of a full queue for good. Threads fetched in the same
  // cycle (fetch_threads > 1) take turns.
  if (deliveryOrderFree_) {
    // No thread's entries can be taken by another: each fills what it may in turn, the same result in less time.
    bool moved = false;
    for (std::uint32_t t = 0; t < threadCount_; ++t) {
      while (pipeHeadArrival(t) <= now && enterUopQueue(t)) moved = true;
    }
    return moved;
  }
  std::array<Cycle, kMaxThreads> arrived;  // when each thread's next instruction reached the end of its pipe
  for (std::uint32_t t = 0; t < threadCount_; ++t) arrived[t] = pipeHeadArrival(t);
  bool moved = false;
  for (;;) {
    std::uint32_t t = threadCount_;
    Cycle first = now + 1;  // only what has arrived by now
    for (std::uint32_t k = 0, u = deliverTieNext_; k < threadCount_; ++k, u = u + 1 == threadCount_ ? 0 : u + 1) {
      if (arrived[u] < first) {
        first = arrived[u];
        t = u;
      }
    }
    if (t == threadCount_) break;
    if (!enterUopQueue(t)) {
      arrived[t] = Cycle::never();  // its younger instructions stay behind it this cycle
      continue;
    }
    arrived[t] = pipeHeadArrival(t);
    deliverTieNext_ = t + 1 == threadCount_ ? 0 : t + 1;
    moved = true;
  }
  return moved;
}


void FrontEnd::mispredictResolved(std::uint32_t thread, const Uop& branch, Cycle done) {
  ThreadContext& th = threads_[thread];
  if (th.waitingBranch && th.waitingBranchSeq == branch.seq) {
    ThreadStats& s = th.stats;
    ++s.mispredictsResolved;
    // readyAt: its operands (never before its rename + 1); done: its result, when the mispredict is known.
    const Cycle fetched = th.waitingBranchFetchedAt;
    const Cycle renamed = std::max(th.waitingBranchRenamedAt, fetched), ready = std::max(branch.readyAt, renamed);
    s.mispredictFetchToRename += renamed - fetched;
    s.mispredictRenameToReady += ready - renamed;
    s.mispredictReadyToResolve += done > ready ? done - ready : 0;
    ++s.mispredictResolveHistogram[resolveBucket(std::max(done, ready) - fetched)];
    if (wrongPath_) {
      // The wrong path ends when the branch's result is known (resolveWrongPaths squashes it at `done`): an Intel
      // core checks a branch when it executes and clears the younger uops then, without waiting for retirement.
      // mispredict_penalty is the refill that follows (front-end stages beyond frontend_depth); in those cycles the
      // real front end already carries the right path, not more wrong path, so the right path's first fetch is
      // done + mispredict_penalty, exactly as without a wrong path.
      th.wrongPath.resolveAt = done;
      earliestResolve_ = std::min(earliestResolve_, done);
      return;
    }
    th.waitingBranch = false;
    th.fetchBlock = FetchBlock::Mispredict;
    th.fetchResumeAt = done + mispredictPenalty_;
    th.microcodeSlots = 0;
  }
}

void FrontEnd::visitState(StateIo& io) {
  io(predictor_, decodeNext_, deliverTieNext_, earliestResolve_);
  policy_->visitState(io);
}

}  // namespace smtlab
