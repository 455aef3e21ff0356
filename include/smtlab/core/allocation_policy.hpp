// Resource allocation between the hardware threads of a core: the run-time policy that sets each thread's share of
// the partitionable structures (uop queue, ROB, issue queue, load and store queues, limited register files) through
// their SharedCapacity. `static` keeps each structure's own sharing mode (the shares SharedCapacity::setActive
// gives); `dcra` is Cazorla et al.'s dynamically controlled resource allocation (MICRO-37, 2004), which gives threads
// waiting for data-cache misses a larger share while threads that do not use a structure lend theirs.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"  // AllocationPolicy, declared there with the config it selects
#include "smtlab/core/capacity.hpp"
#include "smtlab/core/core_stats.hpp"  // kQueueKinds

namespace smtlab {

class StateIo;

// What a policy sees of one hardware thread at the start of a cycle.
struct AllocationSample {
  bool running = false;
  std::uint32_t pendingDataMisses = 0;  // its loads that missed the L1D and whose data has not returned
  Cycle lastPendingMissDone{0};         // when the last of those returns (0 if none)
  std::uint64_t retired = 0;            // instructions retired so far (for policies that measure progress)
};

// The structures a policy governs: the five queues and the limited register files, in that order (null: a register
// file without a limit). Each is one SharedCapacity, whose used() counts are the occupancies a policy reads.
inline constexpr int kAllocationStructures = kQueueKinds + 2;
using AllocationStructures = std::array<SharedCapacity*, kAllocationStructures>;

// The interface. If adaptive(), Core calls cycleStart() at the start of every tick, with the occupancy the previous
// tick left (unchanged through any cycles skipped since), and observe() after retire and issue have freed this
// cycle's entries and before the uop queue, rename and the register files take new ones, with one sample per thread
// (a load issued this cycle already counts as a pending miss); the policy sets shares through
// SharedCapacity::setShare. Event skipping: Core ticks only when something can change, so a policy whose shares
// change with time alone (an activity window running out, an epoch ending: hill climbing's hook) names that cycle in
// nextChange(), and the core wakes then.
class IAllocationPolicy {
 public:
  virtual ~IAllocationPolicy() = default;
  // false: the shares change only with the set of running threads (SharedCapacity::setActive); observe() is never
  // called, so the static policy costs nothing per cycle.
  virtual bool adaptive() const = 0;
  // Whether Core must keep each thread's pending L1D misses (ThreadContext::missDone) for the samples.
  virtual bool needsDataMisses() const { return false; }
  virtual void cycleStart(const AllocationStructures& /*structures*/, Cycle /*now*/) {}
  virtual void observe(std::span<const AllocationSample> threads, const AllocationStructures& structures,
                       Cycle now) = 0;
  // Asked at the end of a tick: the first cycle after `now` at which observe() would set other shares if nothing
  // else changed (Cycle::never() if none).
  virtual Cycle nextChange(const AllocationStructures& /*structures*/, Cycle /*now*/) const { return Cycle::never(); }
  // The policy's state (a snapshot: common/state_io.hpp).
  virtual void visitState(StateIo&) {}
};

// The `static` policy: every structure keeps the shares of its configured sharing mode.
class StaticAllocation final : public IAllocationPolicy {
 public:
  bool adaptive() const override { return false; }
  void observe(std::span<const AllocationSample>, const AllocationStructures&, Cycle) override {}
};

// DCRA (Cazorla, Ramirez, Valero, Fernandez, MICRO-37 2004). Each cycle a thread is slow if it has at least
// `slowMisses` loads missing the L1D in flight, or had within the last `slowHold` cycles, else fast. It is active for
// the uop queue, ROB and issue queue while it runs (every instruction needs them), and for the load and store queues
// and the register files if it held an entry of one in the last `activityWindow` cycles. Of a structure of R entries
// with T active threads, FA of them fast, a slow thread may hold R/T x (1 + C x FA) (C: the sharing factor, 1/T
// unless configured), a fast one the whole structure. A thread that is not active counts itself among the T when its
// own share is computed (it becomes active by taking an entry). Replicated structures are left alone (each thread
// owns its copy).
class DcraAllocation final : public IAllocationPolicy {
 public:
  struct Params {
    std::uint32_t activityWindow = 256;
    std::uint32_t slowMisses = 1;
    std::uint32_t slowHold = 0;  // cycles a thread stays slow after the misses that made it slow have returned
    double sharingFactor = 0.0;  // 0: 1 / T, the active threads of the structure
  };
  DcraAllocation(Params params, std::uint32_t threads);
  bool adaptive() const override { return true; }
  bool needsDataMisses() const override { return true; }
  void cycleStart(const AllocationStructures& structures, Cycle now) override;
  void observe(std::span<const AllocationSample> threads, const AllocationStructures& structures,
               Cycle now) override;
  Cycle nextChange(const AllocationStructures& structures, Cycle now) const override;
  void visitState(StateIo& io) override;

  // The share of one slow thread (a pure function of the formula, for tests and docs): R entries, T active threads
  // counting it, FA fast active threads.
  static std::uint32_t slowShare(std::uint32_t entries, std::uint32_t active, std::uint32_t fastActive,
                                 double sharingFactor);

