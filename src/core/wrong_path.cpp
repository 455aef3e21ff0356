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
  unissued = 0;
  sinceBranch = 0;
  resolveAt = Cycle::never();
  mix.fill(OpClass::Int);  // chosen: before any history, a wrong path is simple integer work
  mixNext = 0;
}

void WrongPathState::fetchOne(Cycle availableAt) {
  WrongPathUop& u = at(tail++);
  u.availableAt = availableAt;
  u.age = 0;
  u.op = mix[(mixNext + sinceBranch++) % kWrongPathMix];
  u.issued = false;
}

void WrongPathState::squash(std::uint32_t t, CoreQueues& queues) {
  if (queued() != 0) queues[QueueKind::UopQueue].release(t, queued());
  if (inRob() != 0) queues[QueueKind::Rob].release(t, inRob());
  if (unissued != 0) queues[QueueKind::Iq].release(t, unissued);
  unissued = 0;
  // Scheduler entries of squashed uops still name their ring slots: the scheduler drops them because a slot that is
  // used again gets a new rename age, and the index of a squashed uop is below `head`.
  head = renamed = entered = tail;
  sinceBranch = 0;
}

}  // namespace smtlab
