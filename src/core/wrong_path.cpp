#include "smtlab/core/wrong_path.hpp"

#include "smtlab/core/stage_ports.hpp"

namespace smtlab {

void WrongPathState::allocate(std::uint32_t capacity) {
  ring.assign(capacity, WrongPathUop{});
  mask = capacity - 1;
  reset();
}

void WrongPathState::reset() {
  head = renamed = entered = tail = 0;
  ++episode;
  unissued = 0;
  sinceBranch = 0;
  resolveAt = Cycle::never();
  mix.fill(CodeOp{});  // chosen: before any history, a wrong path is simple integer work without operands
  mixNext = 0;
  code.reset();
  walkPc = 0;
  renameMap.fill(0);
}

void WrongPathState::fetchOne(Cycle availableAt) {
  WrongPathUop& u = at(tail++);
  u.availableAt = availableAt;
  u.age = 0;
  u.issued = false;
  u.doneAt = Cycle::never();
  u.producers = 0;
  u.parkedConsumers = kNoParked;  // a new uop in this slot: nothing waits for it yet
  const RecentCode::Entry* e = walkPc != 0 ? code.find(walkPc) : nullptr;
  const CodeOp& op = e != nullptr ? e->code : mix[(mixNext + sinceBranch) % kWrongPathMix];
  ++sinceBranch;
  u.fromCode = e != nullptr;
  u.op = op.op;
  u.srcRegs = op.src;
  u.dstRegs = op.dst;
  // Off the known code, the rest of this wrong path is synthetic.
  walkPc = e != nullptr ? RecentCode::successor(*e) : 0;
}

void WrongPathState::squash(std::uint32_t t, CoreQueues& queues) {
  if (queued() != 0) queues[QueueKind::UopQueue].release(t, queued());
  if (inRob() != 0) queues[QueueKind::Rob].release(t, inRob());
  if (unissued != 0) queues[QueueKind::Iq].release(t, unissued);
  unissued = 0;
  // Scheduler entries of squashed uops still name their ring slots: the scheduler drops them because a slot that is
  // used again gets a new rename age, and the index of a squashed uop is below `head`.
  head = renamed = entered = tail;
  ++episode;
  sinceBranch = 0;
  walkPc = 0;
}

}  // namespace smtlab
