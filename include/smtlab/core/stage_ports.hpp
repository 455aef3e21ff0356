// The small interfaces through which the stage units of a core see their neighbours (and through which unit tests
// put stubs in their place). Each is called at most once per instruction, and only where the instruction needs it
// (a load, a store, a mispredicted branch).
#pragma once

#include <array>
#include <cstdint>

#include "smtlab/common/types.hpp"
#include "smtlab/core/capacity.hpp"
#include "smtlab/core/core_stats.hpp"
#include "smtlab/core/register_file.hpp"

namespace smtlab {

struct Uop;

// The capacity objects of a core's queues (owned by Core, used by the stages that take and free entries).
struct CoreQueues {
  std::array<SharedCapacity, kQueueKinds> byKind;
  RegisterFiles registers;  // physical register files, guarded like the queues
  void visitState(StateIo& io) { io(byKind, registers); }
  SharedCapacity& operator[](QueueKind q) { return byKind[static_cast<int>(q)]; }
  const SharedCapacity& operator[](QueueKind q) const { return byKind[static_cast<int>(q)]; }
};

// The load/store unit as the scheduler and retire see it.
class ILoadStorePort {
 public:
  virtual ~ILoadStorePort() = default;
  // An issued load accesses memory: returns the cycle its data is ready and sets uop.level.
  virtual Cycle executeLoad(std::uint32_t thread, Uop& uop, Cycle now) = 0;
  // A memory instruction retires: a store writes the cache, and its load/store queue entries are freed.
  virtual void retireMemory(std::uint32_t thread, const Uop& uop, Cycle now) = 0;
  // Memory ordering, asked before a ready load issues: `now` if it may go, else the cycle at which to
  // ask again (it waits for an older store: a partial overlap, a 4K alias), or Cycle::never() to ask again when a
  // store of the thread has issued (it waits for an older store's unknown address).
  virtual Cycle loadMayIssueAt(std::uint32_t /*thread*/, const Uop& /*load*/, Cycle now) { return now; }
  // A store's address uop issued (its address is known from now on): younger loads that read too early are flushed.
  virtual void executeStore(std::uint32_t /*thread*/, const Uop& /*store*/, Cycle /*now*/) {}
  // A store's data uop issued: its data can be forwarded from `dataAt` on.
  virtual void storeDataReady(std::uint32_t /*thread*/, const Uop& /*store*/, Cycle /*dataAt*/) {}
};

// The front end as the scheduler sees it: a mispredicted branch has executed (its result is ready at `done`).
class IBranchResolutionPort {
 public:
  virtual ~IBranchResolutionPort() = default;
  virtual void mispredictResolved(std::uint32_t thread, const Uop& branch, Cycle done) = 0;
};

}  // namespace smtlab
