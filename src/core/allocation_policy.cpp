#include "smtlab/core/allocation_policy.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "smtlab/common/state_io.hpp"

namespace smtlab {

namespace {
// Every instruction takes an entry of the uop queue, the ROB and the issue queue: a running thread needs them whether
// or not it holds one now (a thread shut out of a full queue holds none, and must still count among its sharers).
// Activity tells apart the threads that do not use a structure at all: loads, stores, FP registers.
bool everyInstructionUses(int structure) {
  return structure == static_cast<int>(QueueKind::UopQueue) || structure == static_cast<int>(QueueKind::Rob) ||
         structure == static_cast<int>(QueueKind::Iq);
}
}  // namespace

DcraAllocation::DcraAllocation(Params params, std::uint32_t threads) : params_(params), threads_(threads) {}

std::uint32_t DcraAllocation::slowShare(std::uint32_t entries, std::uint32_t active, std::uint32_t fastActive,
                                        double sharingFactor) {
  if (active == 0) return entries;
  std::uint64_t share = 0;
  if (sharingFactor <= 0.0) {
    // C = 1/T: R/T x (1 + FA/T) = R (T + FA) / T^2, in integers so that no rounding depends on the host.
    share = std::uint64_t{entries} * (active + fastActive) / (std::uint64_t{active} * active);
  } else {
    share = static_cast<std::uint64_t>(std::floor(static_cast<double>(entries) / active * (1.0 + sharingFactor * fastActive)));
  }
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(share, 1, entries));
}

void DcraAllocation::findGoverned(const AllocationStructures& structures) {
  governedCount_ = 0;
  for (int s = 0; s < kAllocationStructures; ++s) {
    const SharedCapacity* cap = structures[s];
    if (cap == nullptr || cap->sharing() == Sharing::Replicated) continue;
    governed_[governedCount_++] = {static_cast<std::uint8_t>(s), everyInstructionUses(s)};
  }
  governedKnown_ = true;
}

void DcraAllocation::cycleStart(const AllocationStructures& structures, Cycle now) {
  if (now.value == 0) return;
  if (!governedKnown_) findGoverned(structures);
  for (std::uint32_t g = 0; g < governedCount_; ++g) {
    if (governed_[g].everyInstruction) continue;
    const int s = governed_[g].structure;
    const SharedCapacity* cap = structures[s];
    for (std::uint32_t t = 0; t < threads_; ++t) {
      if (cap->used(t) != 0) {
        lastHeld_[s][t] = Cycle{now.value - 1};
        held_[s][t] = true;
      }
    }
  }
}

void DcraAllocation::observe(std::span<const AllocationSample> threads, const AllocationStructures& structures,
                             Cycle now) {
  if (!governedKnown_) findGoverned(structures);
  // One bit per thread: running, slow.
  std::uint32_t runningMask = 0, slowMask = 0;
  for (std::uint32_t t = 0; t < threads_; ++t) {
    running_[t] = threads[t].running;
    const bool missing = threads[t].pendingDataMisses >= params_.slowMisses;
    if (missing) {
      // Slow until slowHold cycles after the last of these misses returns.
      slowUntil_[t] = std::max(slowUntil_[t], threads[t].lastPendingMissDone + params_.slowHold);
    }
    runningMask |= (running_[t] ? 1u : 0u) << t;
    slowMask |= (missing || now < slowUntil_[t] ? 1u : 0u) << t;
  }
  for (std::uint32_t g = 0; g < governedCount_; ++g) {
    const int s = governed_[g].structure;
    SharedCapacity* cap = structures[s];
    // Active: a running thread that uses the structure (every instruction does for the uop queue, ROB and IQ) or
    // held an entry within the activity window.
    std::uint32_t activeMask = runningMask;
    if (!governed_[g].everyInstruction) {
      activeMask = 0;
      for (std::uint32_t t = 0; t < threads_; ++t) {
        if (!running_[t]) continue;
        bool active = true;
        if (cap->used(t) != 0) {
          lastHeld_[s][t] = now;
          held_[s][t] = true;
        } else {
          active = held_[s][t] && now - lastHeld_[s][t] <= params_.activityWindow;
        }
        activeMask |= (active ? 1u : 0u) << t;
      }
    }
    // The shares depend only on which threads run, are slow and are active: unchanged, and still in place (a change
    // of the running threads resets them to the static ones), nothing is recomputed.
    const std::uint32_t key = runningMask | slowMask << kMaxThreads | activeMask << (2 * kMaxThreads);
    if (key == shareKey_[s]) {
      bool inPlace = true;
      for (std::uint32_t t = 0; t < threads_; ++t) {
        inPlace = inPlace && (!running_[t] || cap->limit(t) == setLimit_[s][t]);
      }
      if (inPlace) continue;
    }
    shareKey_[s] = key;
    const auto activeCount = static_cast<std::uint32_t>(std::popcount(activeMask));
    const auto fastActive = static_cast<std::uint32_t>(std::popcount(activeMask & ~slowMask));
    const std::uint32_t entries = cap->total();
    std::array<std::uint32_t, kMaxThreads> limit{};
    std::uint64_t sum = 0;
    for (std::uint32_t t = 0; t < threads_; ++t) {
      if (!running_[t]) continue;
      const bool slow = (slowMask >> t) & 1u, active = (activeMask >> t) & 1u;
      // A thread not active yet counts itself among the sharers of its own share: it becomes active by taking one.
      limit[t] = slow ? slowShare(entries, activeCount + (active ? 0 : 1), fastActive, params_.sharingFactor) : entries;
      sum += limit[t];
    }
    for (std::uint32_t t = 0; t < threads_; ++t) {
      if (!running_[t]) continue;
      // What the others may hold at most leaves this much for t (at least one entry, so it can always go on).
      const std::uint64_t others = sum - limit[t];
      const std::uint32_t left = others >= entries ? 0 : static_cast<std::uint32_t>(entries - others);
      cap->setShare(t, limit[t], std::clamp<std::uint32_t>(left, 1, limit[t]));
      setLimit_[s][t] = limit[t];
    }
  }
}

