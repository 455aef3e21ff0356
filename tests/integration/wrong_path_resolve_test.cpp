// How long a wrong path lives: from the mispredicted branch's fetch to the cycle its result is known
// (the scheduler executes it), not on through the refill that follows (core.branch.mispredict_penalty: "cycles from
// resolving a mispredicted branch to fetching the right path"). In those refill cycles a real Intel core has already
// cleared the younger uops and fetches the right path; it allocates no more wrong-path uops. The statistics
// mispredict_resolve.* give the fetch-to-resolution time that every expectation here is derived from on paper.
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

// `producer` writes r1; then a conditional branch on `branchSrc`, not taken, with a target never fetched: the cold
// predictor says weakly taken, so it mispredicts, and its wrong path is synthetic (the thread's recent mix: integer
// work without operands, chosen in wrong_path.cpp). Then right-path work on r60 (never written: ready at once).
std::vector<Instr> trace(OpClass producer, int branchSrc) {
  std::vector<Instr> t;
  t.push_back(opAt(0x402000, producer, 1, -1));
  Instr br = opAt(0x402004, OpClass::Branch, -1, branchSrc);
  br.taken = false;
  br.target = 0x409000;
  t.push_back(br);
  for (int i = 0; i < 8; ++i) t.push_back(opAt(0x402008 + 4 * i, OpClass::Int, 3, 60));
  return t;
}

struct Resolve {
  std::uint64_t mispredicts, wrongPathFetched, endCycle;
  double fetchToResolve;
};

// widthOneConfig: one instruction per cycle at every stage, frontend_depth 3, int ALU latency 1; a 60-cycle divide.
Config config(bool wrongPath, std::uint32_t robEntries = 128, std::uint32_t uopQueueEntries = 32) {
  Config c = widthOneConfig();
  c.core.wrong_path = wrongPath;
  c.core.branch.mispredict_penalty = 10;
  c.core.fu.int_div = {60, false};
  c.core.rob.entries = robEntries;
  c.core.uop_queue.entries = uopQueueEntries;
  return c;
}

Resolve run(const Config& c, OpClass producer, int branchSrc) {
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor(trace(producer, branchSrc)), Asid{1});
  const Completion done = runToEnd(m);
  const auto stats = m.statsJson();
  const auto& s = cpuStats(stats, 0);
  const auto& r = s.at("mispredict_resolve").as_object();
  EXPECT_EQ(u64(r.at("count")), 1u);
  return {u64(s.at("mispredicts")), u64(s.at("wrong_path_fetched")), done.endCycle[0], num(r.at("mean_cycles"))};
}

TEST(WrongPathResolve, ABranchWithReadySourcesResolvesAfterThePipelineDepth) {
  // The producer (an int on r1) is fetched in cycle 0, the branch (on r60, ready) in cycle 1. The branch reaches the
  // uop queue after frontend_depth = 3 cycles and is renamed there (cycle 4), issues the next cycle (5) and has its
  // result one ALU latency later (6): 5 cycles from its fetch. Width 1: the wrong path is fetched in the cycles
  // between, 2..5, one uop each = 4 (it ran on through the 10 refill cycles before: 14).
  const Resolve on = run(config(true), OpClass::Int, 60);
  ASSERT_EQ(on.mispredicts, 1u);
  EXPECT_DOUBLE_EQ(on.fetchToResolve, 3 + 1 + 1);
  EXPECT_EQ(on.wrongPathFetched, 4u);
  // The right path is fetched at resolution + mispredict_penalty with or without the wrong path: same end cycle.
  const Resolve off = run(config(false), OpClass::Int, 60);
  EXPECT_DOUBLE_EQ(off.fetchToResolve, on.fetchToResolve);
  EXPECT_EQ(off.wrongPathFetched, 0u);
  EXPECT_EQ(off.endCycle, on.endCycle);
}

TEST(WrongPathResolve, ABranchOnASlowProducerKeepsItsWrongPathUntilItsResult) {
  // The producer is a 60-cycle divide (fetched 0, renamed 3, issued 4, result 64); the branch reads r1: fetched 1,
  // renamed 4, ready at 64, issued 64, result 65: 64 cycles from its fetch. The wrong path is fetched in cycles
  // 2..64 = 63 uops; the thread's 3-entry pipe, 32-entry uop queue and 128-entry ROB hold them all.
  const Resolve on = run(config(true), OpClass::IDiv, 1);
  ASSERT_EQ(on.mispredicts, 1u);
  EXPECT_DOUBLE_EQ(on.fetchToResolve, 64);
  EXPECT_EQ(on.wrongPathFetched, 63u);
  EXPECT_EQ(run(config(false), OpClass::IDiv, 1).endCycle, on.endCycle);
}

TEST(WrongPathResolve, TheWrongPathStopsWhenTheThreadsQueuesAreFull) {
  // As above with a 16-entry ROB and an 8-entry uop queue: the wrong path can fill what the divide and the branch
  // leave of the ROB (16 - 2 = 14: wrong-path uops never retire), then the uop queue (8), then the front-end pipe
  // (fetch_width x frontend_depth = 3); fetch stops there, well before the 64 cycles are over: 14 + 8 + 3 = 25.
  const Resolve on = run(config(true, 16, 8), OpClass::IDiv, 1);
  ASSERT_EQ(on.mispredicts, 1u);
  EXPECT_DOUBLE_EQ(on.fetchToResolve, 64);
  EXPECT_EQ(on.wrongPathFetched, 14u + 8u + 3u);
}

}  // namespace
}  // namespace smtlab::test
