// Wrong-path uops (issue 10 §4): after a mispredicted branch is fetched, its thread keeps fetching, renaming and
// issuing uops until the branch resolves, and these take shared slots (fetch, uop queue, rename, ROB and IQ share,
// issue slots and functional units) from the sibling; at resolution they are squashed and never retire.
//
// A trace holds only the correct path, so the wrong path is synthetic (chosen, docs/model.md "Wrong path"): uop k of
// a wrong path has the operation class of the thread's k-th most recent fetched instruction counted from the oldest
// of the last kWrongPathMix (the thread's own recent mix, replayed in order: deterministic, no seed needed). They
// have no register dependences (the trace has no wrong-path data flow: an upper bound on how fast they issue) and no
// memory addresses (a wrong-path load takes a load port but does not touch the caches; a store takes a store port
// but no store-queue entry), so they cannot pollute or prefetch. They never consume trace sequence numbers: they
// live in their own per-thread ring, allocated once.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/trace/record.hpp"

namespace smtlab {

struct CoreQueues;

inline constexpr std::uint32_t kWrongPathMix = 32;  // recent instructions whose op classes a wrong path replays
// Marks a scheduler entry (WaitEntry::seq) as a wrong-path uop: the rest of the value indexes the thread's ring.
inline constexpr std::uint64_t kWrongPathTag = std::uint64_t{1} << 63;

struct WrongPathUop {
  Cycle availableAt{0};   // reaches the end of the front-end pipe
  std::uint64_t age = 0;  // rename age (the core-wide counter of RenameAllocate): tells this uop from a reused slot
  OpClass op = OpClass::Int;
  bool issued = false;
};

// One thread's wrong path. Ring positions only grow: [head, renamed) are in the ROB (of which `unissued` also in the
// IQ), [renamed, entered) in the uop queue, [entered, tail) in the front-end pipe.
struct WrongPathState {
  std::vector<WrongPathUop> ring;
  std::uint64_t mask = 0;
  std::uint64_t head = 0, renamed = 0, entered = 0, tail = 0;
  std::uint32_t unissued = 0;
  std::uint64_t sinceBranch = 0;       // wrong-path uops fetched since the mispredicted branch (indexes the mix)
  Cycle resolveAt = Cycle::never();    // the branch's redirect reaches fetch: its result + mispredict_penalty
  std::array<OpClass, kWrongPathMix> mix{};  // op classes of the last fetched instructions, a ring
  std::uint32_t mixNext = 0;

  void allocate(std::uint32_t capacity);  // a power of two: pipe + uop queue + ROB
  void reset();                           // nothing in flight, no history (a new trace)
  std::uint32_t pipeCount() const { return static_cast<std::uint32_t>(tail - entered); }
  std::uint32_t queued() const { return static_cast<std::uint32_t>(entered - renamed); }
  std::uint32_t inRob() const { return static_cast<std::uint32_t>(renamed - head); }
  bool empty() const { return head == tail; }
  WrongPathUop& at(std::uint64_t index) { return ring[index & mask]; }
  const WrongPathUop& at(std::uint64_t index) const { return ring[index & mask]; }
  // A real instruction was fetched: its op class joins the mix.
  void noteFetched(OpClass op) { mix[mixNext++ % kWrongPathMix] = op; }
  // Puts the next wrong-path uop into the front-end pipe; it can leave the pipe at `availableAt`.
  void fetchOne(Cycle availableAt);
  // Squashes every wrong-path uop of thread t, giving back its uop-queue, ROB and IQ entries (resolveAt stays: the
  // caller knows whether the branch survives).
  void squash(std::uint32_t t, CoreQueues& queues);
};

}  // namespace smtlab
