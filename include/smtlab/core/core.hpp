// One physical core: an out-of-order pipeline shared by its hardware threads, composed of stage units that own their
// state and const config: FrontEnd (fetch, branch prediction, uop queue), RenameAllocate, Scheduler (issue and
// functional units), LoadStoreUnit and RetireUnit. Core owns what they share (the per-thread contexts and the
// capacity objects of the queues), runs the cycle in reverse pipeline order (retire, issue, uop queue, rename, fetch)
// so each stage sees the previous cycle's output, attaches and detaches threads, charges the CPI stack, and tells
// the machine when it can next change anything, so that idle cycles are skipped.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/allocation_policy.hpp"
#include "smtlab/core/capacity.hpp"
#include "smtlab/core/core_event.hpp"
#include "smtlab/core/front_end.hpp"
#include "smtlab/core/load_store_unit.hpp"
#include "smtlab/core/rename_allocate.hpp"
#include "smtlab/core/retire_unit.hpp"
#include "smtlab/core/scheduler.hpp"
#include "smtlab/core/stage_ports.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/mem/memory_system.hpp"

namespace smtlab {

class Core {
 public:
  Core(CoreId id, const Config& config, MemorySystem& memory);
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

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

  // Functional warming (docs/sampling.md): thread t, which has no trace attached, executes `in` without timing: its
  // code line, branch and memory accesses update the caches, TLBs, predictor and prefetchers as a detailed run would.
  void warm(std::uint32_t t, Asid asid, const Instr& in, Cycle now) {
    frontEnd_.warm(t, asid, in, now);
    loadStore_.warm(asid, in, now);
  }

  // Zeroes the statistics of every thread and of the core (the pipeline state stays).
  void resetStats();
  // Every stage's state, the threads' contexts and the queues' shares (a snapshot: common/state_io.hpp). Taken with
  // no trace attached.
  void visitState(StateIo& io);
  std::vector<CoreEvent>& events() { return events_; }
  // Inline: the machine asks every cycle. Retired stores still draining into the L1D are work too, even
  // when no thread runs.
  bool hasWork() const {
    for (const ThreadContext& th : threads_) {
      if (th.state == ThreadState::Running) return true;
    }
    return loadStore_.hasBufferedStores();
  }
  CoreId id() const { return id_; }
  std::uint32_t threads() const { return threadCount_; }
  ThreadContext& thread(std::uint32_t t) { return threads_[t]; }
  const ThreadContext& thread(std::uint32_t t) const { return threads_[t]; }
  const SharedCapacity& queue(QueueKind q) const { return queues_[q]; }
  const RegisterFiles& registers() const { return queues_.registers; }  // physical register files
  std::uint64_t cyclesActive() const { return cyclesActive_; }
  // Instructions renamed and operations issued per unit class (FuKind order, then FuKind::None), for the energy model.
  std::uint64_t renamed() const { return rename_.renamed(); }
  const std::array<std::uint64_t, kFuKinds + 1>& issuedByUnit() const { return scheduler_.issuedByUnit(); }
  std::uint64_t drains() const { return drains_; }
  // Checks the pipeline's invariants (queue counts equal their contents, no thread over its share when it took an
  // entry, program order in the ROB, every fetched instruction in exactly one place); throws smtlab::Error naming the
  // broken one. Costs a walk over the window: enabled per machine for tests and checking runs.
  void checkInvariants(Cycle now) const;
  void setChecking(bool on) { checking_ = on; }
  // Describes what each running thread waits for (used by the watchdog message).
  std::string describeStuck(Cycle now) const;
  // Thread t waits for the memory system until a known later cycle: its oldest instruction is a load served beyond the
  // L1 that completes then (a DRAM latency near the watchdog's, queued behind other misses), or, with nothing renamed,
  // its fetch resumes then (an instruction-cache or ITLB miss). The watchdog counts such a wait as progress (it asks
  // only once past core.watchdog_cycles).
  bool waitsForCompletion(std::uint32_t t, Cycle now) const;

