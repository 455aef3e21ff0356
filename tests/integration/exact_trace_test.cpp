// Hand-written text traces (tests/data/*.txt) on a scalar machine, with the cycle of the last retirement derived on
// paper from the timing rules: fetch at t, rename at t + frontend_depth, issue one cycle later at the earliest,
// complete at issue + latency, retire in the completion cycle. The first fetch of the trace's only code line misses
// the ITLB and every cache: it is ready at itlb.miss_latency + llc.latency + dram.latency = 30 + 40 + 200 = 270.
#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

constexpr std::uint64_t kFirstFetch = 30 + 40 + 200;  // cold ITLB + L1I/L2/LLC miss to DRAM
constexpr std::uint64_t kDepth = 3;                   // widthOneConfig().core.frontend_depth

std::vector<Instr> prefix(std::vector<Instr> all, std::size_t n) {
  all.resize(n);
  return all;
}

TEST(ExactTrace, FirstFetchPaysTheColdInstructionPath) {
  // One int: fetched at 270, renamed at 273, issued at 274, done and retired at 275.
  const auto trace = readTextFile("five_ints_dep_pair.txt");
  EXPECT_EQ(endCycleAlone(widthOneConfig(), prefix(trace, 1)), kFirstFetch + kDepth + 2);
}

TEST(ExactTrace, FiveIndependentIntsThenADependentImulPair) {
  const Config c = widthOneConfig();  // imul latency 3
  const auto trace = readTextFile("five_ints_dep_pair.txt");
  ASSERT_EQ(trace.size(), 7u);
  // Int i (0..4) is fetched at 270 + i and retires at 270 + i + 3 + 2: the fifth at 279.
  EXPECT_EQ(endCycleAlone(c, prefix(trace, 5)), 279u);
  // The first imul: fetched 275, renamed 278, issued 279, done 282.
  EXPECT_EQ(endCycleAlone(c, prefix(trace, 6)), 282u);
  // The second imul is renamed at 279 (fetched 276), waits for r10 until 282, completes at 285.
  EXPECT_EQ(endCycleAlone(c, trace), 285u);
}

TEST(ExactTrace, ImulLatencyIsAParameter) {
  Config c = widthOneConfig();
  c.core.fu.int_mul.latency = 7;
  // First imul issues at 279 and completes at 286; the dependent one issues at 286 and completes at 293.
  EXPECT_EQ(endCycleAlone(c, readTextFile("five_ints_dep_pair.txt")), 279u + 7 + 7);
}

TEST(ExactTrace, ColdLoadThenDependentHitToTheSameLine) {
  const Config c = widthOneConfig();  // load AGU 1, l1d 4, dtlb miss 30, llc 40, dram 200
  const auto trace = readTextFile("load_miss_then_hit.txt");
  ASSERT_EQ(trace.size(), 3u);
  // Load 0: fetched 270, renamed 273, issued 274, reaches the DTLB at 275 (AGU 1), misses it (+30): the caches see it
  // at 305 and it misses every level: data at 305 + 40 + 200 = 545.
  EXPECT_EQ(endCycleAlone(c, prefix(trace, 1)), 545u);
  // Load 1 (same line, needs r1) issues at 545, reaches the L1D at 546 and hits: 550. The int uses it: 551.
  EXPECT_EQ(endCycleAlone(c, trace), 551u);
}

TEST(ExactTrace, MispredictedBranchStopsFetchUntilResolvedPlusPenalty) {
  Config c = widthOneConfig();
  c.core.branch.mispredict_penalty = 7;
  // The cold PHT says weakly taken; the branch is not taken: a mispredict. It is fetched at 271, renamed 274, issued
  // 275, resolved 276; fetch resumes at 276 + 7 = 283. The two ints after it are fetched at 283 and 284 and retire
  // at 283 + 5 and 284 + 5.
  EXPECT_EQ(endCycleAlone(c, readTextFile("mispredict.txt")), 289u);
  c.core.branch.mispredict_penalty = 20;
  EXPECT_EQ(endCycleAlone(c, readTextFile("mispredict.txt")), 289u + 13);
}