Cycle DcraAllocation::nextChange(const AllocationStructures& structures, Cycle now) const {
  // A thread that holds nothing of a structure any more turns inactive activityWindow cycles after it last held an
  // entry; one holding entries now is seen holding them at the next tick.
  Cycle next = Cycle::never();
  for (std::uint32_t t = 0; t < threads_; ++t) {
    if (running_[t] && slowUntil_[t] > now && slowUntil_[t] < next) next = slowUntil_[t];  // turns fast
  }
  for (std::uint32_t g = 0; g < governedCount_; ++g) {  // none before the first call, when nothing was held yet
    if (governed_[g].everyInstruction) continue;
    const int s = governed_[g].structure;
    const SharedCapacity* cap = structures[s];
    for (std::uint32_t t = 0; t < threads_; ++t) {
      if (!running_[t] || cap->used(t) != 0 || !held_[s][t]) continue;
      const Cycle expires = lastHeld_[s][t] + params_.activityWindow + 1;
      if (expires > now && expires < next) next = expires;
    }
  }
  return next;
}

void DcraAllocation::visitState(StateIo& io) { io(lastHeld_, held_, running_, slowUntil_, shareKey_, setLimit_); }

namespace {
std::uint32_t toUnits(double fraction) {
  return static_cast<std::uint32_t>(std::lround(fraction * HillClimbing::kShareUnits));
}
}  // namespace

HillClimbing::HillClimbing(Params params, std::uint32_t threads)
    : epoch_(std::max<std::uint32_t>(1, params.epoch)),
      step_(toUnits(params.step)),
      minShare_(toUnits(params.minShare)),
      metric_(params.metric),
      threads_(threads) {}

void HillClimbing::observe(std::span<const AllocationSample> threads, const AllocationStructures& structures,
                           Cycle now) {
  std::uint32_t mask = 0;
  for (std::uint32_t t = 0; t < threads_; ++t) mask |= threads[t].running ? 1u << t : 0u;
  if (!started_ || mask != runningMask_) {
    runningMask_ = mask;
    restart(threads, now);
    apply(structures);
    return;
  }
  if (now >= epochEnd_) {
    trialScore_[trial_] = score(threads);
    if (++trial_ == runningCount_) {
      // The round is over: move to its best trial, unless two trials share the best score.
      std::uint32_t best = 0;
      bool tie = false;
      for (std::uint32_t k = 1; k < runningCount_; ++k) {
        if (trialScore_[k] > trialScore_[best]) {
          best = k;
          tie = false;
        } else if (trialScore_[k] == trialScore_[best]) {
          tie = true;
        }
      }
      if (!tie) base_ = trialShares(best);
      trial_ = 0;
      ++rounds_;
    }
    startEpoch(threads, now);
    apply(structures);
    return;
  }
  // Still in place? A change of the running threads' partitions (SharedCapacity::setActive) replaces the limits.
  for (int s = 0; s < kAllocationStructures; ++s) {
    const SharedCapacity* cap = structures[s];
    if (cap == nullptr || cap->sharing() == Sharing::Replicated) continue;
    for (std::uint32_t t = 0; t < threads_; ++t) {
      if ((runningMask_ >> t & 1u) != 0 && cap->limit(t) != setLimit_[s][t]) {
        apply(structures);
        return;
      }
    }
  }
}

void HillClimbing::restart(std::span<const AllocationSample> threads, Cycle now) {
  started_ = true;
  runningCount_ = static_cast<std::uint32_t>(std::popcount(runningMask_));
  base_.fill(0);
  // An even split; the units a division leaves go to no one (at most runningCount_ - 1 of 65536).
  for (std::uint32_t t = 0; t < threads_; ++t) {
    if ((runningMask_ >> t & 1u) != 0) base_[t] = kShareUnits / std::max(1u, runningCount_);
  }
  trial_ = 0;
  startEpoch(threads, now);
}

