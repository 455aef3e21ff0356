// Schedule and execute: renamed instructions wait until their operands are ready, then their uops issue oldest
// first, up to issue_width uops per cycle, each through a free issue port that feeds its unit class (issue_ports.hpp).
// A load-op's op uop issues when the load's data arrives, a store's address and data uops independently; the
// instruction completes when its last uop does. A load goes to the load/store unit when its uop issues; a mispredicted
// branch tells the front end when it resolves. Consumers are woken through the per-thread dependency lists that
// rename built.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/issue_ports.hpp"
#include "smtlab/core/replay.hpp"
#include "smtlab/core/stage_ports.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/core/uop_decode.hpp"
#include "smtlab/core/wait_queue.hpp"

namespace smtlab {

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
  // NetBurst replay: counts the booked replay attempts of the cycles before `now` (with sim.replay_deferred they are
  // not wake-up points; the core calls this before anything reads or squashes what they touch).
  // Inline: asked at every tick, and almost always there is nothing to count.
  void catchUpReplays(Cycle now) {
    if (replaysCountedTo_ < now) countSkippedReplays(now);
  }

  std::uint32_t latency(FuKind fu) const { return latency_[static_cast<int>(fu)]; }
  const IssuePorts& ports() const { return ports_; }
  // Operations issued per unit class (FuKind order, then FuKind::None), for the energy model.
  const std::array<std::uint64_t, kFuKinds + 1>& issuedByUnit() const { return issuedByUnit_; }
  // Waiting and ready entries, port busy times and replay trains (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io);
  void resetStats() { issuedByUnit_.fill(0); }

 private:
  void pushWaiting(const WaitEntry& e) { waiting_.push(e); }
  // Issues what it can of the instruction's uops at `now`; returns true while the entry stays in the ready list.
  bool issueUops(Uop& u, const WaitEntry& e, Cycle now, std::uint32_t& issued);
  void finish(Uop& uop, std::uint32_t t);
  void releaseIq(Uop& u, std::uint32_t t);
  void parkLoad(const WaitEntry& e);
  // Loads parked behind a store of thread t are asked again in this cycle (its address or data became known).
  void wakeParked(std::uint32_t t);
  // Wakes the consumers of `producer`, which the scheduler expects at `scheduled` (its result, or the L1-hit time of
  // a missing load under replay).
  void wakeDependents(std::uint32_t t, Uop& producer, Cycle scheduled);
  // An instruction sent before its operands arrived (replay): its first uop took its slot and port and the
  // instruction comes back after the loop. false: no slot or port for that uop this cycle (it stays ready).
  bool replayFirstUop(Uop& u, const WaitEntry& e, Cycle now, std::uint32_t& issued);
  // NetBurst replay: the failing attempts still to come of one uop sent before its data (replay.hpp), one entry per
  // uop: every period cycles on `port` (kNoReplayPort: an issue slot only), up to `last`.
  struct ReplayTrain {
    Cycle last;
    std::uint64_t age;
    SeqNum seq;
    std::uint32_t thread;
    std::uint32_t port;
    UnitClass cls;
    std::uint8_t unit;     // issuedByUnit_ index
    std::uint32_t link;    // the next train of its phase, or of the free list
  };
  static constexpr std::uint32_t kNoReplayPort = ~0u;
  static constexpr std::uint32_t kNoTrain = ~0u;
  // A train's attempts all fall on cycles of one phase (cycle mod period), so the trains of a phase are due together:
  // they are kept in one list per phase, stepped once per period (no heap: the order within a cycle does not matter,
  // every attempt takes its slot and port unconditionally, replayDue), and cycles the core skipped are counted in
  // bulk, one step per train instead of one per attempt (countSkippedReplays).
  bool trainSquashed(const ReplayTrain& r) const;
  // Takes the attempts due at `now` (before the scheduler's own issue in that cycle), adding their issue slots to
  // `issued`.
  void replayDue(Cycle now, std::uint32_t& issued);
  // Counts the attempts of the cycles from replaysCountedTo_ up to now - 1, which the core skipped: nothing issued in
  // them and nothing changed, so each train is settled in one step.
  void countSkippedReplays(Cycle now);
  // Walks the trains of `phase`; step(train) says whether the train is done, and a done one is unlinked and freed
  // (the one list walk that replayDue and countSkippedReplays share).
  template <class Step>
  void stepTrains(std::uint32_t phase, Step step);
  // Squashed: gone; Parked: waits for a producer (parked or in the heap); Issued; Waits: ready, lacks slot or port.
  enum class WrongPathIssue : std::uint8_t { Squashed, Parked, Issued, Waits };
  WrongPathIssue issueWrongPath(const WaitEntry& e, bool slotFree, Cycle now);
  // The wrong-path uop of entry e was squashed (or has issued): the entry is stale.
  bool wrongPathGone(const WaitEntry& e) const;
  // Wrong-path register dependences: a wrong-path uop whose producer has not issued is parked until
  // that producer (a real instruction or a wrong-path uop) issues, without waking every cycle. Each producer has its
  // own list, linked through the consumers' ring slots (WrongPathUop::parkedNext), so an issue visits only its own
  // consumers: the head is in the producer's ring slot for a wrong-path producer, in realProducerParked_ for a real
  // one.
  struct ParkedOnReal {
    std::uint64_t head = kNoParked;  // ring index of the first wrong-path uop parked on the ROB slot's instruction
    std::uint64_t episode = 0;       // WrongPathState::episode when it was set: an older list is of a squashed path
  };
  void parkWrongPath(const WaitEntry& e, UopRef producer);
  // Moves the uops of the list at `head` into woken_ (they are asked again in this cycle) and empties it.
  void wakeWrongPathConsumers(std::uint32_t t, std::uint64_t& head);
  // The list of the wrong-path uops parked on real instruction `seq` of thread t, emptied first if it is of a
  // squashed wrong path.
  std::uint64_t& parkedOnReal(std::uint32_t t, SeqNum seq);

