// Schedule and execute: renamed instructions wait until their operands are ready, then issue oldest first, up to
// issue_width per cycle and the count of each functional unit (a unit with an interval > 1 stays busy; a
// thread_interval keeps one thread's microcode sequences apart). A load goes to the load/store unit when it issues; a
// mispredicted branch tells the front end when it resolves. Consumers are woken through the per-thread dependency
// lists that rename built.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/replay.hpp"
#include "smtlab/core/stage_ports.hpp"
#include "smtlab/core/thread_context.hpp"

namespace smtlab {

// The functional unit an operation class executes on.
FuKind fuKindFor(OpClass op);

class Scheduler {
 public:
  Scheduler(const Config& config, std::span<ThreadContext> threads, CoreQueues& queues, ILoadStorePort& loadStore,
            IBranchResolutionPort& branches);

  // Takes renamed instructions whose operand ready times are known.
  void accept(const std::vector<WaitEntry>& entries) {
    for (const WaitEntry& e : entries) pushWaiting(e);
  }
  // Issues what is ready at `now`; true if anything issued.
  bool issue(Cycle now);
  // Lowers `next` to the earliest cycle after `now` at which something waiting here can issue.
  void earliestWake(Cycle now, Cycle& next) const;

  std::uint32_t latency(FuKind fu) const { return fus_[static_cast<int>(fu)].latency; }
  // Operations issued per unit class (FuKind order, then FuKind::None), for the energy model.
  const std::array<std::uint64_t, kFuKinds + 1>& issuedByUnit() const { return issuedByUnit_; }
  void resetStats() { issuedByUnit_.fill(0); }

 private:
  struct FuState {
    std::uint32_t count = 1;
    std::uint32_t latency = 1;
    std::uint32_t interval = 1;        // cycles a unit is busy per operation
    std::uint32_t threadInterval = 0;  // cycles between two operations of one thread (0 = no limit)
    std::uint32_t usedThisCycle = 0;
    std::vector<Cycle> busyUntil;                 // per unit, when interval > 1
    std::array<Cycle, kMaxThreads> threadNext{};  // per thread, when threadInterval > 0
  };

  void pushWaiting(const WaitEntry& e);
  void parkLoad(const WaitEntry& e);
  bool fuAvailable(FuKind fu, std::uint32_t thread, Cycle now) const;
  void fuTake(FuKind fu, std::uint32_t thread, Cycle now);
  void issueOne(Uop& uop, std::uint32_t t, Cycle now);
  // Wakes the consumers of `producer`, which the scheduler expects at `scheduled` (its result, or the L1-hit time of
  // a missing load under replay).
  void wakeDependents(std::uint32_t t, Uop& producer, Cycle scheduled);
  // A uop issued before its operands arrived (replay): it took its slot and unit and comes back after the loop.
  void replayOne(const WaitEntry& e, Cycle now);
  enum class WrongPathIssue : std::uint8_t { Squashed, Issued, Waits };
  WrongPathIssue issueWrongPath(const WaitEntry& e, bool slotFree, Cycle now);

  const std::uint32_t threadCount_;
  const std::uint32_t issueWidth_;
  std::span<ThreadContext> threads_;
  CoreQueues& queues_;
  ILoadStorePort& loadStore_;
  IBranchResolutionPort& branches_;
  std::array<FuState, kFuKinds> fus_;
  const ReplayLoop replay_;
  std::vector<WaitEntry> waiting_;  // min-heap by readyAt (operands known ready at that cycle)
  std::vector<WaitEntry> ready_;    // ready now, oldest first, waiting for a unit or issue slot
  // Memory ordering (issue 10 §3): per thread, loads waiting for an older store's address; they go back to waiting_
  // when a store of their thread issues (instead of being asked every cycle, which would stop event skipping).
  std::vector<std::vector<WaitEntry>> parked_;
  std::vector<WaitEntry> woken_, wokenNow_;  // parked loads whose thread issued a store in this cycle
  Cycle fuCycle_ = Cycle::never();
  std::array<std::uint64_t, kFuKinds + 1> issuedByUnit_{};
};

}  // namespace smtlab
