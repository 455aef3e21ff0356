#include "smtlab/core/rename_allocate.hpp"

#include <algorithm>

namespace smtlab {

namespace {
CpiCause stallCause(CapacityVerdict v, CpiCause full, CpiCause partition) {
  return v == CapacityVerdict::StructureFull ? full : partition;
}
}  // namespace

RenameAllocate::RenameAllocate(const Config& config, std::span<ThreadContext> threads, CoreQueues& queues)
    : threadCount_(config.core.threads),
      renameWidth_(config.core.rename_width),
      stackEngine_(config.core.stack_engine),
      registersLimited_(queues.registers.enabled()),
      threads_(threads),
      queues_(queues),
      policy_(makeThreadChoice(config.core.rename_policy)),
      policyNeedsCounters_(policy_->needsCounters()),
      roundRobin_(config.core.rename_policy == ThreadChoice::RoundRobin),
      candidates_(config.core.threads),
      order_(config.core.threads),
      decoder_(config.core),
      renameDebt_(config.core.threads, 0) {
  dispatched_.reserve(renameWidth_);
}

CpiCause RenameAllocate::blockCause(std::uint32_t t) const {
  if (!hasRenamable(t)) return CpiCause::Base;
  const ThreadContext& th = threads_[t];
  if (th.robTail == th.enteredSeq) {
    // A wrong-path uop is next: one ROB and one issue-queue entry (it is one uop), no LQ/SQ entry, no register.
    CapacityVerdict v = queues_[QueueKind::Rob].check(t);
    if (v != CapacityVerdict::Ok) return stallCause(v, CpiCause::RobFull, CpiCause::RobPartition);
    v = queues_[QueueKind::Iq].check(t);
    return v == CapacityVerdict::Ok ? CpiCause::Base : stallCause(v, CpiCause::IqFull, CpiCause::IqPartition);
  }
  const Instr& in = th.cursor->at(th.robTail);
  const UopPlan& plan = planOf(t, th.robTail);
  // The ROB holds uops (uopwindow): one entry per fused-domain uop.
  CapacityVerdict v = queues_[QueueKind::Rob].check(t, robEntriesFor(t, plan));
  if (v != CapacityVerdict::Ok) return stallCause(v, CpiCause::RobFull, CpiCause::RobPartition);
  v = queues_[QueueKind::Iq].check(t, iqEntriesFor(t, plan));
  if (v != CapacityVerdict::Ok) return stallCause(v, CpiCause::IqFull, CpiCause::IqPartition);
  if (plan.load) {
    v = queues_[QueueKind::Lq].check(t);
    if (v != CapacityVerdict::Ok) return stallCause(v, CpiCause::LqFull, CpiCause::LqPartition);
  }
  if (plan.storeAddress) {
    v = queues_[QueueKind::Sq].check(t);
    if (v != CapacityVerdict::Ok) return stallCause(v, CpiCause::SqFull, CpiCause::SqPartition);
  }
  if (registersLimited_ && !queues_.registers.roomForAny(t)) return registerBlock(t, in);
  return CpiCause::Base;
}

bool RenameAllocate::canAllocate(std::uint32_t t) const {
  const ThreadContext& th = threads_[t];
  if (th.state != ThreadState::Running) return false;
  const SharedCapacity& rob = queues_[QueueKind::Rob];
  const SharedCapacity& iq = queues_[QueueKind::Iq];
  if (th.robTail == th.enteredSeq) {  // a wrong-path uop, if any, is next (blockCause says what it takes)
    return th.wrongPath.renamed != th.wrongPath.entered && rob.fits(t) && iq.fits(t);
  }
  const UopPlan& plan = planOf(t, th.robTail);
  if (!rob.fits(t, robEntriesFor(t, plan)) || !iq.fits(t, iqEntriesFor(t, plan))) return false;
  if (plan.load && !queues_[QueueKind::Lq].fits(t)) return false;
  if (plan.storeAddress && !queues_[QueueKind::Sq].fits(t)) return false;
  if (registersLimited_ && !queues_.registers.roomForAny(t)) {
    return registerBlock(t, th.cursor->at(th.robTail)) == CpiCause::Base;
  }
  return true;
}

const UopPlan& RenameAllocate::decodeInto(std::uint32_t t, SeqNum seq) const {
  ThreadContext& th = threads_[t];
  UopPlan& plan = th.front[seq.value & th.frontMask].plan;
  plan = decoder_.decode(th.cursor->at(seq));
  return plan;
}

// Out of line: reached only when a register file is nearly full for the thread.
CpiCause RenameAllocate::registerBlock(std::uint32_t t, const Instr& in) const {
  const RegNeed need = registersNeeded(in, stackEngine_ && isStackUpdate(in));
  return queues_.registers.check(t, need) == CapacityVerdict::Ok ? CpiCause::Base : CpiCause::Regs;
}

bool RenameAllocate::tick(Cycle now, bool draining) {
  if (draining) return false;
  // A thread still passing an earlier instruction's uops through rename (renameDebt_) takes its turn for them.
  // (hasRenamable first, inline: a halted sibling or an empty uop queue is not asked the costlier question.)
  // Every allocation takes at least one ROB and one issue-queue entry: a full one, the usual reason a memory-bound
  // thread cannot rename, is told inline before the whole question (canAllocate, out of line; a sibling that cannot
  // rename was asked it at every tick).
  const SharedCapacity& rob = queues_[QueueKind::Rob];
  const SharedCapacity& iq = queues_[QueueKind::Iq];
  auto mayAllocate = [&](std::uint32_t t) { return rob.fits(t) && iq.fits(t) && canAllocate(t); };
  auto wantsTurn = [&](std::uint32_t t) { return renameDebt_[t] != 0 || (hasRenamable(t) && mayAllocate(t)); };
  std::uint32_t t = threadCount_;
  if (roundRobin_) {
    for (std::uint32_t i = 1; i <= threadCount_ && t == threadCount_; ++i) {
      const std::uint32_t u = (lastServed_ + i) % threadCount_;
      if (wantsTurn(u)) t = u;
    }
    if (t == threadCount_) return false;
    lastServed_ = t;
  } else {
    t = chooseByPolicy(now);
    if (t == threadCount_) return false;
  }
  // rename_width counts fused-domain uops (uopwindow; Hinton et al. 2001: the allocator takes 3 uops per clock).
  // Rename is uop-granular: an instruction whose uops do not fit in what is left of the cycle starts now and its
  // remaining uops take the thread's next turns (chosen: the instruction counts as renamed at once, so its first uops'
  // dependents are not delayed; the bandwidth its uops use is exact: rename_width uops per turn in the long run).
  std::uint32_t budget = renameWidth_;
  const std::uint32_t paid = std::min(budget, renameDebt_[t]);
  renameDebt_[t] -= paid;
  budget -= paid;
  // A thread chosen without debt was chosen because canAllocate(t) held, and nothing has changed since: not asked
  // again (it is the costliest question of this stage).
  bool known = paid == 0;
  while (budget > 0 && (known || mayAllocate(t))) {
    known = false;
    const std::uint32_t slots = renameOne(t, now);
    const std::uint32_t thisCycle = std::min(budget, slots);
    budget -= thisCycle;
    renameDebt_[t] = slots - thisCycle;
  }
  return true;
}

std::uint32_t RenameAllocate::chooseByPolicy(Cycle now) {
  const SharedCapacity& uopq = queues_[QueueKind::UopQueue];
  const SharedCapacity& iq = queues_[QueueKind::Iq];
  bool any = false;
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    ThreadCandidate& c = candidates_[t];
    c.eligible = renameDebt_[t] != 0 || canAllocate(t);
    if (!c.eligible) continue;
    any = true;
    if (!policyNeedsCounters_) continue;
    const ThreadContext& th = threads_[t];
    c.frontEnd = th.pipeCount() + uopq.used(t) + iq.used(t);
    if (!hasRenamable(t)) {
      c.oldest = 0;  // paying rename debt: its instruction is older than anything queued
    } else {
      c.oldest = th.robTail != th.enteredSeq
                     ? th.front[th.robTail.value & th.frontMask].availableAt.value  // fetch order
                     : th.wrongPath.at(th.wrongPath.renamed).availableAt.value;
    }
  }
  if (!any) return threadCount_;
  policy_->choose(candidates_.data(), threadCount_, now, order_.data());
  return order_[0];
}