 private:
  // Past core.watchdog_cycles without a retirement (the core's, or thread `starved`'s while a sibling retires): a
  // DeadlockError, unless the wait is for the memory system (waitsForCompletion). Out of line and cold: Core::tick
  // sits at GCC's inlining limit, and its throws inline pushed FrontEnd::fetch out of it (+1 % host instructions).
  [[gnu::noinline, gnu::cold]] void watchdog(Cycle now, std::uint32_t starved);
  bool anyWaitsForCompletion(Cycle now) const;
  // Removes every in-flight instruction of thread t with seq >= from; fetch restarts at `from`.
  void squashFrom(std::uint32_t t, SeqNum from);
  void applyPendingFlushes();
  void activeSetChanged(Cycle now);
  // An adaptive allocation policy observes the threads and sets their shares (each tick, after retire and issue,
  // before the stages that take entries). Out of line: a static policy never calls it, and Core::tick stays within
  // GCC's inlining limit.
  [[gnu::noinline]] void observeAllocation(Cycle now);
  // True while the core drains for a change of partitioning: for recombine_cycles, and until every thread holds no
  // more than its new share of the queues that retirement and issue empty (ROB, IQ, LQ, SQ).
  bool draining(Cycle now) const;
  // A running thread with nothing in flight may have reached the end of its trace (the quick test is inline: it runs
  // for every thread every cycle).
  void finishIfDone(std::uint32_t t, Cycle now) {
    const ThreadContext& th = threads_[t];
    if (th.state == ThreadState::Running && th.robTail == th.cursor->retireSeq() && th.frontCount() == 0) {
      finishIfEnded(t, now);
    }
  }
  void finishIfEnded(std::uint32_t t, Cycle now);
  // The end of every tick, in one pass over the threads: finishIfDone, account (charge the cycles since the last
  // account, sample the causes and occupancies now) and the per-thread watchdog's bookkeeping. Sets anyRunning if a
  // thread runs; returns the first thread starved past the watchdog (threadCount_ if none).
  std::uint32_t finishAndAccount(Cycle now, bool& anyRunning);
  // Charges the cycles from accountedUpTo_ to now to the causes and occupancies sampled at the last account.
  void chargeSinceAccounted(Cycle now);
  // n cycles of thread th at its last sampled cause, fetch gating and queue occupancies.
  static void chargeThread(ThreadContext& th, std::uint64_t n) {
    th.stats.cycles += n;
    th.stats.cpi[static_cast<int>(th.lastCause)] += n;
    if (th.lastGated) th.stats.fetchGatedCycles += n;
    for (int q = 0; q < kQueueKinds; ++q) th.stats.occupancy[q].sum += std::uint64_t{th.lastOccupancy[q]} * n;
  }
  // draining: draining(now), asked once per cycle by the caller.
  CpiCause classify(std::uint32_t t, Cycle now, bool draining) const;
  Cycle computeNextWake(Cycle now) const;

  const CoreId id_;
  const std::uint32_t threadCount_;
  const std::uint32_t recombineCycles_;
  const bool recombine_;
  const std::uint64_t watchdogCycles_;

  // What the stage units share: per-thread contexts, queue capacities, events for the machine.
  std::vector<ThreadContext> threads_;
  CoreQueues queues_;
  std::vector<CoreEvent> events_;

  // Stage units, in pipeline order (each sees its neighbours through the interfaces of stage_ports.hpp).
  FrontEnd frontEnd_;
  RenameAllocate rename_;
  LoadStoreUnit loadStore_;
  Scheduler scheduler_;
  RetireUnit retire_;

  // core.allocation_policy: sets the threads' shares of the structures it governs (the queues above, the limited
  // register files) each tick if adaptive; the static policy's shares are SharedCapacity::setActive's.
  std::unique_ptr<IAllocationPolicy> allocation_;
  const bool adaptiveAllocation_;
  const bool mlpGate_;  // MLP-aware fetch: a gated thread still fetches up to its gateAfter
  AllocationStructures allocationStructures_{};
  std::array<AllocationSample, kMaxThreads> allocationSamples_{};

  std::uint32_t activeMask_ = 0;
  Cycle drainUntil_{0};
  mutable bool drainToShares_ = false;  // a drain also waits until every thread is within its new share
  bool activeDirty_ = false;            // the set of running threads may have changed since the last tick
  Cycle nextWake_{0};
  Cycle accountedUpTo_{0};
  Cycle lastRetire_{0};
  std::uint64_t cyclesActive_ = 0;  // cycles with at least one running thread
  std::uint64_t drains_ = 0;
  std::uint32_t accountedMask_ = 0;  // threads running at the last account: charged until the next one
  bool checking_ = false;
};

}  // namespace smtlab
