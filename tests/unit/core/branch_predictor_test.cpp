// Branch predictor: gshare + BTB shared, history and return stack per thread.
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
  for (int i = 0; i < 100; ++i) wrong += bp.predictAndTrain(branch(0x400000, true, 0x400100), 0, th) != BranchOutcome::Correct;
  // Counters start weakly taken; only the first sightings (BTB cold, history warming) can be wrong.
  EXPECT_LE(wrong, 14);
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

}  // namespace
}  // namespace smtlab