void RenameAllocate::renameWrongPath(std::uint32_t t, Cycle now) {
  ThreadContext& th = threads_[t];
  WrongPathState& wp = th.wrongPath;
  queues_[QueueKind::UopQueue].release(t);
  queues_[QueueKind::Rob].take(t);
  queues_[QueueKind::Iq].take(t);
  ++renamed_;
  const std::uint64_t index = wp.renamed++;
  WrongPathUop& u = wp.at(index);
  u.age = ++ageCounter_;
  ++wp.unissued;
  // Its sources are renamed like a real instruction's: the youngest older wrong-path writer, else the real rename
  // map as of the mispredicted branch (every real instruction before it is renamed first). The scheduler reads the
  // producers' results when it first tries the uop, the next cycle, and parks it until a producer still unissued
  // then issues.
  const SeqNum oldestReal = th.cursor->retireSeq();
  u.producers = 0;
  for (const RegId r : u.srcRegs) {
    if (r == kNoReg) continue;
    const std::uint64_t w = wp.renameMap[r];
    if (w != 0 && w - 1 >= wp.head) {
      u.producer[u.producers] = UopRef::wrongPath(w - 1);
      u.producerAge[u.producers++] = wp.at(w - 1).age;
      continue;
    }
    const SeqNum p = th.renameMap[r];
    if (p == kNoProducer || p < oldestReal) continue;  // value already in the register file
    u.producer[u.producers] = UopRef::real(p);
    u.producerAge[u.producers++] = th.robSlot(p).age;
  }
  for (const RegId d : u.dstRegs) {
    if (d != kNoReg) wp.renameMap[d] = index + 1;
  }
  dispatched_.push_back({now + 1, u.age, t, UopRef::wrongPath(index)});
}

