// One physical core: an out-of-order pipeline shared by its hardware threads. Each cycle runs the stages in reverse
// order (retire, issue/execute, rename/allocate, fetch) so each stage sees the previous cycle's output. Queues are
// guarded by SharedCapacity objects (the sharing policy), fetch thread choice by an IFetchPolicy. When nothing can
// move before some later cycle the core says so, and the machine skips ahead.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/branch_predictor.hpp"
#include "smtlab/core/capacity.hpp"
#include "smtlab/core/fetch_policy.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/mem/memory_system.hpp"

namespace smtlab {

enum class CoreEventKind : std::uint8_t { SourceEnded, Mark, RetireLimit };
struct CoreEvent {
  CoreEventKind kind;
  std::uint32_t thread;
  std::uint32_t markId;
  Cycle cycle;
};

class Core {
 public:
  Core(CoreId id, const Config& config, MemorySystem& memory);

  // Runs one cycle. Afterwards nextWake() is the next cycle at which anything can change (now + 1 when busy).
  void tick(Cycle now);
  Cycle nextWake() const { return nextWake_; }
  // Charges the cycles up to `now` to the causes observed at the last tick (for skipped cycles and reports).
  void flushAccounting(Cycle now);

  void attach(std::uint32_t thread, std::shared_ptr<TraceCursor> cursor, Asid asid, Cycle now);
  // Squashes the thread's in-flight instructions, rewinds its cursor to the oldest unretired one and returns it.
  std::shared_ptr<TraceCursor> detach(std::uint32_t thread, Cycle now);
  // Starts the trace of a finished thread again (the same cursor), for runs longer than a trace.
  void restartFinished(std::uint32_t thread, Cycle now);

  // Zeroes the statistics of every thread and of the core (the pipeline state stays).
  void resetStats();
  std::vector<CoreEvent>& events() { return events_; }
  bool hasWork() const;
  CoreId id() const { return id_; }
  std::uint32_t threads() const { return threadCount_; }
  ThreadContext& thread(std::uint32_t t) { return threads_[t]; }
  const ThreadContext& thread(std::uint32_t t) const { return threads_[t]; }
  const SharedCapacity& queue(QueueKind q) const { return queues_[static_cast<int>(q)]; }
  std::uint64_t cyclesActive() const { return cyclesActive_; }
  // Instructions renamed and operations issued per unit class (FuKind order, then FuKind::None), for the energy model.
  std::uint64_t renamed() const { return renamed_; }
  const std::array<std::uint64_t, kFuKinds + 1>& issuedByUnit() const { return issuedByUnit_; }
  std::uint64_t drains() const { return drains_; }
  // Checks the pipeline's invariants (queue counts equal their contents, no thread over its share when it took an
  // entry, program order in the ROB, every fetched instruction in exactly one place); throws smtlab::Error naming the
  // broken one. Costs a walk over the window: enabled per machine for tests and checking runs.
  void checkInvariants(Cycle now) const;
  void setChecking(bool on) { checking_ = on; }
  // Describes what each running thread waits for (used by the watchdog message).
  std::string describeStuck(Cycle now) const;

 private:
  struct FuState {
    std::uint32_t count = 1;
    std::uint32_t latency = 1;
    std::uint32_t interval = 1;        // cycles a unit is busy per operation
    std::uint32_t threadInterval = 0;  // cycles between two operations of one thread (0 = no limit)
    std::uint32_t usedThisCycle = 0;
    std::vector<Cycle> busyUntil;      // per unit, when interval > 1
    std::array<Cycle, kMaxThreads> threadNext{};  // per thread, when threadInterval > 0
  };
  struct WaitEntry {
    Cycle readyAt;
    std::uint64_t age;
    std::uint32_t thread;
    std::uint64_t seq;
  };