TEST(ExactTrace, TakenBranchMissingTheBtbCostsTheRedirectBubble) {
  Config c = widthOneConfig();
  c.core.branch.btb_miss_penalty = 3;
  // Predicted taken (weakly taken counter) and taken, but the BTB is cold: fetch resumes at 271 + 3 = 274; the ints
  // after it retire at 274 + 5 and 275 + 5.
  EXPECT_EQ(endCycleAlone(c, readTextFile("btb_miss.txt")), 280u);
}

TEST(ExactTrace, UnpipelinedDividerTakesOneDivideAtATime) {
  Config c = widthOneConfig();  // one divider, latency 10, unpipelined
  // Divide 0 issues at 274 and holds the unit to 284; the others issue at 284, 294, 304; the last completes at 314.
  EXPECT_EQ(endCycleAlone(c, readTextFile("four_idiv.txt")), 314u);
  // Pipelined, the four issue at 274..277 and the last completes at 287.
  c.core.fu.int_div.pipelined = true;
  EXPECT_EQ(endCycleAlone(c, readTextFile("four_idiv.txt")), 287u);
  // Two unpipelined dividers: pairs issue at 274/275 and 284/285; the last completes at 295.
  c.core.fu.int_div = {10, false};
  setUnitCount(c.core, UnitClass::IntDiv, 2);
  EXPECT_EQ(endCycleAlone(c, readTextFile("four_idiv.txt")), 295u);
}

TEST(ExactTrace, FrontendDepthIsAParameter) {
  Config c = widthOneConfig();
  c.core.frontend_depth = 9;
  // Same as the 5 ints with a 9-cycle front end: the fifth int retires at 270 + 4 + 9 + 2.
  EXPECT_EQ(endCycleAlone(c, prefix(readTextFile("five_ints_dep_pair.txt"), 5)), 285u);
}

TEST(ExactTrace, LoadOpPaysAguCacheAndAluLatency) {
  const Config c = widthOneConfig();
  // The load returns at 545 (as above); the load-op (fetched 271) issues at 545, reaches the L1D at 546, hits at 550
  // and adds the ALU's cycle: done at 551. It is 2 uops (load + op), and retire takes 1 uop per cycle:
  // its load uop retires at 551, its op uop at 552.
  EXPECT_EQ(endCycleAlone(c, readTextFile("load_op.txt")), 552u);
}

TEST(ExactTrace, MispredictedBranchWaitingForAMissResolvesWhenTheDataReturns) {
  Config c = widthOneConfig();
  c.core.branch.mispredict_penalty = 7;
  // The branch (fetched 271, mispredicted: not taken against a weakly-taken counter) needs r1, back at 545: it issues
  // at 545, resolves at 546; fetch resumes at 553 and the int retires at 553 + 5.
  EXPECT_EQ(endCycleAlone(c, readTextFile("mispredict_after_miss.txt")), 558u);
}

TEST(ExactTrace, ReturnStackPredictsTheReturn) {
  Config c = widthOneConfig();
  c.core.branch.btb_miss_penalty = 3;
  c.core.branch.mispredict_penalty = 7;
  // The call (fetched 270) misses the cold BTB: fetch resumes at 273. The int at the target is fetched at 273, the
  // return at 274 (predicted from the return stack: no bubble), the int after it at 275, retiring at 280.
  EXPECT_EQ(endCycleAlone(c, readTextFile("call_ret.txt")), 280u);
  // Without the call the return stack is empty: the return is a mispredict. Fetched at 270, renamed 273, issued 274,
  // resolved 275; fetch resumes at 282 and the last int retires at 287.
  auto trace = readTextFile("call_ret.txt");
  EXPECT_EQ(endCycleAlone(c, {trace[2], trace[3]}), 287u);
}

TEST(ExactTrace, PauseHoldsItsThreadsFetch) {
  Config c = widthOneConfig();
  c.core.pause_cycles = 20;
  // The pause is fetched at 270 and retires at 275; the next fetch waits until 270 + 20 = 290: the int retires at
  // 290 + 3 + 2 = 295.
  EXPECT_EQ(endCycleAlone(c, readTextFile("pause.txt")), 295u);
  c.core.pause_cycles = 0;
  EXPECT_EQ(endCycleAlone(c, readTextFile("pause.txt")), 276u);
}

}  // namespace
}  // namespace smtlab::test
