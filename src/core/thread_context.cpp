#include "smtlab/core/thread_context.hpp"

#include <bit>

namespace smtlab {

void ThreadContext::allocate(std::uint32_t robCapacity, std::uint32_t frontCapacity, std::uint32_t loadQueueEntries,
                             ThreadBranchState branchState) {
  rob.resize(robCapacity);
  robMask = robCapacity - 1;
  depNext.assign(static_cast<std::size_t>(robCapacity) * kMaxSrcRegs, kNoDep);
  front.resize(frontCapacity);
  frontMask = frontCapacity - 1;
  branch = std::move(branchState);
  missDone.reserve(loadQueueEntries);
  wrongPath.allocate(std::bit_ceil(robCapacity + frontCapacity));  // pipe + uop queue + ROB share at most
}

void ThreadContext::bind(std::shared_ptr<TraceCursor> trace, Asid space, Cycle now) {
  cursorOwner = std::move(trace);
  cursor = cursorOwner.get();
  cursor->reserve(rob.size() + front.size() + 256);
  asid = space;
  asidTag = space.value;
  renameMap.fill(kNoProducer);
  robTail = cursor->fetchSeq();
  enteredSeq = robTail;
  fetchResumeAt = now;
  fetchBlock = FetchBlock::None;
  waitingBranch = false;
  gatedUntil = now;
  gateAfter = SeqNum{0};
  lastFetchLine = ~Addr{0};
  building = false;
  streamLine = kNoStreamLine;
  microcodeSlots = 0;
  unresolvedBranches = 0;
  stackDelta = false;  // a task switch loads the stack pointer explicitly
  retiredStackDelta = false;
  missDone.clear();
  wrongPath.reset();
  state = ThreadState::Running;
}

void ThreadContext::visitState(StateIo& io) {
  io(state, asid, asidTag, front, enteredSeq, frontMask, fetchResumeAt, fetchBlock, waitingBranch, waitingBranchSeq,
     waitingBranchFetchedAt, waitingBranchRenamedAt, lastFetchLine, building, streamLine, streamReady, streamLevel,
     microcodeSlots, gatedUntil, gateAfter, renameMap);
  const std::uint64_t n = io.length(rob.size(), sizeof(Uop));
  if (io.reading()) rob.resize(static_cast<std::size_t>(n));
  for (Uop& u : rob) {
    const Instr* instr = u.instr;
    u.instr = nullptr;
    io.raw(&u, sizeof u);
    u.instr = io.reading() ? nullptr : instr;
  }
  io(robMask, robTail, depNext, unresolvedBranches, missDone, stackDelta, retiredStackDelta, branch, wrongPath,
     retireLimit, retiredThisCycle, lastRetire, stats, lastCause, lastGated, lastOccupancy);
}

}  // namespace smtlab