std::uint32_t RenameAllocate::renameOne(std::uint32_t t, Cycle now) {
  ThreadContext& th = threads_[t];
  if (th.robTail == th.enteredSeq) {
    renameWrongPath(t, now);
    return 1;
  }
  const SeqNum seq = th.robTail;
  const Instr& in = th.cursor->at(seq);
  const FrontEntry& fe = th.front[seq.value & th.frontMask];

  const UopPlan& plan = planOf(t, seq);
  queues_[QueueKind::UopQueue].release(t, fe.uopqHeld);
  const std::uint32_t robEntries = robEntriesFor(t, plan);
  queues_[QueueKind::Rob].take(t, robEntries);
  const std::uint32_t iqEntries = iqEntriesFor(t, plan);
  queues_[QueueKind::Iq].take(t, iqEntries);
  const bool hasLoad = plan.load;
  const bool hasStore = plan.storeAddress;
  if (hasLoad) queues_[QueueKind::Lq].take(t);
  if (hasStore) queues_[QueueKind::Sq].take(t);

  ++renamed_;
  Uop& u = th.robSlot(seq);
  u.instr = &in;
  u.seq = seq;
  u.age = ++ageCounter_;
  u.readyAt = now + 1;
  u.scheduledAt = u.readyAt;
  u.doneAt = Cycle::never();
  u.depHead = kNoDep;
  u.pendingSrcs = 0;
  u.fu = plan.opFu;
  u.level = MemLevel::L1;
  u.valid = true;
  u.issued = false;
  u.mispredicted = fe.mispredicted;
  if (fe.mispredicted) th.waitingBranchRenamedAt = now;  // fetch stops after a mispredict: it is the waiting branch
  u.btbMiss = fe.btbMiss;
  u.hasLoad = hasLoad;
  u.hasStore = hasStore;
  u.iqHeld = static_cast<std::uint8_t>(iqEntries);
  u.helpersLeft = plan.helpers;
  u.loadLeft = plan.load;
  u.opLeft = plan.op;
  u.staLeft = plan.storeAddress;
  u.stdLeft = plan.storeData;
  u.hasOp = plan.op;
  u.opNeedsPort = plan.opNeedsPort;
  u.opClass = plan.opClass;
  u.loadDataAt = Cycle{0};
  u.opDoneAt = Cycle{0};
  u.partsDoneAt = Cycle{0};
  u.loadIssuedAt = Cycle{0};
  u.robHeld = static_cast<std::uint8_t>(robEntries);
  // Stack engine (Intel optimization manual 248966, "Stack Pointer Tracker"; Agner Fog, The microarchitecture of
  // Intel, AMD and VIA CPUs, "Stack engine", from the Pentium M on): push/pop/call/ret have their stack-pointer
  // update done by an adder in the decoder, which keeps the offset from the last explicit value. Such an instruction
  // neither writes the stack pointer in the rename map nor takes a register for it; it reads the stack pointer's last
  // explicit value (base + offset), so consecutive stack operations do not form a chain. A later instruction that
  // names the stack pointer explicitly while the offset is not zero gets a sync uop first (one cycle).
  const bool stackUpdate = stackEngine_ && isStackUpdate(in);
  bool stackSync = false;
  if (stackEngine_) {
    if (stackUpdate) {
      th.stackDelta = true;
    } else if (th.stackDelta && (readsReg(in, kStackPointerReg) || writesReg(in, kStackPointerReg))) {
      stackSync = readsReg(in, kStackPointerReg);  // an explicit write just replaces the value: no sync needed
      th.stackDelta = false;
    }
  }
  u.stackUpdate = stackUpdate;
  u.stackDelta = th.stackDelta;
  RegNeed need;  // unlimited files: nothing to count, retire and squash then release nothing
  if (registersLimited_) {
    need = registersNeeded(in, stackUpdate);
    queues_.registers.take(t, need);
  }
  u.intRegs = need.intRegs;
  u.fpRegs = need.fpRegs;

  const SeqNum oldest = th.cursor->retireSeq();
  const std::uint32_t slot = static_cast<std::uint32_t>(seq.value & th.robMask);
  for (int k = 0; k < kMaxSrcRegs; ++k) {
    const RegId r = in.src[k];
    if (r == kNoReg) continue;
    const SeqNum p = th.renameMap[r];
    if (p == kNoProducer || p < oldest) continue;  // value already in the register file
    Uop& producer = th.robSlot(p);
    if (producer.issued) {
      u.readyAt = std::max(u.readyAt, producer.doneAt);
      // Replay: until a missing load's hit time has passed, the scheduler still expects its data then.
      u.scheduledAt = std::max(u.scheduledAt, producer.consumersScheduledAt > now ? producer.consumersScheduledAt
                                                                                   : producer.doneAt);
    } else {
      const std::uint32_t node = slot * kMaxSrcRegs + static_cast<std::uint32_t>(k);
      th.depNext[node] = producer.depHead;
      producer.depHead = node;
      ++u.pendingSrcs;
    }
  }
  // The sync uop computes the stack pointer from the base and the offset, one ALU cycle before this instruction's
  // operands are ready (Agner Fog: "a stack synchronization uop"; chosen: counted from rename, since the base is
  // almost always retired long before).
  if (stackSync) u.readyAt = u.readyAt + 1;
  for (RegId d : in.dst) {
    if (d != kNoReg && !(stackUpdate && d == kStackPointerReg)) th.renameMap[d] = seq;
  }
  th.robTail = seq.next();
  // The front end delivered again: a fetch hold that has ended stops being the reason this thread waits.
  if (th.fetchResumeAt <= now) th.fetchBlock = FetchBlock::None;
  if (u.pendingSrcs == 0) dispatched_.push_back({u.scheduledAt, u.age, t, UopRef::real(seq)});
  return plan.fused;
}

void RenameAllocate::visitState(StateIo& io) {
  io(lastServed_, dispatched_, ageCounter_, renamed_, renameDebt_);
  policy_->visitState(io);
}

}  // namespace smtlab