 private:
  const Params params_;
  const std::uint32_t threads_;
  // The last cycle each thread held an entry of each structure, once it has held one (`held_`). cycleStart at `now`
  // sees the occupancy the previous tick left, unchanged through any cycles skipped since: held through now - 1;
  // observe sees this cycle's.
  std::array<std::array<Cycle, kMaxThreads>, kAllocationStructures> lastHeld_{};
  std::array<std::array<bool, kMaxThreads>, kAllocationStructures> held_{};
  std::array<bool, kMaxThreads> running_{};  // at the last observe(), for nextChange()
  std::array<Cycle, kMaxThreads> slowUntil_{};  // slow (by slowHold) before this cycle
  // What each structure's shares were last computed from (running, slow and active masks, a bit per thread each;
  // ~0: never)
  // and the limits set then: observe() recomputes only when either changed.
  std::array<std::uint32_t, kAllocationStructures> shareKey_ = filledKeys();
  std::array<std::array<std::uint32_t, kMaxThreads>, kAllocationStructures> setLimit_{};
  // The structures DCRA governs (present and not replicated), found at the first call: the core's list never changes.
  struct Governed {
    std::uint8_t structure;
    bool everyInstruction;  // every instruction takes an entry (uop queue, ROB, IQ): active = running
  };
  std::array<Governed, kAllocationStructures> governed_{};
  std::uint32_t governedCount_ = 0;
  bool governedKnown_ = false;
  void findGoverned(const AllocationStructures& structures);
  static constexpr std::array<std::uint32_t, kAllocationStructures> filledKeys() {
    std::array<std::uint32_t, kAllocationStructures> a{};
    for (auto& k : a) k = ~0u;
    return a;
  }
};

// Learning-based hill climbing (Choi and Yeung, ISCA 2006): one partition of every governed structure, a share per
// thread, learned at run time by following the measured performance. A round tries one partition per running thread,
// each for one epoch of `epoch` cycles: trial j gives thread j `step` of every structure more, taken evenly from the
// others (none going below `minShare`); the round then moves the base partition to the trial whose epoch scored best
// on `metric` (the threads' IPCs over the epoch). A round whose best score is shared by two trials keeps its base,
// so a tie never favours a thread by its number. Shares are fixed-point fractions of kShareUnits; a thread's limit of
// a structure of R entries is share x R / kShareUnits (at least 1), and what it is given is guaranteed to it (the
// limits never add up to more than R). A change of the running threads starts learning again from an even split.
class HillClimbing final : public IAllocationPolicy {
 public:
  static constexpr std::uint32_t kShareUnits = 1u << 16;
  struct Params {
    std::uint32_t epoch = 65536;
    double step = 0.0625;
    double minShare = 0.0625;
    ClimbMetric metric = ClimbMetric::Throughput;
  };
  HillClimbing(Params params, std::uint32_t threads);
  bool adaptive() const override { return true; }
  void observe(std::span<const AllocationSample> threads, const AllocationStructures& structures,
               Cycle now) override;
  Cycle nextChange(const AllocationStructures&, Cycle) const override { return epochEnd_; }
  void visitState(StateIo& io) override;
  // The base partition learned so far, per thread in kShareUnits (0 for a thread that does not run).
  const std::array<std::uint32_t, kMaxThreads>& baseShares() const { return base_; }
  std::uint64_t rounds() const { return rounds_; }

 private:
  void restart(std::span<const AllocationSample> threads, Cycle now);
  void startEpoch(std::span<const AllocationSample> threads, Cycle now);
  std::array<std::uint32_t, kMaxThreads> trialShares(std::uint32_t favoured) const;
  double score(std::span<const AllocationSample> threads) const;
  void apply(const AllocationStructures& structures);

  const std::uint32_t epoch_;
  const std::uint32_t step_;      // kShareUnits
  const std::uint32_t minShare_;  // kShareUnits
  const ClimbMetric metric_;
  const std::uint32_t threads_;
  std::uint32_t runningMask_ = 0;
  std::uint32_t runningCount_ = 0;
  std::array<std::uint32_t, kMaxThreads> base_{};
  std::array<std::uint32_t, kMaxThreads> current_{};  // the partition of the epoch under way
  std::uint32_t trial_ = 0;                            // which running thread the epoch under way favours
  std::array<double, kMaxThreads> trialScore_{};
  std::array<std::uint64_t, kMaxThreads> retiredAtStart_{};
  Cycle epochEnd_ = Cycle::never();
  std::uint64_t rounds_ = 0;
  bool started_ = false;
  // The limits last set per structure and thread: observe() sets them again if something else (a change of the
  // running threads: SharedCapacity::setActive) replaced them.
  std::array<std::array<std::uint32_t, kMaxThreads>, kAllocationStructures> setLimit_{};
};

// One row of the policy table: the config name, what the policy does (docs, `smtlab config show`), its factory.
struct AllocationPolicyInfo {
  AllocationPolicy value;
  std::string_view name;
  std::string_view doc;
  std::unique_ptr<IAllocationPolicy> (*make)(const CoreConfig&);
};

// THE list of allocation policies, in enum order (rows in allocation_policy.cpp). The config's parser, its docs and
// makeAllocationPolicy read it; a new policy is one enum value and one row.
std::span<const AllocationPolicyInfo> allocationPolicyTable();
std::unique_ptr<IAllocationPolicy> makeAllocationPolicy(const CoreConfig& core);

}  // namespace smtlab
