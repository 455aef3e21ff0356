// Branch predictor: gshare + BTB shared, history and return stack per thread.
#include <cstdint>

#include <gtest/gtest.h>

#include "smtlab/core/branch_predictor.hpp"

namespace smtlab {
namespace {

Instr branch(Addr pc, bool taken, Addr target) {
  Instr in;
  in.pc = pc;
  in.op = OpClass::Branch;
  in.branch = BranchKind::Conditional;
  in.taken = taken;
  in.target = target;
  return in;
}

TEST(BranchPredictor, LearnsAnAlwaysTakenBranch) {
  BranchPredictor bp(BranchConfig{});
  ThreadBranchState th = bp.makeThreadState();
  int wrong = 0;
  for (int i = 0; i < 100; ++i) {
    wrong += bp.predictAndTrain(branch(0x400000, true, 0x400100), 0, th) != BranchOutcome::Correct;
  }
  // Counters start weakly taken, so every history the branch meets while its history fills with ones predicts taken;
  // only the first sighting is wrong, a miss in the cold BTB.
  EXPECT_EQ(wrong, 1);
}

TEST(BranchPredictor, LearnsANeverTakenBranchAfterOneMispredict) {
  // The history stays all zeros, so every sighting uses one counter: weakly taken at first (one mispredict), then
  // weakly not taken, right from then on. A predictor that always says taken is wrong 100 times.
  BranchPredictor bp(BranchConfig{});
  ThreadBranchState th = bp.makeThreadState();
  int wrong = 0;
  for (int i = 0; i < 100; ++i) {
    wrong += bp.predictAndTrain(branch(0x400000, false, 0x400100), 0, th) != BranchOutcome::Correct;
  }
  EXPECT_EQ(wrong, 1);
}

TEST(BranchPredictor, AlternatingPatternIsLearnedThroughHistory) {
  BranchPredictor bp(BranchConfig{});
  ThreadBranchState th = bp.makeThreadState();
  int wrongLate = 0;
  for (int i = 0; i < 400; ++i) {
    const bool wrong = bp.predictAndTrain(branch(0x400000, i % 2 == 0, 0x400100), 0, th) == BranchOutcome::Mispredict;
    if (i >= 200) wrongLate += wrong;
  }
  EXPECT_EQ(wrongLate, 0);
}

TEST(BranchPredictor, ReturnStackPredictsReturnsPerThread) {
  BranchPredictor bp(BranchConfig{});
  ThreadBranchState t0 = bp.makeThreadState();
  ThreadBranchState t1 = bp.makeThreadState();
  Instr call;
  call.pc = 0x1000;
  call.op = OpClass::Call;
  call.branch = BranchKind::DirectCall;
  call.taken = true;
  call.target = 0x5000;
  Instr ret;
  ret.pc = 0x5010;
  ret.op = OpClass::Return;
  ret.branch = BranchKind::Return;
  ret.taken = true;
  ret.target = 0x1005;
  bp.predictAndTrain(call, 0, t0);
  EXPECT_EQ(bp.predictAndTrain(ret, 0, t0), BranchOutcome::Correct);
  // Thread 1 never called: its own (replicated) return stack is empty.
  EXPECT_EQ(bp.predictAndTrain(ret, 0, t1), BranchOutcome::Mispredict);
}

TEST(BranchPredictor, IndirectJumpToANewTargetMispredicts) {
  BranchPredictor bp(BranchConfig{});
  ThreadBranchState th = bp.makeThreadState();
  Instr j;
  j.pc = 0x2000;
  j.op = OpClass::IndirectJump;
  j.branch = BranchKind::IndirectJump;
  j.taken = true;
  j.target = 0x3000;
  EXPECT_EQ(bp.predictAndTrain(j, 0, th), BranchOutcome::Mispredict);  // cold BTB
  EXPECT_EQ(bp.predictAndTrain(j, 0, th), BranchOutcome::Correct);
  j.target = 0x4000;
  EXPECT_EQ(bp.predictAndTrain(j, 0, th), BranchOutcome::Mispredict);
}

// core.branch.pht_thread_tagged (NetBurst's global history array, entries tagged with a logical processor id). With
// history_bits = 0 every sighting of one branch uses the same entry, whichever thread, so the sequences below follow
// from the rule alone: a sibling's entry gives the static prediction (backward taken, forward not taken) and becomes
// the thread's, its counter weakly towards the outcome.
BranchConfig taggedConfig(bool tagged, std::uint32_t ways, std::uint32_t entries) {
  BranchConfig c;
  c.history_bits = 0;
  c.pht_thread_tagged = tagged;
  c.pht_assoc = ways;
  c.pht_entries = entries;
  return c;
}

// One predictor and the states of logical processors 0 and 1.
struct TwoThreads {
  explicit TwoThreads(bool tagged, std::uint32_t ways = 1, std::uint32_t entries = 4096)
      : bp(taggedConfig(tagged, ways, entries)), t0(bp.makeThreadState(0)), t1(bp.makeThreadState(1)) {}
  BranchPredictor bp;
  ThreadBranchState t0, t1;
};

TEST(BranchPredictorTagged, AlternatingThreadsOnAForwardTakenBranchMispredictEverySighting) {
  TwoThreads p(true);
  auto& [bp, t0, t1] = p;
  const Instr fwd = branch(0x400000, true, 0x400100);
  // Thread 0 alone: the untrained entry is anyone's (weakly taken: right direction, cold BTB), then its own.
  EXPECT_EQ(bp.predictAndTrain(fwd, 0, t0), BranchOutcome::BtbMiss);
  EXPECT_FALSE(t0.lastTagMiss);
  EXPECT_EQ(bp.predictAndTrain(fwd, 0, t0), BranchOutcome::Correct);
  // From here each sighting finds the other thread's entry: static forward = not taken, wrong for a taken branch.
  for (int i = 0; i < 10; ++i) {
    ThreadBranchState& th = i % 2 == 0 ? t1 : t0;
    EXPECT_EQ(bp.predictAndTrain(fwd, 0, th), BranchOutcome::Mispredict) << "sighting " << i;
    EXPECT_TRUE(th.lastTagMiss);
  }
  // The entry is thread 0's again (weakly taken after its last sighting): its own next sighting predicts taken.
  EXPECT_EQ(bp.predictAndTrain(fwd, 0, t0), BranchOutcome::Correct);
  EXPECT_FALSE(t0.lastTagMiss);
}

TEST(BranchPredictorTagged, WithoutTagsTheSameAlternationSharesTheEntry) {
  TwoThreads p(false);
  auto& [bp, t0, t1] = p;
  const Instr fwd = branch(0x400000, true, 0x400100);
  EXPECT_EQ(bp.predictAndTrain(fwd, 0, t0), BranchOutcome::BtbMiss);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(bp.predictAndTrain(fwd, 0, i % 2 == 0 ? t1 : t0), BranchOutcome::Correct) << "sighting " << i;
  }
}

TEST(BranchPredictorTagged, ABackwardBranchIsPredictedTakenStaticallySoAlternationCostsNothing) {
  TwoThreads p(true);
  auto& [bp, t0, t1] = p;
  const Instr back = branch(0x400100, true, 0x400000);  // a loop's back edge
  EXPECT_EQ(bp.predictAndTrain(back, 0, t0), BranchOutcome::BtbMiss);  // cold BTB
  for (int i = 0; i < 10; ++i) {
    ThreadBranchState& th = i % 2 == 0 ? t1 : t0;
    // Static: taken, the right direction; the BTB (shared, same address space) has the target.
    EXPECT_EQ(bp.predictAndTrain(back, 0, th), BranchOutcome::Correct) << "sighting " << i;
    EXPECT_TRUE(th.lastTagMiss);
  }
}

TEST(BranchPredictorTagged, ATakenOverEntryStartsWeaklyTowardsItsOutcome) {
  TwoThreads p(true);
  auto& [bp, t0, t1] = p;
  for (int i = 0; i < 3; ++i) bp.predictAndTrain(branch(0x400000, true, 0x400100), 0, t0);  // strongly taken
  // Thread 1 sees it not taken: static forward = not taken, right; the entry becomes thread 1's, weakly not taken.
  EXPECT_EQ(bp.predictAndTrain(branch(0x400000, false, 0x400100), 0, t1), BranchOutcome::Correct);
  EXPECT_TRUE(t1.lastTagMiss);
  // Its own entry now (no tag miss): weakly not taken predicts not taken, so a taken sighting mispredicts, and a
  // strongly taken counter (thread 0's before) would not have.
  EXPECT_EQ(bp.predictAndTrain(branch(0x400000, true, 0x400100), 0, t1), BranchOutcome::Mispredict);
  EXPECT_FALSE(t1.lastTagMiss);
}

// core.branch.pht_assoc: with two ways the threads' entries for one index coexist in its set.
TEST(BranchPredictorTagged, WithTwoWaysAlternatingThreadsEachKeepTheirOwnEntry) {
  TwoThreads p(true, 2);
  auto& [bp, t0, t1] = p;
  const Instr fwd = branch(0x400000, true, 0x400100);
  EXPECT_EQ(bp.predictAndTrain(fwd, 0, t0), BranchOutcome::BtbMiss);  // untrained way: weakly taken; cold BTB
  // Thread 1 has no entry, but the set's second way is untrained (anyone's, weakly taken): right, and its own now.
  EXPECT_EQ(bp.predictAndTrain(fwd, 0, t1), BranchOutcome::Correct);
  EXPECT_FALSE(t1.lastTagMiss);
  for (int i = 0; i < 10; ++i) {
    ThreadBranchState& th = i % 2 == 0 ? t0 : t1;
    EXPECT_EQ(bp.predictAndTrain(fwd, 0, th), BranchOutcome::Correct) << "sighting " << i;
    EXPECT_FALSE(th.lastTagMiss);
  }
}

TEST(BranchPredictorTagged, AFullSetPredictsStaticallyAndReplacesItsLeastRecentlyUsedWay) {
  // 4 entries in 2 sets of 2 ways, history 0: index = (pc >> 2) & 3, set = index & 1, tag = index >> 1. The
  // branches at 0x400000 (index 0) and 0x400008 (index 2) both live in set 0. All are forward and taken, so a
  // static prediction (not taken) is a mispredict and a dynamic one (weakly taken or more) is right.
  TwoThreads p(true, 2, 4);
  auto& [bp, t0, t1] = p;
  const Instr a = branch(0x400000, true, 0x400100), b = branch(0x400008, true, 0x400100);
  bp.predictAndTrain(a, 0, t0);  // way 0: thread 0, index 0
  bp.predictAndTrain(b, 0, t0);  // way 1: thread 0, index 2 (a lone thread fills a set only with its own indices)
  EXPECT_FALSE(t0.lastTagMiss);
  EXPECT_EQ(bp.predictAndTrain(a, 0, t1), BranchOutcome::Mispredict);  // set full: static; replaces (t0, a), the LRU
  EXPECT_TRUE(t1.lastTagMiss);
  EXPECT_EQ(bp.predictAndTrain(b, 0, t0), BranchOutcome::Correct);  // (t0, b) survived
  EXPECT_FALSE(t0.lastTagMiss);
  EXPECT_EQ(bp.predictAndTrain(a, 0, t0), BranchOutcome::Mispredict);  // (t0, a) is gone; LRU is now (t1, a)
  EXPECT_TRUE(t0.lastTagMiss);
  EXPECT_EQ(bp.predictAndTrain(b, 0, t0), BranchOutcome::Correct);  // both ways thread 0's again
  EXPECT_EQ(bp.predictAndTrain(a, 0, t0), BranchOutcome::Correct);
  EXPECT_EQ(bp.predictAndTrain(a, 0, t1), BranchOutcome::Mispredict);  // thread 1's entry was the one replaced
}

// Invariant: an entry no sibling has trained is the thread's, and a lone thread's indices never overfill a set (an
// index's set and tag are its own bits), so tags change nothing for one thread, whatever the ways.
class BranchPredictorLoneThread : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(BranchPredictorLoneThread, PredictsExactlyAsWithoutTags) {
  BranchConfig tagged;
  tagged.pht_thread_tagged = true;
  tagged.pht_assoc = GetParam();
  BranchPredictor a(tagged), b(BranchConfig{});
  ThreadBranchState ta = a.makeThreadState(0), tb = b.makeThreadState(0);
  std::uint32_t x = 12345;
  int mispredicts = 0;
  for (int i = 0; i < 20000; ++i) {
    x = x * 1664525u + 1013904223u;
    const Addr pc = 0x400000 + 4 * ((x >> 8) % 512);
    const bool taken = ((x >> 20) % 3) != 0;
    const Instr in = branch(pc, taken, (x >> 28) % 2 == 0 ? pc + 0x40 : pc - 0x40);
    const BranchOutcome oa = a.predictAndTrain(in, 0, ta);
    ASSERT_EQ(oa, b.predictAndTrain(in, 0, tb)) << "branch " << i;
    ASSERT_FALSE(ta.lastTagMiss);
    mispredicts += oa == BranchOutcome::Mispredict;
  }
  EXPECT_GT(mispredicts, 1000);  // a random stream: the comparison covers wrong guesses too
}

INSTANTIATE_TEST_SUITE_P(Ways, BranchPredictorLoneThread, ::testing::Values(1u, 2u, 4u, 4096u));

}  // namespace
}  // namespace smtlab
