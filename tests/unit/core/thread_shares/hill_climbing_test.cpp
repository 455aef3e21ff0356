// Hill climbing (core/allocation_policy.hpp; Choi and Yeung, ISCA 2006) on scripted threads whose speed is a known
// function of their share: each round's move and where the partition settles, worked out on paper.
#include <array>
#include <functional>

#include <gtest/gtest.h>

#include "smtlab/config/config.hpp"
#include "smtlab/core/allocation_policy.hpp"

namespace smtlab {
namespace {

constexpr std::uint32_t kUnits = HillClimbing::kShareUnits;
constexpr std::uint32_t kEpoch = 4800;  // IPC x kEpoch is a whole number for every IPC below

// A two-thread core whose one governed structure is a 48-entry shared issue queue; each thread's IPC over an epoch is
// ipcOf(thread, its IQ limit), so the policy's score is known for every partition it tries.
struct ClimbBench {
  SharedCapacity iq{"iq", QueueConfig{48, Sharing::Shared, 1.0}, 2, true};
  std::array<AllocationSample, 2> samples{{{true, 0, Cycle{0}, 0}, {true, 0, Cycle{0}, 0}}};
  AllocationStructures structures() {
    AllocationStructures s{};
    s[static_cast<int>(QueueKind::Iq)] = &iq;
    return s;
  }
  // Runs `epochs` epochs: each epoch the threads retire ipcOf(t, limit) x kEpoch instructions under the limits the
  // policy set at its start.
  void run(HillClimbing& hc, int epochs, const std::function<double(int, std::uint32_t)>& ipcOf) {
    hc.observe(samples, structures(), now);  // the first call starts learning
    for (int e = 0; e < epochs; ++e) {
      for (int t = 0; t < 2; ++t) {
        samples[t].retired += static_cast<std::uint64_t>(ipcOf(t, iq.limit(t)) * kEpoch);
      }
      now = hc.nextChange(structures(), now);
      hc.observe(samples, structures(), now);
    }
  }
  Cycle now{1000};
};

HillClimbing::Params params(ClimbMetric metric) { return {kEpoch, 0.0625, 0.0625, metric}; }

TEST(HillClimbing, EachRoundMovesTheBoundaryOneStepTowardTheTrialThatScoredBest) {
  // Thread 0 runs faster the more of the queue it has (IPC = limit / 16), thread 1 not at all (IPC 0.5). A round is
  // two epochs: trial 0 gives thread 0 9/16 (27 entries: IPC 1.6875, sum 2.1875), trial 1 gives it 7/16 (21:
  // 1.3125, sum 1.8125). Trial 0 wins, so after round r thread 0's base share is (8 + r)/16, until thread 1 is at
  // its floor of 1/16 (after seven rounds: 15/16, 45 entries); then trial 0 is the base itself and still wins, and the base stays.
  ClimbBench b;
  HillClimbing hc(params(ClimbMetric::Throughput), 2);
  auto ipc = [](int t, std::uint32_t limit) { return t == 0 ? limit / 16.0 : 0.5; };
  b.run(hc, 0, ipc);
  EXPECT_EQ(hc.baseShares()[0], kUnits / 2);
  EXPECT_EQ(b.iq.limit(0), 27u);  // the first trial under way: 9/16 of 48
  EXPECT_EQ(b.iq.limit(1), 21u);
  EXPECT_EQ(b.iq.guaranteed(0), 27u);  // a partition: what a thread is given is its own
  for (std::uint32_t r = 1; r <= 7; ++r) {
    b.run(hc, 2, ipc);
    EXPECT_EQ(hc.rounds(), r);
    EXPECT_EQ(hc.baseShares()[0], (8 + r) * kUnits / 16) << "round " << r;
    EXPECT_EQ(hc.baseShares()[1], (8 - r) * kUnits / 16) << "round " << r;
  }
  b.run(hc, 6, ipc);
  EXPECT_EQ(hc.baseShares()[0], 15 * kUnits / 16);
  EXPECT_EQ(hc.baseShares()[1], kUnits / 16);
  EXPECT_LE(b.iq.limit(0) + b.iq.limit(1), 48u);
}

TEST(HillClimbing, HmeanSettlesBesideItsOptimumWhereThroughputWalksToTheCeiling) {
  // Thread 0: IPC = limit / 16; thread 1: IPC = limit / 48 (both gain from entries). The harmonic mean
  // 2 / (16/l0 + 48/l1) with l0 + l1 = 48 is largest where l1 = sqrt(3) l0: l0 = 48 / (1 + sqrt 3) = 17.6 entries,
  // between thread 0's 5/16 (15) and 6/16 (18). From the even split 24 / 24: trial 0 (27 / 21) scores
  // 2 / (16/27 + 48/21) = 0.695, trial 1 (21 / 27) 0.788: the base moves to 7/16. From 7/16: 24 / 24 0.750 against
  // 18 / 30 0.804: to 6/16. From 6/16: 21 / 27 0.788 against 15 / 33 0.793: to 5/16. From 5/16: 18 / 30 0.804 against
  // 12 / 36 0.750: back to 6/16.
  // The trials sit one step either side of the base, so the base swings between the two shares around the optimum.
  ClimbBench b;
  HillClimbing hc(params(ClimbMetric::Hmean), 2);
  auto ipc = [](int t, std::uint32_t limit) { return t == 0 ? limit / 16.0 : limit / 48.0; };
  b.run(hc, 2, ipc);
  EXPECT_EQ(hc.baseShares()[0], 7 * kUnits / 16);
  b.run(hc, 2, ipc);
  EXPECT_EQ(hc.baseShares()[0], 6 * kUnits / 16);
  for (int r = 3; r <= 10; ++r) {
    b.run(hc, 2, ipc);
    EXPECT_EQ(hc.baseShares()[0], (r % 2 == 1 ? 5 : 6) * kUnits / 16) << "round " << r;
  }
  // Throughput on the same threads favours thread 0 for ever (3 entries more give it 3/16, cost thread 1 3/48):
  // after 7 rounds thread 1 is at its floor.
  ClimbBench c;
  HillClimbing tp(params(ClimbMetric::Throughput), 2);
  c.run(tp, 16, ipc);
  EXPECT_EQ(tp.baseShares()[0], 15 * kUnits / 16);
}

TEST(HillClimbing, ATieKeepsTheBaseSoNoThreadIsFavouredByItsNumber) {
  // Neither thread's speed depends on its share: every trial scores the same, and the base stays the even split.
  ClimbBench b;
  HillClimbing hc(params(ClimbMetric::Throughput), 2);
  b.run(hc, 8, [](int, std::uint32_t) { return 1.0; });
  EXPECT_EQ(hc.rounds(), 4u);
  EXPECT_EQ(hc.baseShares()[0], kUnits / 2);
  EXPECT_EQ(hc.baseShares()[1], kUnits / 2);
}

TEST(HillClimbing, AThreadAloneHasTheWholeStructureAndNothingToLearn) {
  ClimbBench b;
  HillClimbing hc(params(ClimbMetric::Throughput), 2);
  b.samples[1].running = false;
  b.run(hc, 0, [](int, std::uint32_t) { return 1.0; });
  EXPECT_EQ(b.iq.limit(0), 48u);
  EXPECT_EQ(hc.nextChange(b.structures(), b.now), Cycle::never());
  // The sibling starts running: learning starts again from an even split, the first trial under way.
  b.samples[1].running = true;
  hc.observe(b.samples, b.structures(), Cycle{2000});
  EXPECT_EQ(hc.baseShares()[0], kUnits / 2);
  EXPECT_EQ(b.iq.limit(0), 27u);
  EXPECT_EQ(hc.nextChange(b.structures(), Cycle{2000}), Cycle{2000 + kEpoch});
}

}  // namespace
}  // namespace smtlab
