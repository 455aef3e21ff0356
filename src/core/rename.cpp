// Rename / allocate: takes instructions from the end of the front end, allocates ROB, issue queue, load and store
// queue entries (each through its SharedCapacity, so the sharing policy decides), and links every source operand to
// its in-flight producer. One thread per cycle; threads alternate and a thread that cannot allocate yields its turn.
#include <algorithm>

#include "smtlab/core/core.hpp"

namespace smtlab {

FuKind fuKindFor(OpClass op);  // issue.cpp

namespace {
CpiCause stallCause(CapacityVerdict v, CpiCause full, CpiCause partition) {
  return v == CapacityVerdict::StructureFull ? full : partition;
}
}  // namespace

bool Core::hasRenamable(const ThreadContext& th, Cycle now) const {
  (void)now;
  return th.state == ThreadState::Running && th.robTail != th.enteredSeq;
}

CpiCause Core::renameBlock(const ThreadContext& th, Cycle now) const {
  if (!hasRenamable(th, now)) return CpiCause::Base;
  const std::uint32_t t = static_cast<std::uint32_t>(&th - threads_.data());
  const Instr& in = th.cursor->at(th.robTail);
  CapacityVerdict v = queues_[static_cast<int>(QueueKind::Rob)].check(t);
  if (v != CapacityVerdict::Ok) return stallCause(v, CpiCause::RobFull, CpiCause::RobPartition);
  v = queues_[static_cast<int>(QueueKind::Iq)].check(t);
  if (v != CapacityVerdict::Ok) return stallCause(v, CpiCause::IqFull, CpiCause::IqPartition);
  if (in.hasLoad()) {
    v = queues_[static_cast<int>(QueueKind::Lq)].check(t);
    if (v != CapacityVerdict::Ok) return stallCause(v, CpiCause::LqFull, CpiCause::LqPartition);
  }
  if (in.hasStore()) {
    v = queues_[static_cast<int>(QueueKind::Sq)].check(t);
    if (v != CapacityVerdict::Ok) return stallCause(v, CpiCause::SqFull, CpiCause::SqPartition);
  }
  return CpiCause::Base;
}

bool Core::enterUopQueue(Cycle now) {
  SharedCapacity& uopq = queues_[static_cast<int>(QueueKind::UopQueue)];
  bool moved = false;
  for (std::uint32_t t = 0; t < threadCount_; ++t) {
    ThreadContext& th = threads_[t];
    if (th.state != ThreadState::Running) continue;
    const std::uint64_t end = th.cursor->fetchSeq();
    while (th.enteredSeq < end && th.front[th.enteredSeq & th.frontMask].availableAt <= now &&
           uopq.check(t) == CapacityVerdict::Ok) {
      uopq.take(t);
      ++th.enteredSeq;
      moved = true;
    }
  }
  return moved;
}

bool Core::renameStage(Cycle now) {
  if (draining(now)) return false;
  for (std::uint32_t i = 1; i <= threadCount_; ++i) {
    const std::uint32_t t = (renameTurn_ + i) % threadCount_;
    ThreadContext& th = threads_[t];
    if (!canRenameOne(th, now)) continue;
    std::uint32_t renamed = 0;
    while (renamed < renameWidth_ && canRenameOne(th, now)) {
      renameOne(t, now);
      ++renamed;
    }
    renameTurn_ = t;
    return true;
  }
  return false;
}

void Core::renameOne(std::uint32_t t, Cycle now) {
  ThreadContext& th = threads_[t];
  const std::uint64_t seq = th.robTail;
  const Instr& in = th.cursor->at(seq);
  const FrontEntry& fe = th.front[seq & th.frontMask];

  queues_[static_cast<int>(QueueKind::UopQueue)].release(t);
  queues_[static_cast<int>(QueueKind::Rob)].take(t);
  queues_[static_cast<int>(QueueKind::Iq)].take(t);
  const bool hasLoad = in.hasLoad();
  const bool hasStore = in.hasStore();
  if (hasLoad) queues_[static_cast<int>(QueueKind::Lq)].take(t);
  if (hasStore) queues_[static_cast<int>(QueueKind::Sq)].take(t);

  ++renamed_;
  Uop& u = th.robSlot(seq);
  u.instr = &in;
  u.seq = seq;
  u.age = ++ageCounter_;
  u.readyAt = now + 1;
  u.doneAt = Cycle::never();
  u.depHead = kNoDep;
  u.pendingSrcs = 0;
  u.fu = fuKindFor(in.op);
  u.level = MemLevel::L1;
  u.valid = true;
  u.issued = false;
  u.mispredicted = fe.mispredicted;
  u.hasLoad = hasLoad;
  u.hasStore = hasStore;

  const std::uint64_t oldest = th.cursor->retireSeq();
  const std::uint32_t slot = static_cast<std::uint32_t>(seq & th.robMask);
  for (int k = 0; k < kMaxSrcRegs; ++k) {
    const RegId r = in.src[k];
    if (r == kNoReg) continue;
    const std::uint64_t p = th.renameMap[r];
    if (p == 0 || p - 1 < oldest) continue;  // value already in the register file
    Uop& producer = th.robSlot(p - 1);
    if (producer.issued) {
      u.readyAt = std::max(u.readyAt, producer.doneAt);
    } else {
      const std::uint32_t node = slot * kMaxSrcRegs + static_cast<std::uint32_t>(k);
      th.depNext[node] = producer.depHead;
      producer.depHead = node;
      ++u.pendingSrcs;
    }
  }
  for (RegId d : in.dst) {
    if (d != kNoReg) th.renameMap[d] = seq + 1;
  }
  th.robTail = seq + 1;
  // The front end delivered again: a fetch hold that has ended stops being the reason this thread waits.
  if (th.fetchResumeAt <= now) th.fetchBlock = FetchBlock::None;
  if (u.pendingSrcs == 0) pushWaiting({u.readyAt, u.age, t, seq});
}

}  // namespace smtlab