  const std::uint32_t threadCount_;
  const std::uint32_t issueWidth_;
  std::span<ThreadContext> threads_;
  CoreQueues& queues_;
  ILoadStorePort& loadStore_;
  IBranchResolutionPort& branches_;
  std::array<std::uint32_t, kFuKinds> latency_{};
  IssuePorts ports_;
  const ReplayLoop replay_;
  const bool deferReplays_;            // sim.replay_deferred
  // Replay trains (a pool with a free list, sized once for the window) and, per phase, the list of its trains and
  // the cycle of their next attempt (every train of a phase shares it).
  std::vector<ReplayTrain> trainPool_;
  std::uint32_t freeTrain_ = kNoTrain;
  std::vector<std::uint32_t> phaseHead_;
  std::vector<Cycle> phaseNext_;
  std::uint32_t trainCount_ = 0;
  Cycle replaysCountedTo_{0};  // every booked attempt of a cycle before this one has been counted
  WaitQueue waiting_;               // by readyAt (operands known ready at that cycle)
  std::vector<WaitEntry> ready_;    // ready now, oldest first, waiting for a unit or issue slot
  // Memory ordering: per thread, loads waiting for an older store's address (or a forwarding store's
  // data); they are asked again when a store uop of their thread issues (instead of every cycle, which would stop
  // event skipping).
  std::vector<std::vector<WaitEntry>> parked_;
  std::vector<WaitEntry> woken_, wokenNow_;  // parked loads whose thread issued a store uop in this cycle
  std::array<std::uint64_t, kFuKinds + 1> issuedByUnit_{};
  const std::uint32_t wrongPathLoadLatency_;  // a wrong-path load delivers at the L1-hit time (it has no address)
  std::vector<std::vector<ParkedOnReal>> realProducerParked_;  // per thread, by ROB slot
  std::uint64_t robSlotMask_ = 0;                              // the ROB ring's (ThreadContext::robMask)
};

}  // namespace smtlab