  // Stages (fetch.cpp, rename.cpp, issue.cpp, retire.cpp).
  bool retireStage(Cycle now);
  bool issueStage(Cycle now);
  bool renameStage(Cycle now);
  // Instructions at the end of the front-end pipe enter the uop queue while their share has room.
  bool enterUopQueue(Cycle now);
  bool fetchStage(Cycle now);
  std::uint32_t fetchThread(std::uint32_t t, std::uint32_t budget, Cycle now);
  // Why the thread cannot rename its next uop now (Base if it can or has nothing to rename).
  CpiCause renameBlock(const ThreadContext& th, Cycle now) const;
  bool canRenameOne(const ThreadContext& th, Cycle now) const { return renameBlock(th, now) == CpiCause::Base &&
                                                                      hasRenamable(th, now); }
  bool hasRenamable(const ThreadContext& th, Cycle now) const;
  void renameOne(std::uint32_t t, Cycle now);
  void issueOne(Uop& uop, std::uint32_t t, Cycle now);
  void wakeDependents(ThreadContext& th, Uop& producer);
  void pushWaiting(const WaitEntry& e);
  // Removes every in-flight instruction of thread t with seq >= from; fetch restarts at `from`.
  void squashFrom(std::uint32_t t, std::uint64_t from);
  void activeSetChanged(Cycle now);
  // True while the core drains for a change of partitioning: for recombine_cycles, and until every thread holds no
  // more than its new share of the queues that retirement and issue empty (ROB, IQ, LQ, SQ).
  bool draining(Cycle now) const;
  void finishIfDone(std::uint32_t t, Cycle now);
  void account(Cycle now);
  CpiCause classify(const ThreadContext& th, Cycle now) const;
  Cycle computeNextWake(Cycle now) const;
  bool fuAvailable(FuKind fu, std::uint32_t thread, Cycle now) const;
  void fuTake(FuKind fu, std::uint32_t thread, Cycle now);

  const CoreId id_;
  const std::uint32_t threadCount_;
  const std::uint32_t fetchWidth_, fetchThreads_, renameWidth_, issueWidth_, retireWidth_;
  const std::uint32_t frontendDepth_, mispredictPenalty_, btbMissPenalty_, pauseCycles_, recombineCycles_;
  const bool breakOnTaken_, recombine_;
  const std::uint64_t watchdogCycles_;
  const std::uint32_t lineShift_;
  const std::uint32_t l1iLatency_;
  const std::uint32_t pipeCapacity_;  // per thread: fetch_width x frontend_depth
  const std::uint32_t loadAgu_;
  MemorySystem& memory_;
  std::unique_ptr<IFetchPolicy> fetchPolicy_;
  BranchPredictor predictor_;
  std::array<SharedCapacity, kQueueKinds> queues_;
  std::array<FuState, kFuKinds> fus_;
  std::vector<ThreadContext> threads_;

  std::vector<WaitEntry> waiting_;  // min-heap by readyAt (operands known ready at that cycle)
  std::vector<WaitEntry> ready_;    // ready now, oldest first, waiting for a unit or issue slot
  std::vector<std::pair<std::uint32_t, std::uint64_t>> pendingFlushes_;
  std::vector<CoreEvent> events_;
  std::uint64_t ageCounter_ = 0;
  std::uint32_t renameTurn_ = 0;
  std::uint32_t retireTurn_ = 0;
  std::uint32_t activeMask_ = 0;
  Cycle drainUntil_{0};
  mutable bool drainToShares_ = false;
  bool activeDirty_ = false;  // the set of running threads may have changed since the last tick  // a drain also waits until every thread is within its new share
  Cycle nextWake_{0};
  Cycle accountedUpTo_{0};
  Cycle lastRetire_{0};
  Cycle fuCycle_ = Cycle::never();
  std::uint64_t cyclesActive_ = 0;  // cycles with at least one running thread
  std::uint64_t renamed_ = 0;
  std::array<std::uint64_t, kFuKinds + 1> issuedByUnit_{};
  std::uint64_t drains_ = 0;
  bool lastAnyRunning_ = false;
  bool checking_ = false;
  std::vector<std::uint32_t> fetchOrder_;
  std::vector<FetchCandidate> candidates_;
};

}  // namespace smtlab
