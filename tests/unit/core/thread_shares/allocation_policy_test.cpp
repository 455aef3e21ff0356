// The allocation policies (core/allocation_policy.hpp): DCRA's shares for scripted thread states, worked out on paper
// from its sharing model (Cazorla et al., MICRO-37 2004), and the static policy's "nothing changes".
#include <gtest/gtest.h>

#include "smtlab/config/config.hpp"
#include "smtlab/core/allocation_policy.hpp"

namespace smtlab {
namespace {

// A two-thread core's governed structures: a 48-entry shared issue queue and a 48-entry shared load queue (the
// netburst sizes), the rest absent.
struct DcraBench {
  SharedCapacity iq{"iq", QueueConfig{48, Sharing::Shared, 1.0}, 2, true};
  SharedCapacity lq{"lq", QueueConfig{48, Sharing::Shared, 1.0}, 2, true};
  AllocationStructures structures() {
    AllocationStructures s{};
    s[static_cast<int>(QueueKind::Iq)] = &iq;
    s[static_cast<int>(QueueKind::Lq)] = &lq;
    return s;
  }
};

std::array<AllocationSample, 2> dcraSamples(std::uint32_t missesOf0, std::uint32_t missesOf1, Cycle lastDone = Cycle{0}) {
  std::array<AllocationSample, 2> s{};
  s[0] = {true, missesOf0, missesOf0 != 0 ? lastDone : Cycle{0}, 0};
  s[1] = {true, missesOf1, missesOf1 != 0 ? lastDone : Cycle{0}, 0};
  return s;
}

TEST(DcraShare, SlowThreadsShareFollowsTheFormula) {
  // R/T x (1 + C x FA), C = 1/T: R (T + FA) / T^2.
  EXPECT_EQ(DcraAllocation::slowShare(48, 2, 1, 0.0), 36u);  // 24 x 1.5: the fast sibling lends half its 24
  EXPECT_EQ(DcraAllocation::slowShare(48, 2, 0, 0.0), 24u);  // two slow threads: an even split
  EXPECT_EQ(DcraAllocation::slowShare(48, 1, 0, 0.0), 48u);  // alone: the whole structure
  EXPECT_EQ(DcraAllocation::slowShare(48, 4, 3, 0.0), 21u);  // 12 x (1 + 3/4) = 21
  EXPECT_EQ(DcraAllocation::slowShare(126, 2, 1, 0.0), 94u);  // 63 x 1.5 = 94.5, rounded down
  EXPECT_EQ(DcraAllocation::slowShare(48, 2, 1, 0.25), 30u);  // configured C: 24 x 1.25
  EXPECT_EQ(DcraAllocation::slowShare(48, 2, 1, 1.0), 48u);   // C = 1: the fast thread lends all it has
}

TEST(DcraShare, SlowActiveThreadGetsItsShareTheFastOneIsNotLimited) {
  DcraBench b;
  DcraAllocation dcra({256, 1, 0, 0.0}, 2);
  b.iq.take(0, 10);
  b.iq.take(1, 5);
  b.lq.take(0, 10);
  b.lq.take(1, 2);
  const auto s = dcraSamples(1, 0, Cycle{400});
  dcra.observe(s, b.structures(), Cycle{100});
  EXPECT_EQ(b.iq.limit(0), 36u);
  EXPECT_EQ(b.iq.limit(1), 48u);
  EXPECT_EQ(b.iq.guaranteed(0), 1u);    // the fast thread may take all the rest
  EXPECT_EQ(b.iq.guaranteed(1), 12u);   // 48 - 36: what the slow one cannot take
  EXPECT_EQ(b.lq.limit(0), 36u);
  // Both slow: an even split, each guaranteed its half.
  dcra.observe(dcraSamples(1, 2, Cycle{400}), b.structures(), Cycle{101});
  EXPECT_EQ(b.iq.limit(0), 24u);
  EXPECT_EQ(b.iq.limit(1), 24u);
  EXPECT_EQ(b.iq.guaranteed(1), 24u);
  // Both fast: nobody is limited (DCRA limits only slow threads).
  dcra.observe(dcraSamples(0, 0), b.structures(), Cycle{500});
  EXPECT_EQ(b.iq.limit(0), 48u);
  EXPECT_EQ(b.iq.limit(1), 48u);
}

TEST(DcraShare, AThreadThatDoesNotUseAStructureLendsAllOfIt) {
  // The load queue: thread 1 has never held an entry, so it is inactive and thread 0 (slow) may take it all; the
  // issue queue is needed by every instruction, so thread 1 counts there while it runs.
  DcraBench b;
  DcraAllocation dcra({256, 1, 0, 0.0}, 2);
  b.lq.take(0, 40);
  dcra.observe(dcraSamples(1, 0, Cycle{10'000}), b.structures(), Cycle{100});
  EXPECT_EQ(b.lq.limit(0), 48u);
  EXPECT_EQ(b.iq.limit(0), 36u);
  // Thread 1 takes a load-queue entry: it is active, thread 0's share falls to 36 (it holds 40: no more until it has
  // freed 5).
  b.lq.take(1, 1);
  dcra.observe(dcraSamples(1, 0, Cycle{10'000}), b.structures(), Cycle{200});
  EXPECT_EQ(b.lq.limit(0), 36u);
  EXPECT_EQ(b.lq.check(0), CapacityVerdict::PartitionFull);
  // It frees it at cycle 201 (seen at the next tick's start): active through cycle 200 + 256, inactive from 457.
  b.lq.release(1, 1);
  EXPECT_EQ(dcra.nextChange(b.structures(), Cycle{201}), Cycle{457});
  dcra.cycleStart(b.structures(), Cycle{300});
  dcra.observe(dcraSamples(1, 0, Cycle{10'000}), b.structures(), Cycle{456});
  EXPECT_EQ(b.lq.limit(0), 36u);
  dcra.observe(dcraSamples(1, 0, Cycle{10'000}), b.structures(), Cycle{457});
  EXPECT_EQ(b.lq.limit(0), 48u);
}

TEST(DcraShare, SlowHoldKeepsAThreadSlowAfterItsMissReturns) {
  DcraBench b;
  DcraAllocation dcra({256, 1, 16, 0.0}, 2);
  b.iq.take(0, 10);
  b.iq.take(1, 1);
  dcra.observe(dcraSamples(1, 0, Cycle{150}), b.structures(), Cycle{100});  // the miss returns at 150
  EXPECT_EQ(b.iq.limit(0), 36u);
  dcra.observe(dcraSamples(0, 0), b.structures(), Cycle{160});  // back, but within 16 cycles
  EXPECT_EQ(b.iq.limit(0), 36u);
  EXPECT_EQ(dcra.nextChange(b.structures(), Cycle{160}), Cycle{166});
  dcra.observe(dcraSamples(0, 0), b.structures(), Cycle{166});
  EXPECT_EQ(b.iq.limit(0), 48u);
}

TEST(DcraShare, StaticPolicyLeavesTheSharingModesShares) {
  CoreConfig core;
  EXPECT_EQ(core.allocation_policy, AllocationPolicy::Static);  // the default
  const auto policy = makeAllocationPolicy(core);
  EXPECT_FALSE(policy->adaptive());  // never observes: the shares stay SharedCapacity::setActive's
  EXPECT_FALSE(policy->needsDataMisses());
  SharedCapacity iq("iq", QueueConfig{48, Sharing::Capped, 0.75}, 2, true);
  AllocationStructures s{};
  s[static_cast<int>(QueueKind::Iq)] = &iq;
  const std::array<AllocationSample, 2> samples{{{true, 3, Cycle{900}, 0}, {true, 0, Cycle{0}, 0}}};
  policy->observe(samples, s, Cycle{100});
  EXPECT_EQ(iq.limit(0), 36u);  // floor(48 x 0.75), as capped gives
  EXPECT_EQ(iq.limit(1), 36u);
  core.allocation_policy = AllocationPolicy::Dcra;
  EXPECT_TRUE(makeAllocationPolicy(core)->adaptive());
}

TEST(DcraShare, ReplicatedStructuresAreLeftAlone) {
  SharedCapacity ras("lq", QueueConfig{16, Sharing::Replicated, 1.0}, 2, true);
  AllocationStructures s{};
  s[static_cast<int>(QueueKind::Lq)] = &ras;
  DcraAllocation dcra({256, 1, 0, 0.0}, 2);
  ras.take(0, 4);
  ras.take(1, 4);
  dcra.observe(dcraSamples(1, 0, Cycle{900}), s, Cycle{100});
  EXPECT_EQ(ras.limit(0), 16u);
  EXPECT_EQ(ras.limit(1), 16u);
}

}  // namespace
}  // namespace smtlab
