// Fetch policies order the eligible threads; each test sets counters whose order follows from the policy's rule.
// core.fetch_threads: how many threads may fetch in one cycle. The first thread in the policy's order takes what it
// can of the fetch width; with fetch_threads = 2 the next one fetches into what is left in the same cycle.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "smtlab/config/config.hpp"
#include "smtlab/core/fetch_policy.hpp"
#include "smtlab/sim/machine.hpp"
#include "smtlab/sim/open_trace.hpp"
#include "smtlab/trace/cursor.hpp"

namespace smtlab {
namespace {

std::vector<std::uint32_t> order(IFetchPolicy& p, std::array<FetchCandidate, 2> c) {
  std::array<std::uint32_t, 2> out{};
  const std::uint32_t n = p.choose(c.data(), 2, Cycle{0}, out.data());
  return {out.begin(), out.begin() + n};
}

TEST(FetchPolicy, RoundRobinAlternatesAndSkipsIneligible) {
  auto p = makeFetchPolicy(FetchPolicy::RoundRobin);
  std::array<FetchCandidate, 2> both{FetchCandidate{true}, FetchCandidate{true}};
  const auto a = order(*p, both);
  const auto b = order(*p, both);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_NE(a[0], b[0]);
  std::array<FetchCandidate, 2> onlyOne{FetchCandidate{false}, FetchCandidate{true}};
  EXPECT_EQ(order(*p, onlyOne), std::vector<std::uint32_t>{1});
  EXPECT_EQ(order(*p, onlyOne), std::vector<std::uint32_t>{1});  // a stalled thread yields its slot every time
}

TEST(FetchPolicy, ICountPrefersFewerInstructionsInFrontEnd) {
  auto p = makeFetchPolicy(FetchPolicy::ICount);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(order(*p, {FetchCandidate{true, 30}, FetchCandidate{true, 5}})[0], 1u);
    EXPECT_EQ(order(*p, {FetchCandidate{true, 2}, FetchCandidate{true, 5}})[0], 0u);
  }
}

// Any number of candidates: the order the policy serves them in.
std::vector<std::uint32_t> orderOf(IFetchPolicy& p, std::vector<FetchCandidate> c) {
  std::vector<std::uint32_t> out(c.size());
  const std::uint32_t n = p.choose(c.data(), static_cast<std::uint32_t>(c.size()), Cycle{0}, out.data());
  out.resize(n);
  return out;
}

TEST(FetchPolicy, ICountBreaksTiesInTurnStartingAfterTheThreadServedFirstLastTime) {
  // Equal counts: the rotation every policy shares decides, so the first place alternates instead of going to the
  // lower id every time.
  auto p = makeFetchPolicy(FetchPolicy::ICount);
  const std::vector<FetchCandidate> tie{FetchCandidate{true, 7}, FetchCandidate{true, 7}};
  EXPECT_EQ(orderOf(*p, tie), (std::vector<std::uint32_t>{1, 0}));  // nothing served yet: the turn starts after 0
  EXPECT_EQ(orderOf(*p, tie), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(orderOf(*p, tie), (std::vector<std::uint32_t>{1, 0}));
  // Thread 1 wins on its count; the next tie then starts after it, with thread 0.
  EXPECT_EQ(orderOf(*p, {FetchCandidate{true, 9}, FetchCandidate{true, 3}})[0], 1u);
  EXPECT_EQ(orderOf(*p, tie)[0], 0u);
  // Three threads, two tied below the third: the tied pair rotates, the third stays last.
  auto q = makeFetchPolicy(FetchPolicy::ICount);
  const std::vector<FetchCandidate> three{FetchCandidate{true, 2}, FetchCandidate{true, 8}, FetchCandidate{true, 2}};
  EXPECT_EQ(orderOf(*q, three), (std::vector<std::uint32_t>{2, 0, 1}));  // turn order 1, 2, 0; sorted stably
  EXPECT_EQ(orderOf(*q, three), (std::vector<std::uint32_t>{0, 2, 1}));  // after 2: turn order 0, 1, 2
}

TEST(FetchPolicy, BrCountPrefersFewerUnresolvedBranches) {
  auto p = makeFetchPolicy(FetchPolicy::BrCount);
  EXPECT_EQ(order(*p, {FetchCandidate{true, 0, 4}, FetchCandidate{true, 40, 1}})[0], 1u);
  // Three threads: ordered by branches alone, whatever their front-end counts; an ineligible thread is left out.
  EXPECT_EQ(orderOf(*p, {FetchCandidate{true, 0, 5}, FetchCandidate{true, 50, 1}, FetchCandidate{true, 9, 3}}),
            (std::vector<std::uint32_t>{1, 2, 0}));
  EXPECT_EQ(orderOf(*p, {FetchCandidate{true, 0, 5}, FetchCandidate{false, 0, 0}, FetchCandidate{true, 9, 3}}),
            (std::vector<std::uint32_t>{2, 0}));
  // Equal branches with very different front-end counts are a tie (BRCOUNT does not look at ICOUNT's counter): the
  // first place alternates.
  const std::vector<FetchCandidate> tie{FetchCandidate{true, 0, 2}, FetchCandidate{true, 60, 2}};
  const std::uint32_t first = orderOf(*p, tie)[0];
  EXPECT_EQ(orderOf(*p, tie)[0], 1u - first);
}

TEST(FetchPolicy, MissCountPrefersFewerDataMisses) {
  auto p = makeFetchPolicy(FetchPolicy::MissCount);
  EXPECT_TRUE(p->needsDataMisses());
  EXPECT_EQ(order(*p, {FetchCandidate{true, 0, 0, 3}, FetchCandidate{true, 40, 5, 0}})[0], 1u);
  // Fewer misses first even against a much fuller front end; equal misses: fewer in the front end first (ICOUNT's
  // counter breaks the tie), whatever the branches.
  const std::vector<FetchCandidate> three{FetchCandidate{true, 1, 0, 2}, FetchCandidate{true, 90, 0, 1},
                                         FetchCandidate{true, 30, 9, 1}};
  EXPECT_EQ(orderOf(*p, three), (std::vector<std::uint32_t>{2, 1, 0}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(orderOf(*p, {FetchCandidate{true, 12, 0, 4}, FetchCandidate{true, 11, 7, 4}}),
              (std::vector<std::uint32_t>{1, 0}));
  }
  // Equal misses and front ends: a tie, served in turn.
  const std::vector<FetchCandidate> tie{FetchCandidate{true, 5, 0, 2}, FetchCandidate{true, 5, 0, 2}};
  const std::uint32_t first = orderOf(*p, tie)[0];
  EXPECT_EQ(orderOf(*p, tie)[0], 1u - first);
}

TEST(FetchPolicy, StallAndFlushGateOnMemoryMisses) {
  EXPECT_FALSE(makeFetchPolicy(FetchPolicy::ICount)->gatesOnMemoryMiss());
  EXPECT_TRUE(makeFetchPolicy(FetchPolicy::Stall)->gatesOnMemoryMiss());
  EXPECT_FALSE(makeFetchPolicy(FetchPolicy::Stall)->flushesOnMemoryMiss());
  EXPECT_TRUE(makeFetchPolicy(FetchPolicy::Flush)->flushesOnMemoryMiss());
}

// Two threads behind a 4-wide round-robin fetch and a back end that never limits them (8 wide, 8 ALUs, large
// queues). Thread 0 runs blocks of one int and one taken, learnt branch: a taken branch ends its fetch for the cycle,
// so it fetches 2 per cycle at most. Thread 1 runs independent ints.
struct FetchShareIpc {
  double shortBlocks, ints;
};
FetchShareIpc runFetchShare(std::uint32_t fetchThreads) {
  Config c;
  c.core.threads = 2;
  c.core.fetch_policy = FetchPolicy::RoundRobin;
  c.core.fetch_width = 4;
  c.core.fetch_threads = fetchThreads;
  c.core.fetch_break_on_taken = true;
  c.core.rename_width = c.core.issue_width = c.core.retire_width = 8;
  setUnitCount(c.core, UnitClass::IntAlu, 8);
  c.core.uop_queue.entries = 64;
  c.core.rob.entries = 256;
  c.core.iq = {96, Sharing::Shared, 1.0};
  Machine m(c);
  const std::string specs[] = {"gen:branchy,work=1,predictability=1.0,count=0", "gen:alu,count=0"};
  for (std::uint32_t t = 0; t < 2; ++t) {
    m.attach(LogicalCpu{t}, std::make_shared<TraceCursor>(openTrace(specs[t])), Asid{t + 1});
  }
  auto runTo = [&](std::uint64_t until) {
    while (m.now().value < until) m.run(Cycle{until});
  };
  runTo(20000);  // code lines, BTB and counters warm
  m.resetStats();
  runTo(60000);
  return {m.threadStats(LogicalCpu{0}).instructions / 40000.0, m.threadStats(LogicalCpu{1}).instructions / 40000.0};
}

TEST(FetchThreads, OneThreadPerCycleLeavesWhatAShortBlockDoesNotFetchUnused) {
  // The threads alternate cycles: thread 0 fetches 2 in its cycle, thread 1 fetches 4 in its: per 2 cycles 2 + 4.
  const FetchShareIpc one = runFetchShare(1);
  EXPECT_NEAR(one.shortBlocks, 1.0, 0.01);
  EXPECT_NEAR(one.ints, 2.0, 0.02);
}

TEST(FetchThreads, TwoThreadsPerCycleFillTheFetchWidth) {
  // Thread 0 first (every other cycle): it fetches 2 and thread 1 the other 2. Thread 1 first: it takes all 4. Per 2
  // cycles thread 0 fetches 2 and thread 1 fetches 6: the fetch width is used in full.
  const FetchShareIpc two = runFetchShare(2);
  EXPECT_NEAR(two.shortBlocks, 1.0, 0.01);
  EXPECT_NEAR(two.ints, 3.0, 0.03);
  EXPECT_NEAR(two.shortBlocks + two.ints, 4.0, 0.04);
}

}  // namespace
}  // namespace smtlab