void HillClimbing::startEpoch(std::span<const AllocationSample> threads, Cycle now) {
  current_ = runningCount_ > 1 ? trialShares(trial_) : base_;
  for (std::uint32_t t = 0; t < threads_; ++t) retiredAtStart_[t] = threads[t].retired;
  epochEnd_ = runningCount_ > 1 ? now + epoch_ : Cycle::never();  // alone, there is nothing to learn
}

std::array<std::uint32_t, kMaxThreads> HillClimbing::trialShares(std::uint32_t favoured) const {
  // The favoured one is the `favoured`-th running thread.
  std::uint32_t j = 0;
  for (std::uint32_t t = 0, k = 0; t < threads_; ++t) {
    if ((runningMask_ >> t & 1u) == 0) continue;
    if (k++ == favoured) j = t;
  }
  std::array<std::uint32_t, kMaxThreads> shares = base_;
  for (std::uint32_t t = 0; t < threads_; ++t) {
    if (t == j || (runningMask_ >> t & 1u) == 0) continue;
    const std::uint32_t give = shares[t] > minShare_ ? std::min(step_, shares[t] - minShare_) : 0;
    shares[t] -= give;
    shares[j] += give;
  }
  return shares;
}

double HillClimbing::score(std::span<const AllocationSample> threads) const {
  double sum = 0;
  double inverse = 0;
  for (std::uint32_t t = 0; t < threads_; ++t) {
    if ((runningMask_ >> t & 1u) == 0) continue;
    // Statistics reset (the end of a warm-up) restart the counts: the epoch's instructions are those since.
    const std::uint64_t done =
        threads[t].retired >= retiredAtStart_[t] ? threads[t].retired - retiredAtStart_[t] : threads[t].retired;
    const double ipc = static_cast<double>(done) / epoch_;
    sum += ipc;
    inverse += ipc > 0 ? 1 / ipc : std::numeric_limits<double>::infinity();
  }
  if (metric_ == ClimbMetric::Throughput) return sum;
  return std::isinf(inverse) ? 0.0 : runningCount_ / inverse;
}

void HillClimbing::apply(const AllocationStructures& structures) {
  for (int s = 0; s < kAllocationStructures; ++s) {
    SharedCapacity* cap = structures[s];
    if (cap == nullptr || cap->sharing() == Sharing::Replicated) continue;
    const std::uint64_t entries = cap->total();
    for (std::uint32_t t = 0; t < threads_; ++t) {
      if ((runningMask_ >> t & 1u) == 0) continue;
      const auto limit = static_cast<std::uint32_t>(
          std::max<std::uint64_t>(1, entries * current_[t] / kShareUnits));
      cap->setShare(t, limit, limit);
      setLimit_[s][t] = limit;
    }
  }
}

void HillClimbing::visitState(StateIo& io) {
  io(runningMask_, runningCount_, base_, current_, trial_, trialScore_, retiredAtStart_, epochEnd_, rounds_, started_,
     setLimit_);
}

namespace {
std::unique_ptr<IAllocationPolicy> makeStatic(const CoreConfig&) { return std::make_unique<StaticAllocation>(); }
std::unique_ptr<IAllocationPolicy> makeDcra(const CoreConfig& core) {
  return std::make_unique<DcraAllocation>(
      DcraAllocation::Params{core.dcra.activity_window, core.dcra.slow_misses, core.dcra.slow_hold,
                             core.dcra.sharing_factor},
      core.threads);
}

std::unique_ptr<IAllocationPolicy> makeHillClimbing(const CoreConfig& core) {
  const HillClimbingConfig& h = core.hill_climbing;
  return std::make_unique<HillClimbing>(HillClimbing::Params{h.epoch, h.step, h.min_share, h.metric}, core.threads);
}

constexpr std::array<AllocationPolicyInfo, 3> kAllocationPolicies{{
    {AllocationPolicy::Static, "static",
     "each structure keeps its own sharing mode (replicated, partitioned, shared, capped)", makeStatic},
    {AllocationPolicy::Dcra, "dcra",
     "DCRA (Cazorla et al. 2004): threads with L1D misses in flight get a larger share of every structure that is "
     "not replicated, threads that have not used a structure lend theirs (core.dcra)",
     makeDcra},
    {AllocationPolicy::HillClimbing, "hill_climbing",
     "learning-based hill climbing (Choi and Yeung 2006): each round tries one partition per thread for an epoch and "
     "moves every structure's partition to the one that scored best (core.hill_climbing)",
     makeHillClimbing},
}};
static_assert(inEnumOrder(kAllocationPolicies), "kAllocationPolicies: one row per AllocationPolicy, in enum order");
}  // namespace

std::span<const AllocationPolicyInfo> allocationPolicyTable() { return kAllocationPolicies; }

std::unique_ptr<IAllocationPolicy> makeAllocationPolicy(const CoreConfig& core) {
  const auto* row = enumRow(kAllocationPolicies, core.allocation_policy);
  return row != nullptr ? row->make(core) : makeStatic(core);
}

}  // namespace smtlab
