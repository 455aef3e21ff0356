// Fetch policies order the eligible threads; each test sets counters whose order follows from the policy's rule.
#include <gtest/gtest.h>

#include <array>

#include "smtlab/core/fetch_policy.hpp"

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

TEST(FetchPolicy, BrCountPrefersFewerUnresolvedBranches) {
  auto p = makeFetchPolicy(FetchPolicy::BrCount);
  EXPECT_EQ(order(*p, {FetchCandidate{true, 0, 4}, FetchCandidate{true, 40, 1}})[0], 1u);
}

TEST(FetchPolicy, MissCountPrefersFewerDataMisses) {
  auto p = makeFetchPolicy(FetchPolicy::MissCount);
  EXPECT_TRUE(p->needsDataMisses());
  EXPECT_EQ(order(*p, {FetchCandidate{true, 0, 0, 3}, FetchCandidate{true, 40, 5, 0}})[0], 1u);
}

TEST(FetchPolicy, StallAndFlushGateOnMemoryMisses) {
  EXPECT_FALSE(makeFetchPolicy(FetchPolicy::ICount)->gatesOnMemoryMiss());
  EXPECT_TRUE(makeFetchPolicy(FetchPolicy::Stall)->gatesOnMemoryMiss());
  EXPECT_FALSE(makeFetchPolicy(FetchPolicy::Stall)->flushesOnMemoryMiss());
  EXPECT_TRUE(makeFetchPolicy(FetchPolicy::Flush)->flushesOnMemoryMiss());
}

}  // namespace
}  // namespace smtlab
